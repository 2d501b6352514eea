package text

import "strings"

// Cause renders an upstream error as one Line of at most max bytes
// without the upstream's own bytes: net/http quotes what it could not
// parse (a malformed line, a Location header), which is the upstream's
// data, so every quoted part and the rest of a malformed line are
// withheld.
func Cause(err error, max int) string {
	s := err.Error()
	if i := strings.Index(s, "malformed "); i >= 0 {
		if j := strings.IndexAny(s[i:], ":\"'"); j >= 0 {
			s = strings.TrimRight(s[:i+j], " ") + " (not shown)"
		}
	}
	s = withholdQuoted(s)
	return Cut(Line(s), max)
}

// withholdQuoted replaces every double-quoted segment of s (Go's %q, with
// backslash escapes) by "…"; an unterminated one runs to the end.
func withholdQuoted(s string) string {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(s[:i])
		b.WriteString(`"…"`)
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return b.String()
		}
		s = s[j+1:]
		i = strings.IndexByte(s, '"')
	}
	b.WriteString(s)
	return b.String()
}
