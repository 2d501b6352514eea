package redact

import (
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// Unsafe characters, removed from every string that leaves awbridge
// through a Redactor (untrusted text hides or disguises itself with
// them), are invisible.StripAt's; invalid UTF-8 becomes U+FFFD per byte,
// as in encoding/json.

// needsClean reports whether Clean would change s.
func needsClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if invisible.Strip(rune(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || invisible.Strip(r) && invisible.StripAt(s, i, r, size) {
			return true
		}
		i += size
	}
	return false
}

// Clean returns s as valid UTF-8 without unsafe characters (see above).
// It returns s itself, without allocating, when there is nothing to do.
// Clean(Clean(s)) == Clean(s).
func Clean(s string) string {
	if !needsClean(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, utf8.RuneError)
		case !invisible.StripAt(s, i, r, size):
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
