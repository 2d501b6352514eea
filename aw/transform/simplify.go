package transform

import (
	"strings"
	"unicode/utf8"
)

// SimplifyTitle is aw_transform.simplify_string for one value: it drops a
// leading count in parentheses ("(2) Inbox" -> "Inbox"); for a window title
// (the key "title" of data that has "app") it also replaces frame rates
// ("FPS: 59.2" -> "FPS: ...") and drops a leading unsaved-file mark ("● ",
// "*"). Whitespace is Python's (str.isspace), as in aw-core's patterns.
func SimplifyTitle(s string, windowTitle bool) string {
	if rest, ok := strings.CutPrefix(s, "("); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 && n < len(rest) && rest[n] == ')' {
			s = trimSpaceLeft(rest[n+1:])
		}
	}
	if !windowTitle {
		return s
	}
	s = replaceFPS(s)
	if rest, ok := strings.CutPrefix(s, "●"); ok {
		s = trimSpaceLeft(rest)
	} else if rest, ok := strings.CutPrefix(s, "*"); ok {
		s = trimSpaceLeft(rest)
	}
	return s
}

// replaceFPS is re.sub(r"FPS:\s+[0-9\.]+", "FPS: ...", s).
func replaceFPS(s string) string {
	if !strings.Contains(s, "FPS:") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "FPS:")
		if i < 0 {
			break
		}
		rest := s[i+4:]
		spaces := len(rest) - len(trimSpaceLeft(rest))
		digits := 0
		for spaces+digits < len(rest) && (rest[spaces+digits] >= '0' && rest[spaces+digits] <= '9' || rest[spaces+digits] == '.') {
			digits++
		}
		if spaces == 0 || digits == 0 {
			b.WriteString(s[:i+4])
			s = rest
			continue
		}
		b.WriteString(s[:i])
		b.WriteString("FPS: ...")
		s = rest[spaces+digits:]
	}
	b.WriteString(s)
	return b.String()
}

func trimSpaceLeft(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !isPySpace(r) {
			break
		}
		s = s[n:]
	}
	return s
}

// isPySpace is Python's str.isspace for one character (what \s matches in
// a str pattern).
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0xA0, 0x1680,
		0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
