package text

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 5, "short"},
		{"", 0, ""},
		{"abcdef", 5, "ab…"},
		{"ab def", 6, "ab def"},
		{"ab defg", 6, "ab…"}, // no space before the mark
		{"日本語です", 9, "日本…"},   // 6 bytes of text fit, not a split rune
		{"日本語です", 8, "日…"},
		{"abcdef", 2, "…"},
		{"a\xff\xffbcdef", 5, "a\xff…"},
	}
	for _, tt := range tests {
		got := Cut(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestHeadTail(t *testing.T) {
	s := "día ☃ x"
	for n, want := range map[int]string{-1: "", 0: "", 1: "d", 2: "d", 3: "dí", 7: "día ", 8: "día ☃", 100: s} {
		if got := Head(s, n); got != want {
			t.Errorf("Head(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	for n, want := range map[int]string{0: "", 2: " x", 4: " x", 5: "☃ x", 100: s} {
		if got := Tail(s, n); got != want {
			t.Errorf("Tail(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	if got := string(Head([]byte("é"), 1)); got != "" {
		t.Errorf("Head of bytes = %q", got)
	}
}

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{"  a\n\tb\x00c\u202e d  ", "a b c d"},
		{"bad\xffutf8", "bad utf8"},
		{"line\u2028sep\u2029para\u0085nel", "line sep para nel"},
		{"esc\x1b[2Jclear", "esc [2Jclear"},
		{"tag\U000E0041s and zero\u200bwidth", "tag s and zero width"},
		{"Café — naïve 日本", "Café — naïve 日本"},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for s, want := range map[string]bool{"": true, "a b-é 日本": true, "tab\t": false, "nbsp\u00a0": false, "bidi\u202e": false, "bad\xff": false, "del\x7f": false, "pua\ue000": false} {
		if got := Printable(s); got != want {
			t.Errorf("Printable(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"nowframe_build", "nowframe_biuld", 2}, {"héllo", "hello", 1}} {
		if d := Distance(tt.a, tt.b); d != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}

func TestJoinNote(t *testing.T) {
	for _, tt := range [][3]string{{"", "b", "b"}, {"a", "", "a"}, {"a", "a", "a"}, {"a", "b", "a; b"}} {
		if got := JoinNote(tt[0], tt[1]); got != tt[2] {
			t.Errorf("JoinNote(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
}

// FuzzCut: the result is bounded, a prefix of the input and the mark, and
// never splits a rune of valid input.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "abc", "日本語です", "a\xffb", "x  y  z"} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 4*len(s) + 8
		if n < len(Ellipsis) {
			n = len(Ellipsis)
		}
		got := Cut(s, n)
		if len(got) > n {
			t.Fatalf("Cut(%q, %d) = %q: %d bytes", s, n, got, len(got))
		}
		if got == s {
			return
		}
		kept, ok := strings.CutSuffix(got, Ellipsis)
		if !ok || !strings.HasPrefix(s, kept) || len(s) <= n {
			t.Fatalf("Cut(%q, %d) = %q: not a prefix and the mark", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(kept) {
			t.Fatalf("Cut(%q, %d) = %q split a rune", s, n, got)
		}
	})
}

// FuzzLine: the result is one line of visible text, and Line is
// idempotent.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[31mred\u202e", "\xff\xfe", "  x  ", "👩\u200d💻"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		if !utf8.ValidString(got) || strings.Contains(got, "  ") || strings.TrimSpace(got) != got {
			t.Fatalf("Line(%q) = %q", s, got)
		}
		for _, r := range got {
			if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("Line(%q) = %q keeps %U", s, got, r)
			}
		}
		if again := Line(got); again != got {
			t.Fatalf("Line is not idempotent: %q then %q", got, again)
		}
	})
}
