package redact

import (
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// Unsafe characters are removed from every string that leaves awbridge
// through a Redactor: untrusted text hides or disguises itself with them.
// They are invisible.StripAt's; invalid UTF-8 becomes U+FFFD per byte, as
// in encoding/json. unsafeRune (inlined) is for a character without its
// neighbours; unsafeAt, true only where unsafeRune is, for r at s[i:].
func unsafeRune(r rune) bool { return invisible.Strip(r) }

func unsafeAt[T string | []byte](s T, i int, r rune, size int) bool {
	return invisible.StripAt(s, i, r, size)
}

// needsClean reports whether Clean would change s.
func needsClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) && unsafeAt(s, i, r, size) {
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
		case !unsafeAt(s, i, r, size):
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
