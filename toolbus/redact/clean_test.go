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
		{"joiners kept for emoji and scripts", "👩\u200d💻 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 می\u200cخواهم", "👩\u200d💻 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 می\u200cخواهم"},
		{"joiner between letters (the real aw-server's title)", "zero\u200dwidth", "zerowidth"},
		{"non-joiner between Latin letters", "zero\u200cwidth", "zerowidth"},
		{"joiners out of place", "\u200c👩\u200d \u200d💻 a\u200d👩", "👩 💻 a👩"},
		{"emoji presentation selectors kept", "❤\ufe0f 1\ufe0f\u20e3 ☺\ufe0e", "❤\ufe0f 1\ufe0f\u20e3 ☺\ufe0e"},
		{"default-ignorables", "a\u034fb\u115f\u1160c\u3164d\uffa0e\u17b4\u17b5f\u180b\u180e\u180fg", "abcdefg"},
		{"other variation selectors (smuggled bytes)", "😀\ufe00\ufe0d\U000E0100\U000E01EF!", "😀!"},
		{"noncharacters", "a\ufdd0b\uffffc", "abc"},
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
// escaped, comes out of JSON without a single unsafe character,
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

	// A clean document is returned as is, without a copy.
	clean := []byte(`{"title":"Café — naïve","n":[1,2]}`)
	if out, rep, _ := r.JSON("", clean, nil); &out[0] != &clean[0] || rep.Changed() {
		t.Errorf("a clean document was copied or reported: %+v", rep)
	}
}

// A key is judged as it will read once cleaned: a zero-width space does not
// hide a password, and the paths a report lists are clean too.
func TestKeysAreJudgedCleaned(t *testing.T) {
	r := New(Options{MaxString: 64})
	raw := `{"pass\u200bword":"hunter2","to\u202eken":{"a":1},"x\u202e":"` + strings.Repeat("y", 100) + `"}`
	out, rep, err := r.JSON("result", []byte(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), `"password":"[REDACTED]"`) ||
		!strings.Contains(string(out), `"token":"[REDACTED]"`) {
		t.Errorf("JSON: %s", out)
	}
	for _, p := range append(rep.Redacted, rep.Bounded...) {
		if needsClean(p) {
			t.Errorf("reported path %q is not clean", p)
		}
	}
	if len(rep.Bounded) != 1 || rep.Bounded[0] != "result.x" {
		t.Errorf("bounded paths %q, want [result.x]", rep.Bounded)
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

// BenchmarkJSONNonLatin scans a frame-sized document of Cyrillic and CJK
// titles: the common scripts must not pay for the format-character table.
func BenchmarkJSONNonLatin(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"titles":[`)
	for i := range 60 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"Привет, мир — 你好，世界 — 안녕하세요 — Ελληνικά"`)
	}
	sb.WriteString(`]}`)
	doc := []byte(sb.String())
	r := New(Options{})
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.JSON("", doc, nil); err != nil {
			b.Fatal(err)
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
