package redact

import (
	"unicode"
	"unicode/utf8"
)

// Unsafe characters are removed from every string that leaves awbridge
// through a Redactor (tool results, frames, artifacts, state). Window
// titles, URLs, bucket names and sidecar payloads are attacker-controllable
// text, and these characters are how such text hides or disguises itself:
//
//   - control characters (Unicode Cc: C0, DEL, C1) other than tab and
//     newline: terminal escape sequences, carriage returns that overwrite
//     a line, NULs;
//   - format characters (Unicode Cf) other than the zero-width joiner and
//     non-joiner (which emoji and several scripts need): bidirectional
//     overrides, embeddings, isolates and marks (Trojan Source), zero-width
//     spaces, the BOM, invisible operators and the tag characters
//     U+E0000-U+E007F (invisible ASCII, used to smuggle instructions);
//   - the line and paragraph separators U+2028 and U+2029.
//
// Invalid UTF-8 is replaced by U+FFFD, one per invalid byte, as
// encoding/json does.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7f:
		return false
	case r <= 0x9f: // DEL and C1
		return true
	case r == 0xad:
		return true
	case r < 0x600, 0x2070 <= r && r < 0xfeff:
		// No format character here (Latin, Greek, Cyrillic, ...; CJK,
		// Hangul, ...): the common scripts skip the table.
		return false
	case r == 0x200c || r == 0x200d:
		return false
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
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
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
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
		case !unsafeRune(r):
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
