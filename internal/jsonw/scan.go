package jsonw

import "bytes"

// The scanner walks JSON a validator accepted without decoding it; on any
// input it never panics or loops, and its offsets stay within len(b).

// IsSpace reports whether c is JSON whitespace: space, tab, LF or CR.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// TrimSpace trims JSON whitespace (not bytes.TrimSpace's wider set).
func TrimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && IsSpace(b[i]) {
		i++
	}
	for j > i && IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// SkipString returns the offset after the string literal whose opening
// quote is b[i], or len(b). It jumps from quote to quote (vectorised) and
// counts the backslashes before each.
func SkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		i += j
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
	return len(b)
}

// SkipValue returns the offset after the value starting at b[i], or len(b).
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !IsSpace(b[i]) {
		i++
	}
	return i
}

// EachMember calls fn with the raw key (quotes included) and value of each
// member of the object obj, duplicates too, until fn returns false.
func EachMember(obj []byte, fn func(key, val []byte) bool) {
	i := SkipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		ks := i
		i = SkipString(obj, i)
		key := obj[ks:i]
		i = SkipSpace(obj, i)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		vs := SkipSpace(obj, i+1)
		i = SkipValue(obj, vs)
		if !fn(key, obj[vs:i]) {
			return
		}
		i = SkipSpace(obj, i)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i = SkipSpace(obj, i+1)
	}
}

// EachElement calls fn with the index and raw value of each element of the
// array arr, until fn returns false.
func EachElement(arr []byte, fn func(i int, val []byte) bool) {
	i := SkipSpace(arr, 1)
	if i >= len(arr) || arr[i] == ']' {
		return
	}
	for n := 0; i < len(arr); n++ {
		vs := i
		i = SkipValue(arr, vs)
		if i == vs || !fn(n, arr[vs:i]) {
			return
		}
		i = SkipSpace(arr, i)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = SkipSpace(arr, i+1)
	}
}
