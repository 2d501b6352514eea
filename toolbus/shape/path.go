package shape

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// PathSyntax describes the path syntax in one paragraph, for help texts.
const PathSyntax = "A path selects a value inside the result: keys joined by dots (now.window.app), " +
	"array indexes in brackets (rows[0].id; rows[-1] is the last element), and keys that contain " +
	"dots, brackets, quotes or spaces quoted in brackets with JSON escapes ([\"key.with.dots\"] or " +
	"['x']). An integer segment indexes an array and is a key on an object; a quoted segment is " +
	"always a key. The empty path selects the whole result."

// Path is a parsed path; the zero Path selects the whole value.
type Path struct {
	segs []segment
}

// segment is one step of a path. An integer segment (num; never a quoted
// one) is an index on an array and its decimal text a key on an object.
type segment struct {
	key   string
	index int
	num   bool
}

func indexSegment(i int) segment {
	return segment{key: strconv.Itoa(i), index: i, num: true}
}

// PathError is a path that does not parse at byte Offset.
type PathError struct {
	Offset int
	Msg    string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("invalid path at byte %d: %s", e.Offset, e.Msg)
}

// ParsePath parses p ([PathSyntax]). Errors are *[PathError].
func ParsePath(p string) (Path, error) {
	if p == "" {
		return Path{}, nil
	}
	if len(p) > maxPathBytes {
		return Path{}, &PathError{Offset: maxPathBytes, Msg: fmt.Sprintf("longer than %d bytes", maxPathBytes)}
	}
	if !utf8.ValidString(p) {
		for i := 0; i < len(p); {
			r, n := utf8.DecodeRuneInString(p[i:])
			if r == utf8.RuneError && n == 1 {
				return Path{}, &PathError{Offset: i, Msg: "invalid UTF-8"}
			}
			i += n
		}
	}
	segs := make([]segment, 0, 1+strings.Count(p, ".")+strings.Count(p, "["))
	for i := 0; i < len(p); {
		if len(segs) == maxPathSegments {
			return Path{}, &PathError{Offset: i, Msg: fmt.Sprintf("more than %d segments", maxPathSegments)}
		}
		var (
			sg  segment
			err *PathError
		)
		switch c := p[i]; {
		case c == '[':
			sg, i, err = parseBracket(p, i)
		case c == '.':
			if i == 0 {
				return Path{}, &PathError{Offset: 0, Msg: "path starts with '.'"}
			}
			sg, i, err = parseBare(p, i+1)
		case i == 0:
			sg, i, err = parseBare(p, 0)
		default:
			// Only reachable right after a bracket.
			return Path{}, &PathError{Offset: i, Msg: fmt.Sprintf("expected '.' or '[' after ']', found %s", quoteByte(p, i))}
		}
		if err != nil {
			return Path{}, err
		}
		segs = append(segs, sg)
	}
	return Path{segs: segs}, nil
}

// bareByte reports whether c may appear in a bare segment (UTF-8 is
// validated beforehand).
func bareByte(c byte) bool {
	switch {
	case c <= ' ' || c == 0x7f:
		return false
	case c == '.' || c == '[' || c == ']' || c == '"' || c == '\'' || c == '\\':
		return false
	}
	return true
}

// parseBare parses a bare segment starting at i.
func parseBare(p string, i int) (segment, int, *PathError) {
	start := i
	for i < len(p) && bareByte(p[i]) {
		i++
	}
	if i < len(p) && p[i] != '.' && p[i] != '[' {
		return segment{}, i, &PathError{Offset: i, Msg: fmt.Sprintf("unexpected %s (quote the key: [\"...\"])", quoteByte(p, i))}
	}
	if i == start {
		if i == len(p) {
			return segment{}, i, &PathError{Offset: i, Msg: "path ends with '.'"}
		}
		return segment{}, i, &PathError{Offset: i, Msg: "empty segment"}
	}
	text := p[start:i]
	if n, ok := canonicalInt(text); ok {
		return segment{key: text, index: n, num: true}, i, nil
	}
	return segment{key: text}, i, nil
}

// canonicalInt parses "0" or -?[1-9][0-9]* that fits an int.
func canonicalInt(s string) (int, bool) {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 {
		return 0, false
	}
	if d[0] == '0' && (len(d) > 1 || len(s) != len(d)) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// parseBracket parses "[...]" starting at the '['.
func parseBracket(p string, i int) (segment, int, *PathError) {
	open := i
	i++
	if i >= len(p) {
		return segment{}, i, &PathError{Offset: open, Msg: "unclosed '['"}
	}
	if q := p[i]; q == '"' || q == '\'' {
		key, j, err := parseQuoted(p, i)
		if err != nil {
			return segment{}, j, err
		}
		if j >= len(p) || p[j] != ']' {
			return segment{}, j, &PathError{Offset: j, Msg: "expected ']' after the quoted key"}
		}
		return segment{key: key}, j + 1, nil
	}
	end := strings.IndexByte(p[i:], ']')
	if end < 0 {
		return segment{}, i, &PathError{Offset: open, Msg: "unclosed '['"}
	}
	text := p[i : i+end]
	n, ok := canonicalInt(text)
	if !ok {
		return segment{}, i, &PathError{Offset: i, Msg: "a bracket holds an integer index without leading zeros or a quoted key"}
	}
	return segment{key: text, index: n, num: true}, i + end + 1, nil
}

// parseQuoted parses a string quoted with p[i] (' or ") with JSON's
// escapes and \' and returns the key and the offset after the quote.
func parseQuoted(p string, i int) (string, int, *PathError) {
	start, end := i, i+1
	for end < len(p) && p[end] != p[start] {
		if p[end] == '\\' {
			end++
		}
		end++
	}
	body := []byte(p[start+1 : min(end, len(p))])
	var key []byte
	for from := 0; ; {
		out, bad := jsonw.Unescape(key, body[from:])
		key = out
		if bad < 0 {
			break
		}
		at := from + bad
		if at+1 < len(body) && body[at] == '\\' && body[at+1] == '\'' {
			key, from = append(key, '\''), at+2
			continue
		}
		msg := "control character in a quoted key (use an escape)"
		switch {
		case body[at] != '\\':
		case at+1 >= len(body):
			msg = "unfinished escape"
		case body[at+1] == 'u':
			msg = `\u needs four hex digits`
		default:
			msg = fmt.Sprintf("unknown escape \\%s", string(rune(body[at+1])))
		}
		return "", start + 1 + at, &PathError{Offset: start + 1 + at, Msg: msg}
	}
	if end >= len(p) {
		return "", end, &PathError{Offset: start, Msg: "unclosed quote"}
	}
	return string(key), end + 1, nil
}

func quoteByte(p string, i int) string {
	if i >= len(p) {
		return "end of path"
	}
	r, _ := utf8.DecodeRuneInString(p[i:])
	return strconv.QuoteRune(r)
}

func appendSegments(dst []byte, segs []segment) []byte {
	for i, sg := range segs {
		switch {
		case sg.num:
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, int64(sg.index), 10)
			dst = append(dst, ']')
		case bareKey(sg.key):
			if i > 0 {
				dst = append(dst, '.')
			}
			dst = append(dst, sg.key...)
		default:
			dst = append(dst, '[')
			dst = jsonw.AppendString(dst, sg.key)
			dst = append(dst, ']')
		}
	}
	return dst
}

// bareKey reports whether key prints bare and parses back as the same key.
func bareKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !bareByte(key[i]) {
			return false
		}
	}
	_, isInt := canonicalInt(key)
	return !isInt
}
