package jsonw

import (
	"unicode/utf16"
	"unicode/utf8"
)

// RFC 8259's numbers and escapes, for the scanners that must refuse what
// is not JSON.

// SkipNumber returns the offset after the JSON number at b[i] and whether
// it is one ("-", "1.", "1e" are not; "01" ends after the 0).
func SkipNumber(b []byte, i int) (end int, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i, ok = digits(b, i); !ok {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(b, i+1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(b, i); !ok {
			return i, false
		}
	}
	return i, true
}

// digits returns the offset after the ASCII digits at b[i:], and whether
// there was at least one.
func digits(b []byte, i int) (int, bool) {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j, j > i
}

// Unescape appends the decoded body b of a JSON string to dst. bad is the
// offset in b of an invalid escape or a control character, or -1. Invalid
// surrogates decode to U+FFFD, as in encoding/json.
func Unescape(dst, b []byte) (out []byte, bad int) {
	for k := 0; k < len(b); k++ {
		c := b[k]
		if c < 0x20 {
			return dst, k
		}
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if k+1 >= len(b) {
			return dst, k
		}
		k++
		switch b[k] {
		case '"', '\\', '/':
			dst = append(dst, b[k])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r1, ok := hex4(b, k+1)
			if !ok {
				return dst, k - 1
			}
			k += 4
			if utf16.IsSurrogate(r1) {
				if k+2 < len(b) && b[k+1] == '\\' && b[k+2] == 'u' {
					if r2, ok := hex4(b, k+3); ok {
						if dec := utf16.DecodeRune(r1, r2); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							k += 6
							continue
						}
					}
				}
				r1 = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r1)
		default:
			return dst, k - 1
		}
	}
	return dst, -1
}

func hex4(b []byte, k int) (rune, bool) {
	if k+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[k : k+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
