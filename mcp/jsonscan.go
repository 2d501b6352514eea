package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The scanners below walk JSON that json.Valid accepted, without decoding it.
// They are also bounds-checked so that the id search over the truncated
// prefix of an over-long line is safe: every scanner returns -1 when the
// input ends early.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanString returns the index just after the string starting at b[i] ('"').
func scanString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// scanValue returns the index just after the value starting at b[i].
func scanValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := scanString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c) {
				break
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// forEachMember calls fn with the raw key token (quotes included) and the raw
// value of each member of the object b (surrounding whitespace allowed). It
// stops early when fn returns false. It reports false when b is not a
// well-formed object.
func forEachMember(b []byte, fn func(key, val []byte) bool) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		k := scanString(b, i)
		if k < 0 {
			return false
		}
		key := b[i:k]
		i = skipWS(b, k)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		v := scanValue(b, i)
		if v < 0 {
			return false
		}
		if !fn(key, b[i:v]) {
			return true
		}
		i = skipWS(b, v)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// forEachElement calls fn with each raw element of the array b.
func forEachElement(b []byte, fn func(el []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for i < len(b) {
		v := scanValue(b, i)
		if v < 0 {
			return false
		}
		fn(b[i:v])
		i = skipWS(b, v)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}

// tokenIs reports whether the raw string token tok (quotes included) decodes
// to want.
func tokenIs(tok []byte, want string) bool {
	if len(tok) < 2 || tok[0] != '"' {
		return false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == want
	}
	s, ok := decodeString(tok)
	return ok && s == want
}

// decodeString decodes a raw string token.
func decodeString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}

// appendRawJSON appends raw JSON produced by the Backend. Empty raw becomes
// null. Raw newlines (only ever insignificant whitespace in valid JSON) are
// turned into spaces so that a pretty-printed body cannot break the framing.
func appendRawJSON(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...)
	}
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}
