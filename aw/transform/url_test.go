package transform

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSplitURLAWCore is test_url_parse_event of aw-core.
func TestSplitURLAWCore(t *testing.T) {
	for _, c := range []struct {
		url  string
		want URL
	}{
		{"http://asd.com/test/?a=1", URL{Protocol: "http", Domain: "asd.com", Path: "/test/", Options: "a=1"}},
		{"https://www.asd.asd.com/test/test2/meh;meh2?asd=2&asdf=3#id", URL{"https", "asd.asd.com", "/test/test2/meh", "meh2", "asd=2&asdf=3", "id"}},
		{"file:///home/johan/myfile.txt", URL{Protocol: "file", Domain: "file", Path: "/home/johan/myfile.txt"}},
		{"about:blank", URL{Protocol: "about", Domain: "about", Path: "blank"}},
	} {
		got, err := SplitURL(c.url)
		if err != nil || got != c.want {
			t.Errorf("SplitURL(%q) = %+v, %v; want %+v", c.url, got, err, c.want)
		}
	}
}

// TestSplitURLPython compares SplitURL with CPython's urlparse on the
// cases of testdata/url_reference.json (gen_url_reference.py).
func TestSplitURLPython(t *testing.T) {
	raw, err := os.ReadFile("testdata/url_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Python string
		Cases  []struct {
			URL  string
			Want *struct{ Protocol, Domain, Path, Params, Options, Identifier string }
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 400 {
		t.Fatalf("%d cases", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		got, err := SplitURL(c.URL)
		if c.Want == nil {
			if err == nil {
				t.Errorf("SplitURL(%q) = %+v, want an error (Python %s)", c.URL, got, ref.Python)
			}
			continue
		}
		if err != nil || got != URL(*c.Want) {
			t.Errorf("SplitURL(%q) = %+v, %v; want %+v (Python %s)", c.URL, got, err, *c.Want, ref.Python)
		}
	}
}

func FuzzSplitURL(f *testing.F) {
	for _, s := range []string{"http://asd.com/test/?a=1", "https://www.x.y/a;b?c#d", "file:///x", "about:blank", "http://[::1]/", "http://[v1.x]/", " \x01a:b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		p, err := SplitURL(u)
		if err != nil {
			if !strings.ContainsAny(u, "[]") {
				t.Fatalf("SplitURL(%q): %v without brackets", u, err)
			}
			return
		}
		// The parts are pieces of the URL: nothing is invented.
		clean := strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(u)
		for _, part := range []string{p.Path, p.Params, p.Options, p.Identifier} {
			if !strings.Contains(clean, part) {
				t.Fatalf("SplitURL(%q): part %q is not in the URL", u, part)
			}
		}
		if !strings.Contains(strings.ToLower(clean), p.Protocol) || !strings.Contains(strings.ToLower(clean), strings.ToLower(p.Domain)) {
			t.Fatalf("SplitURL(%q) = %+v: scheme or domain not in the URL", u, p)
		}
		if strings.HasPrefix(p.Domain, "www.") && p.Domain != p.Protocol && !strings.Contains(clean, "www.www.") {
			t.Fatalf("SplitURL(%q): domain %q keeps www.", u, p.Domain)
		}
		if strings.ContainsAny(p.Protocol, ":/?#") || strings.ContainsAny(p.Options, "#") {
			t.Fatalf("SplitURL(%q) = %+v: a delimiter inside a part", u, p)
		}
	})
}
