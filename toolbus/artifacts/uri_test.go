package artifacts

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseURIAccepts(t *testing.T) {
	long := strings.Repeat("a", MaxNameBytes)
	tests := []struct {
		uri  string
		want Ref
	}{
		{"artifact://runs/t1/tool_calls/s1.context", Ref{Trace: "t1", Span: "s1", Kind: KindContext}},
		{"artifact://runs/t1/tool_calls/s1/result.json", Ref{Trace: "t1", Span: "s1", Kind: KindResult}},
		{"artifact://runs/t1/tool_calls/s1/spill-0.txt", Ref{Trace: "t1", Span: "s1", Kind: KindSpill}},
		{"artifact://runs/t1/tool_calls/s1/spill-2147483647.txt", Ref{Trace: "t1", Span: "s1", Kind: KindSpill, N: 2147483647}},
		{"artifact://runs/0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d/tool_calls/a.b_c-d.context",
			Ref{Trace: "0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d", Span: "a.b_c-d", Kind: KindContext}},
		{"artifact://runs/.../tool_calls/..x.context", Ref{Trace: "...", Span: "..x", Kind: KindContext}},
		{"artifact://runs/t/tool_calls/x.context.context", Ref{Trace: "t", Span: "x.context", Kind: KindContext}},
		{"artifact://runs/" + long + "/tool_calls/" + long + "/result.json", Ref{Trace: long, Span: long, Kind: KindResult}},
	}
	for _, tt := range tests {
		got, err := ParseURI(tt.uri)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", tt.uri, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseURI(%q) = %+v, want %+v", tt.uri, got, tt.want)
		}
		if got.URI() != tt.uri {
			t.Errorf("ParseURI(%q).URI() = %q", tt.uri, got.URI())
		}
	}
}

// escapingURIs must all be refused, by ParseURI and by Store.Read.
var escapingURIs = []string{
	"",
	"artifact://",
	"artifact://runs/../../etc/passwd",
	"artifact://runs/a/tool_calls/../../../x",
	"artifact://runs/a/tool_calls/../../../x.context",
	"artifact://runs/a/tool_calls/s/../../../../etc/passwd",
	"artifact://runs/./tool_calls/s.context",
	"artifact://runs/../tool_calls/s.context",
	"artifact://runs/a/tool_calls/...context", // span ".."
	"artifact://runs/a/tool_calls/..context",  // span "."
	"artifact://runs/a/tool_calls/.context",   // empty span
	"artifact://runs/%2e%2e/tool_calls/s.context",
	"artifact://runs/a/tool_calls/%2e%2e%2f%2e%2e%2fx.context",
	"artifact://runs/a/tool_calls/s%2fresult.json",
	"artifact://runs/a%2F..%2F..%2Fetc/tool_calls/s.context",
	"artifact:///etc/passwd",
	"artifact://runs//etc/passwd",
	"artifact://runs/a/tool_calls//etc/passwd",
	"artifact://runs/a/tool_calls/s/result.json/",
	"artifact://runs/a/tool_calls/s/result.json?x=1",
	"artifact://runs/a/tool_calls/s.context#frag",
	"artifact://runs/a/tool_calls/s/../s.context",
	"artifact://runs/a/tool_calls/s/other.json",
	"artifact://runs/a/tool_calls/s/t/result.json",
	"artifact://runs/a/tool_calls/s/spill-.txt",
	"artifact://runs/a/tool_calls/s/spill-01.txt",
	"artifact://runs/a/tool_calls/s/spill--1.txt",
	"artifact://runs/a/tool_calls/s/spill-+1.txt",
	"artifact://runs/a/tool_calls/s/spill-2147483648.txt",
	"artifact://runs/a/tool_calls/s/spill-99999999999.txt",
	"artifact://runs/a/tool_calls/s",
	"artifact://runs/a/tool_calls/s.txt",
	"artifact://runs/a/s.context",
	"artifact://runs/a",
	"artifact://other/a/tool_calls/s.context",
	"artifact://runs\\..\\..\\x/tool_calls/s.context",
	"artifact://runs/a\\b/tool_calls/s.context",
	"artifact://runs/a b/tool_calls/s.context",
	"artifact://runs/a\x00/tool_calls/s.context",
	"artifact://runs/é/tool_calls/s.context",
	"ARTIFACT://runs/a/tool_calls/s.context",
	"Artifact://runs/a/tool_calls/s.context",
	" artifact://runs/a/tool_calls/s.context",
	"artifact://runs/a/tool_calls/s.context ",
	"file:///etc/passwd",
	"/etc/passwd",
	"../../etc/passwd",
	"runs/a/tool_calls/s.context",
	"artifacts/runs/a/tool_calls/s.context",
	"http://runs/a/tool_calls/s.context",
	"artifact://runs/" + strings.Repeat("a", MaxNameBytes+1) + "/tool_calls/s.context",
	"artifact://runs/a/tool_calls/" + strings.Repeat("s", MaxNameBytes+1) + ".context",
}

func TestParseURIRefuses(t *testing.T) {
	for _, uri := range escapingURIs {
		ref, err := ParseURI(uri)
		var ue *URIError
		if !errors.As(err, &ue) {
			t.Errorf("ParseURI(%q) = %+v, %v; want a *URIError", uri, ref, err)
			continue
		}
		if strings.Contains(ue.Error(), "passwd") {
			t.Errorf("ParseURI(%q): the error %q repeats the uri", uri, ue.Error())
		}
	}
}

func TestValidName(t *testing.T) {
	for _, s := range []string{"a", "A-Z_0.9", "...", "..a", strings.Repeat("x", MaxNameBytes)} {
		if !ValidName(s) {
			t.Errorf("ValidName(%q) = false", s)
		}
	}
	for _, s := range []string{"", ".", "..", "a/b", `a\b`, "a b", "ü", "a\x00", "%2e", strings.Repeat("x", MaxNameBytes+1)} {
		if ValidName(s) {
			t.Errorf("ValidName(%q) = true", s)
		}
	}
}

func TestWindowsAliased(t *testing.T) {
	for _, s := range []string{"CON", "con.txt", "Nul", "COM1", "lpt9.x", "a.", "conin$"} {
		if !windowsAliased(s) {
			t.Errorf("windowsAliased(%q) = false", s)
		}
	}
	for _, s := range []string{"console", "COM", "COMX", "a.b", "LPT10"} {
		if windowsAliased(s) {
			t.Errorf("windowsAliased(%q) = true", s)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range escapingURIs {
		f.Add(s)
	}
	f.Add("artifact://runs/t1/tool_calls/s1.context")
	f.Add("artifact://runs/t1/tool_calls/s1/result.json")
	f.Add("artifact://runs/t1/tool_calls/s1/spill-12.txt")
	root := filepath.Join(f.TempDir(), "root")
	prefix := filepath.Join(root, "artifacts", "runs") + string(filepath.Separator)
	f.Fuzz(func(t *testing.T, uri string) {
		ref, err := ParseURI(uri)
		if err != nil {
			var ue *URIError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseURI(%q): error %T is not a *URIError", uri, err)
			}
			return
		}
		if ref.URI() != uri {
			t.Fatalf("ParseURI(%q).URI() = %q: not canonical", uri, ref.URI())
		}
		p := filepath.Join(root, filepath.FromSlash(ref.RelPath()))
		if !strings.HasPrefix(p, prefix) {
			t.Fatalf("ParseURI(%q) maps to %q, outside %q", uri, p, prefix)
		}
		if want := filepath.Join(prefix, ref.Trace, "tool_calls"); !strings.HasPrefix(p, want+string(filepath.Separator)) {
			t.Fatalf("ParseURI(%q) maps to %q, outside its trace folder %q", uri, p, want)
		}
		if !ValidName(ref.Trace) || !ValidName(ref.Span) {
			t.Fatalf("ParseURI(%q) accepted invalid names %+v", uri, ref)
		}
	})
}
