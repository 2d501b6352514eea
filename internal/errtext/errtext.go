// Package errtext renders the cause of an upstream error without the
// upstream's own bytes, for error messages that reach logs, health and
// envelopes.
package errtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cause renders err as one line of printable text of at most max bytes
// (cut on a rune boundary and ended with "…"). net/http quotes a malformed
// status or header line in its error (up to the transport's header limit,
// megabytes), and that line is the upstream's data (a window title in a
// Location header, say): the quoted part is withheld. Control, format and
// invalid bytes become spaces.
func Cause(err error, max int) string {
	s := err.Error()
	if i := strings.Index(s, "malformed "); i >= 0 {
		if j := strings.IndexAny(s[i:], ":\"'"); j >= 0 {
			s = strings.TrimRight(s[:i+j], " ") + " (not shown)"
		}
	}
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
