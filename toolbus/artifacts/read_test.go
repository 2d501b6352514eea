package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRead(t *testing.T) {
	s := newStore(t, Options{})
	// 40,000 bytes: "0123456789" repeated.
	const size = 40000
	content := bytes.Repeat([]byte("0123456789"), size/10)
	_, uri, err := s.WriteCall("t", "s", []byte("ctx"), content)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode      Mode
		max       int
		want      string
		offset    int64
		truncated bool
	}{
		{ModeGet, 0, string(content[:MaxReadBytes]), 0, true}, // default
		{"", -5, string(content[:MaxReadBytes]), 0, true},     // "" is get
		{ModeGet, 10, "0123456789", 0, true},                  // max_bytes
		{ModeHead, 3, "012", 0, true},                         // head
		{ModeTail, 4, "6789", size - 4, true},                 // tail
		{ModeTail, 0, string(content[size-MaxReadBytes:]), size - MaxReadBytes, true},
		{ModeGet, 1 << 30, string(content[:MaxReadBytes]), 0, true}, // capped at MaxReadBytes
		{ModeTail, 1 << 30, string(content[size-MaxReadBytes:]), size - MaxReadBytes, true},
	}
	for _, tt := range tests {
		data, info, err := s.Read(uri, tt.mode, tt.max)
		if err != nil {
			t.Errorf("Read(%q, %d): %v", tt.mode, tt.max, err)
			continue
		}
		if string(data) != tt.want {
			t.Errorf("Read(%q, %d) = %d bytes, want %d", tt.mode, tt.max, len(data), len(tt.want))
		}
		want := Info{URI: uri, Bytes: size, ModTime: info.ModTime, Offset: tt.offset, Truncated: tt.truncated}
		if info != want || info.ModTime.IsZero() {
			t.Errorf("Read(%q, %d) info = %+v, want %+v", tt.mode, tt.max, info, want)
		}
	}

	// The whole file, when it fits.
	small := content[:2000]
	_, smallURI, err := s.WriteCall("t", "small", []byte("ctx"), small)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{ModeGet, ModeHead, ModeTail} {
		data, info, err := s.Read(smallURI, m, 5000)
		if err != nil || !bytes.Equal(data, small) || info.Truncated || info.Offset != 0 {
			t.Errorf("Read(%q, 5000) = %d bytes, %+v, %v", m, len(data), info, err)
		}
	}
	data, _, err := s.Read(smallURI, ModeGet, 0)
	if err != nil || len(data) != 2000 {
		t.Errorf("default read of 2000 bytes = %d, %v", len(data), err)
	}

	if _, _, err := s.Read(uri, "all", 0); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("Read(mode all) = %v, want ErrInvalidMode", err)
	}
	for _, missing := range []string{
		"artifact://runs/t/tool_calls/nope.context",
		"artifact://runs/t/tool_calls/s/spill-0.txt",
		"artifact://runs/other/tool_calls/s/result.json",
		"artifact://runs/t/tool_calls/s.context.context",
	} {
		if _, _, err := s.Read(missing, ModeGet, 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%q) = %v, want ErrNotFound", missing, err)
		}
	}
}

// Cuts never split a UTF-8 sequence.
func TestReadKeepsRunesWhole(t *testing.T) {
	s := newStore(t, Options{})
	content := []byte(strings.Repeat("é", 10)) // 20 bytes, 2 per rune
	_, uri, err := s.WriteCall("t", "s", nil, content)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode   Mode
		max    int
		want   string
		offset int64
	}{
		{ModeHead, 5, "éé", 0},
		{ModeHead, 4, "éé", 0},
		{ModeTail, 5, "éé", 16},
		{ModeTail, 4, "éé", 16},
		{ModeTail, 1, "", 20},
		{ModeHead, 1, "", 0},
	} {
		data, info, err := s.Read(uri, tt.mode, tt.max)
		if err != nil || string(data) != tt.want || info.Offset != tt.offset || !info.Truncated {
			t.Errorf("Read(%q, %d) = %q, %+v, %v; want %q at %d", tt.mode, tt.max, data, info, err, tt.want, tt.offset)
		}
		if !utf8.Valid(data) {
			t.Errorf("Read(%q, %d) split a rune: %q", tt.mode, tt.max, data)
		}
	}
}

func TestReadRefusesEscapes(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s := newStore(t, Options{Root: root})
	if _, _, err := s.WriteCall("t", "s", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A tree outside the root that looks like a trace.
	outCalls := filepath.Join(outside, "trace", "tool_calls")
	if err := os.MkdirAll(filepath.Join(outCalls, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"s.context", "s/result.json"} {
		if err := os.WriteFile(filepath.Join(outCalls, filepath.FromSlash(f)), []byte("TOP SECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(root, "artifacts", "runs", "t", "tool_calls")
	for link, target := range map[string]string{
		filepath.Join(calls, "evil.context"):               secret,
		filepath.Join(calls, "rel.context"):                "../../../../../" + filepath.Base(outside) + "/secret",
		filepath.Join(calls, "s", "spill-9.txt"):           secret,
		filepath.Join(calls, "dangling.context"):           filepath.Join(outside, "nope"),
		filepath.Join(root, "artifacts", "runs", "linked"): filepath.Join(outside, "trace"),
		filepath.Join(calls, "evilspan"):                   filepath.Join(outCalls, "s"),
		// A link that stays inside the root is refused too: the store never
		// makes links.
		filepath.Join(calls, "inside.context"): filepath.Join(calls, "s.context"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	uris := append(slices.Clone(escapingURIs),
		"artifact://runs/t/tool_calls/evil.context",
		"artifact://runs/t/tool_calls/rel.context",
		"artifact://runs/t/tool_calls/s/spill-9.txt",
		"artifact://runs/t/tool_calls/dangling.context",
		"artifact://runs/linked/tool_calls/s.context",
		"artifact://runs/linked/tool_calls/s/result.json",
		"artifact://runs/t/tool_calls/evilspan/result.json",
		"artifact://runs/t/tool_calls/inside.context",
		"artifact://runs/t/tool_calls/s", // a folder, and not a valid URI
	)
	for _, uri := range uris {
		for _, m := range []Mode{ModeGet, ModeTail} {
			data, _, err := s.Read(uri, m, 0)
			var ue *URIError
			if !errors.As(err, &ue) {
				t.Errorf("Read(%q, %s) = %q, %v; want a *URIError", uri, m, data, err)
			}
			if bytes.Contains(data, []byte("SECRET")) {
				t.Errorf("Read(%q) leaked the outside file", uri)
			}
		}
	}
	if _, _, err := s.List("linked"); !isURIError(err) {
		t.Errorf("List(symlinked trace) = %v, want a *URIError", err)
	}
	// A folder where a file should be.
	if err := os.Mkdir(filepath.Join(calls, "dir.context"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read("artifact://runs/t/tool_calls/dir.context", ModeGet, 0); !isURIError(err) {
		t.Errorf("Read(folder) = %v, want a *URIError", err)
	}
	// The real artifacts still read.
	if data, _, err := s.Read("artifact://runs/t/tool_calls/s.context", ModeGet, 0); err != nil || string(data) != "ctx" {
		t.Errorf("Read(s.context) = %q, %v", data, err)
	}
}

// swapFS opens another file than the one checked, as a file swapped for a
// link between the check and the open would.
type swapFS struct {
	OSFS
	decoy string
}

func (f swapFS) Open(string) (ReadFile, error) { return f.OSFS.Open(f.decoy) }

func TestReadRefusesSwappedFile(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	decoy := filepath.Join(outside, "secret")
	if err := os.WriteFile(decoy, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Options{Root: root, FS: swapFS{decoy: decoy}})
	if _, _, err := s.WriteCall("t", "s", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	data, _, err := s.Read("artifact://runs/t/tool_calls/s.context", ModeGet, 0)
	if !isURIError(err) || len(data) != 0 {
		t.Errorf("Read of a swapped file = %q, %v; want a *URIError", data, err)
	}
}

func isURIError(err error) bool {
	var ue *URIError
	return errors.As(err, &ue)
}

func TestList(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s := newStore(t, Options{Root: root})
	for _, span := range []string{"s2", "s1", "s10"} {
		if _, _, err := s.WriteCall("t", span, []byte("ctx-"+span), []byte(`{"span":"`+span+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{10, 0} {
		if _, err := s.Spill("t", "s1", n, []byte("spilled")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.WriteCall("other", "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	// Things that are not artifacts.
	calls := filepath.Join(root, "artifacts", "runs", "t", "tool_calls")
	for _, f := range []string{".s1.context.tmp-123", "notes.txt", "s1/other.json", "s1/.result.json.tmp-9", "s1/spill-01.txt"} {
		if err := os.WriteFile(filepath.Join(calls, filepath.FromSlash(f)), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(calls, "bad name"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(calls, "bad name", "result.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(calls, "evil.context")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(calls, "evildir")); err != nil {
		t.Fatal(err)
	}

	items, total, err := s.List("t")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.URI)
		if it.ModTime.IsZero() || it.Truncated || it.Offset != 0 {
			t.Errorf("item %+v", it)
		}
	}
	want := []string{
		"artifact://runs/t/tool_calls/s1.context",
		"artifact://runs/t/tool_calls/s1/result.json",
		"artifact://runs/t/tool_calls/s1/spill-0.txt",
		"artifact://runs/t/tool_calls/s1/spill-10.txt",
		"artifact://runs/t/tool_calls/s10.context",
		"artifact://runs/t/tool_calls/s10/result.json",
		"artifact://runs/t/tool_calls/s2.context",
		"artifact://runs/t/tool_calls/s2/result.json",
	}
	if !slices.Equal(got, want) || total != len(want) {
		t.Errorf("List = %q (total %d),\nwant %q", got, total, want)
	}
	if items[0].Bytes != int64(len("ctx-s1")) || items[1].Bytes != int64(len(`{"span":"s1"}`)) {
		t.Errorf("sizes %d, %d", items[0].Bytes, items[1].Bytes)
	}
	// Every listed URI reads back.
	for _, it := range items {
		if _, info, err := s.Read(it.URI, ModeGet, 0); err != nil || info.Bytes != it.Bytes {
			t.Errorf("Read(%q) = %+v, %v", it.URI, info, err)
		}
	}

	// At most maxListItems, the first by URI, and how many there are.
	for i := range maxListItems / 2 {
		if _, _, err := s.WriteCall("t", fmt.Sprintf("z%04d", i), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	items, total, err = s.List("t")
	if err != nil || len(items) != maxListItems || total != len(want)+maxListItems || items[2].URI != want[2] {
		t.Errorf("capped List = %d items, total %d, %v", len(items), total, err)
	}

	if _, _, err := s.List("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("List(missing) = %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"", "..", ".", "../t", "t/tool_calls", "%2e%2e"} {
		if _, _, err := s.List(bad); !isURIError(err) {
			t.Errorf("List(%q) = %v, want a *URIError", bad, err)
		}
	}
}
