package redact

import (
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// Unsafe characters are removed from every string that leaves awbridge
// through a Redactor (tool results, frames, artifacts, state). Window
// titles, URLs, bucket names and sidecar payloads are attacker-controllable
// text, and invisible characters are how such text hides or disguises
// itself: escape sequences, carriage returns, bidirectional overrides,
// zero-width spaces, tag characters, variation selectors, fillers. Which
// they are is awbridge's one definition, invisible.StripAt: control,
// format and default-ignorable characters, less tab, newline, the emoji
// presentation selectors and the joiners in place (inside an emoji ZWJ
// sequence; the non-joiner between letters of a script that writes with
// it).
//
// Invalid UTF-8 is replaced by U+FFFD, one per invalid byte, as
// encoding/json does.
//
// unsafeRune is for a character without its neighbours (an ASCII byte);
// unsafeAt, for the character r, size bytes long, at s[i:]. unsafeAt is
// true only where unsafeRune is: hot loops test unsafeRune (inlined)
// first.
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
