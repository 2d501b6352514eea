package redact

import (
	"strconv"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// Paths use the syntax of output shaping: keys that are identifiers
// ([A-Za-z_][A-Za-z0-9_]*) join with '.', other keys are quoted as JSON
// strings in brackets, array indexes are in brackets: a.b[2]["x.y"].
// Keys are masked like any text (a key may itself hold a secret) and cut
// to pathKeyBytes.

func isIdent(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// appendPathKey appends key k to path b (first: b holds no segment yet).
func (r *Redactor) appendPathKey(b []byte, k string, first bool) []byte {
	k, _ = r.Text(Clean(k))
	k = text.Cut(k, pathKeyBytes)
	if isIdent(k) {
		if !first {
			b = append(b, '.')
		}
		return append(b, k...)
	}
	b = append(b, '[')
	b = jsonw.AppendString(b, k)
	return append(b, ']')
}

func appendPathIndex(b []byte, i int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, ']')
}

// reporter collects the paths of a Report.
type reporter struct{ rep Report }

func (p *reporter) redacted(path string) {
	if n := len(p.rep.Redacted); n > 0 && p.rep.Redacted[n-1] == path {
		return
	}
	p.rep.RedactedTotal++
	if len(p.rep.Redacted) < maxPaths {
		p.rep.Redacted = append(p.rep.Redacted, path)
	}
}

func (p *reporter) bounded(path string) {
	p.rep.BoundedTotal++
	if len(p.rep.Bounded) < maxPaths {
		p.rep.Bounded = append(p.rep.Bounded, path)
	}
}

func (p *reporter) sanitized() { p.rep.SanitizedTotal++ }
