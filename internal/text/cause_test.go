package text

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCause(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "dial tcp 127.0.0.1:5600: connect: connection refused", "dial tcp 127.0.0.1:5600: connect: connection refused"},
		{"malformed header withheld", `net/http: HTTP/1.x transport connection broken: malformed MIME header line: "Location: \x05private-title"`,
			"net/http: HTTP/1.x transport connection broken: malformed MIME header line (not shown)"},
		{"malformed status withheld", `malformed HTTP status code "secret"`, "malformed HTTP status code (not shown)"},
		{"controls and bidi become spaces", "a\x1b[2J\u202eb\xff", "a [2J b"},
		{"bounded", strings.Repeat("é", 200), strings.Repeat("é", 48) + "…"},
		{"quoted Location withheld", `failed to parse Location header "/%zz-private-title": parse "/%zz-private-title": invalid URL escape "%zz"`,
			`failed to parse Location header "…": parse "…": invalid URL escape "…"`},
		{"escaped quote inside", `Get "a\"b": refused`, `Get "…": refused`},
		{"unterminated", `x "secret`, `x "…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cause(errors.New(tt.in), 100); got != tt.want {
				t.Errorf("Cause(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzCause(f *testing.F) {
	f.Add(`malformed MIME header line: "x"`)
	f.Add("a\u202e\x00b")
	f.Fuzz(func(t *testing.T, s string) {
		got := Cause(errors.New(s), 200)
		if len(got) > 200 || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\x1b\u202e") {
			t.Fatalf("Cause(%q) = %q", s, got)
		}
		// Nothing quoted survives.
		if q := strings.Index(got, `"`); q >= 0 && !strings.HasPrefix(got[q:], `"…"`) {
			t.Fatalf("Cause(%q) = %q", s, got)
		}
	})
}
