// Package text is awbridge's one home for shortening and cleaning text
// for display: rune-safe cuts (Cut, Head, Tail), one printable line of
// untrusted text (Line, Cause), Printable, the edit distance of
// suggestions and JoinNote. Every function is pure.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// Ellipsis marks where Cut cut.
const Ellipsis = "…"

// Cut returns s when it is at most max bytes long; otherwise the longest
// prefix of s that, without trailing spaces and followed by Ellipsis,
// fits in max bytes (or Ellipsis alone), cut on a rune boundary.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.TrimRight(Head(s, max-len(Ellipsis)), " ") + Ellipsis
}

// Head returns the longest prefix of s of at most n bytes that does not
// split a rune (backing off at most three bytes, even on invalid UTF-8).
func Head[S ~string | ~[]byte](s S, n int) S {
	if n >= len(s) {
		return s
	}
	n = max(n, 0)
	for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); k++ {
		n--
	}
	return s[:n]
}

// Tail returns the longest suffix of s of at most n bytes that does not
// start inside a rune (the mirror of Head).
func Tail[S ~string | ~[]byte](s S, n int) S {
	if n >= len(s) {
		return s
	}
	i := len(s) - max(n, 0)
	for k := 0; k < utf8.UTFMax-1 && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i++
	}
	return s[i:]
}

// Line renders untrusted text as one printable line: invalid UTF-8, white
// space and invisible characters become a space, runs of spaces collapse
// and the ends are trimmed. It returns s itself when nothing changes.
func Line(s string) string {
	if lineClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i, r := range s {
		if blank(s, i, r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lineClean reports whether Line leaves s as it is.
func lineClean(s string) bool {
	prevSpace := true // no leading space
	for i, r := range s {
		if r == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		if blank(s, i, r) {
			return false
		}
		prevSpace = false
	}
	return !prevSpace || s == ""
}

// blank reports whether the rune r at s[i] becomes a space in a Line.
func blank(s string, i int, r rune) bool {
	if r == utf8.RuneError {
		if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
			return true
		}
	}
	return unicode.IsSpace(r) || invisible.Strip(r)
}

// Distance is the Levenshtein distance between a and b, in runes (it costs
// len(a)*len(b): callers bound what they compare).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// JoinNote adds note b to note a, separated by "; ". An empty note or one
// equal to a adds nothing.
func JoinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return a + "; " + b
}

// Printable reports whether s is valid UTF-8 of unicode.IsPrint runes.
func Printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}
