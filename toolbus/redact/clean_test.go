package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text stays", "Inbox — Mail", "Inbox — Mail"},
		{"tab and newline stay", "a\tb\nc", "a\tb\nc"},
		{"terminal escape loses its ESC", "red\x1b[31mtext", "red[31mtext"},
		{"carriage return and NUL", "ok\r\x00fake", "okfake"},
		{"DEL and C1", "a\x7fb\u0085c\u009bd", "abcd"},
		{"bidi override (Trojan Source)", "invoice\u202egpj.exe", "invoicegpj.exe"},
		{"isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", "a"},
		{"zero-width space, word joiner, BOM", "ig\u200bnore\u2060 \ufeffthis", "ignore this"},
		{"tag characters (invisible ASCII)", "hi\U000E0049\U000E0067\U000E006E", "hi"},
		{"line and paragraph separators", "a\u2028b\u2029c", "abc"},
		{"soft hyphen", "co\u00adoperate", "cooperate"},
		{"joiners kept for emoji and scripts", "👩\u200d💻 \u200c", "👩\u200d💻 \u200c"},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in); got != tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if needsClean(tt.in) != (tt.in != tt.want) {
				t.Errorf("needsClean(%q) = %v", tt.in, needsClean(tt.in))
			}
		})
	}
}

// A frame or payload with hostile text in values and keys, raw and
// escaped, comes out of JSON and Value without a single unsafe character,
// and the report counts what was cleaned.
func TestDocumentsAreCleaned(t *testing.T) {
	r := New(Options{})
	raw := `{"title":"Inbox\u202e txt.exe","payload":{"note\u200b":"run\u001b[2J this\r","url":"https://x.test/\u2066a"},` +
		`"raw":"` + "a\u202eb\u007fc" + `","ok":"Café — naïve 👩‍💻","n":[1,"\u00ad"]}`
	out, rep, err := r.JSON("result", []byte(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatalf("output is not JSON: %s", out)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	assertClean(t, v)
	if rep.SanitizedTotal != 6 || !rep.Changed() {
		t.Errorf("report %+v, want 6 sanitized", rep)
	}
	if !strings.Contains(string(out), `"ok":"Café — naïve 👩‍💻"`) {
		t.Errorf("clean text changed: %s", out)
	}

	// The same through Value (decoded documents: state values, details).
	var in any
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatal(err)
	}
	got, rep, err := r.Value("result", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, got)
	if rep.SanitizedTotal != 6 {
		t.Errorf("Value report %+v, want 6 sanitized", rep)
	}

	// A clean document is returned as is, without a copy.
	clean := []byte(`{"title":"Café — naïve","n":[1,2]}`)
	if out, rep, _ := r.JSON("", clean, nil); &out[0] != &clean[0] || rep.Changed() {
		t.Errorf("a clean document was copied or reported: %+v", rep)
	}
}

func assertClean(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case string:
		if needsClean(x) {
			t.Errorf("unsafe characters left in %q", x)
		}
	case map[string]any:
		for k, c := range x {
			assertClean(t, k)
			assertClean(t, c)
		}
	case []any:
		for _, c := range x {
			assertClean(t, c)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "a\u202eb", "\x1b[31m", "\xff\xfe", "👩\u200d💻", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Clean(s)
		if !utf8.ValidString(c) || needsClean(c) || Clean(c) != c {
			t.Fatalf("Clean(%q) = %q is not clean or not idempotent", s, c)
		}
		if len(c) > 3*len(s) {
			t.Fatalf("Clean grew %d bytes into %d", len(s), len(c))
		}
		// Through JSON, a string value comes out clean too.
		doc, _ := json.Marshal(map[string]string{s: s})
		out, _, err := New(Options{}).JSON("", doc, nil)
		if err != nil {
			t.Fatalf("JSON(%s): %v", doc, err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			if needsClean(k) {
				t.Fatalf("key %q not clean", k)
			}
			if str, ok := v.(string); ok && needsClean(str) {
				t.Fatalf("value %q not clean", str)
			}
		}
	})
}
