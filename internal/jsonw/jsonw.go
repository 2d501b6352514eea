// Package jsonw writes and scans JSON: Marshal renders what awbridge
// answers (without HTML escaping), AppendString writes a string the same
// way without reflection, and the scanner (SkipValue, EachMember,
// EachElement...) walks a document without decoding it.
package jsonw

import "unicode/utf8"

const hex = "0123456789abcdef"

// Bit c of escLo (c < 64) or escHi (64 <= c < 128) is set when the ASCII
// byte c must be escaped: controls, '"' and '\\' (not <, > and &: see
// Marshal).
const (
	escLo = 1<<32 - 1 | 1<<'"'
	escHi = 1 << ('\\' - 64)
)

// plain reports whether ASCII byte c goes out as is.
func plain(c byte) bool {
	if c < 64 {
		return escLo>>c&1 == 0
	}
	return escHi>>(c-64)&1 == 0
}

// AppendString appends s as a JSON string, as Marshal renders it: invalid
// UTF-8 becomes U+FFFD; the line separators are escaped, <, > and & are
// not.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain(c) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		var buf [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(buf[:copy(buf[:], s[i:])])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
