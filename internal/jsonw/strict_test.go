package jsonw

import (
	"encoding/json"
	"testing"
)

func TestSkipNumber(t *testing.T) {
	tests := []struct {
		in  string
		end int
		ok  bool
	}{
		{`0`, 1, true}, {`-0.5e+3,`, 7, true}, {`12E-1]`, 5, true}, {`01`, 1, true},
		{`-`, 1, false}, {`1.`, 2, false}, {`1e`, 2, false}, {`1e+`, 3, false}, {`.5`, 0, false}, {``, 0, false},
	}
	for _, tt := range tests {
		if end, ok := SkipNumber([]byte(tt.in), 0); end != tt.end || ok != tt.ok {
			t.Errorf("SkipNumber(%q) = %d, %v; want %d, %v", tt.in, end, ok, tt.end, tt.ok)
		}
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`: "plain", `a\"b\\c\/`: `a"b\c/`, `\b\f\n\r\t`: "\b\f\n\r\t", `\u00e9\uD83D\uDE00`: "é😀", `\ud800x`: "\uFFFDx",
	} {
		got, bad := Unescape(nil, []byte(in))
		if bad != -1 || string(got) != want {
			t.Errorf("Unescape(%q) = %q, %d; want %q", in, got, bad, want)
		}
	}
	for in, at := range map[string]int{`a\x`: 1, `\u12g4`: 0, "ab\x01": 2, `x\`: 1} {
		if _, bad := Unescape(nil, []byte(in)); bad != at {
			t.Errorf("Unescape(%q): bad at %d, want %d", in, bad, at)
		}
	}
}

// FuzzStrict checks the number and string rules against encoding/json.
func FuzzStrict(f *testing.F) {
	for _, s := range []string{`0`, `-1.5e+3`, `01`, `1.`, `a\"b`, `\u00e9\ud800`, `\uD83D\uDE00`, "\x01", `\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		end, ok := SkipNumber(b, 0)
		if end < 0 || end > len(b) {
			t.Fatalf("SkipNumber(%q) = %d: out of bounds", s, end)
		}
		var n json.Number
		if isNum := json.Unmarshal(b, &n) == nil && len(b) > 0 && b[0] != '"' && len(TrimSpace(b)) == len(b); isNum != (ok && end == len(b)) {
			t.Fatalf("SkipNumber(%q) = %d, %v; encoding/json says number: %v", s, end, ok, isNum)
		}
		q := []byte(`"` + s + `"`)
		if SkipString(q, 0) != len(q) {
			return // an unescaped quote: not a string's body
		}
		got, bad := Unescape(nil, b)
		var want string
		err := json.Unmarshal(q, &want)
		if (bad < 0) != (err == nil) {
			t.Fatalf("Unescape(%q): bad %d, encoding/json: %v", s, bad, err)
		}
		if err == nil && string([]rune(string(got))) != want { // each invalid byte a U+FFFD
			t.Fatalf("Unescape(%q) = %q, encoding/json says %q", s, got, want)
		}
	})
}
