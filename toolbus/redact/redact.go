package redact

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Mask replaces every redacted value.
const Mask = "[REDACTED]"

// Bounds of every Redactor.
const (
	// DefaultMaxString bounds strings when Options.MaxString is not set.
	DefaultMaxString = 16 << 10
	// MaxDepth bounds the nesting of objects and arrays (the root
	// container is depth 1).
	MaxDepth = 64
	// MaxItems bounds the number of values in a document (the root, every
	// object member and every array element count one).
	MaxItems = 100_000
	// maxPaths bounds each list of paths in a Report; the totals still
	// count every change.
	maxPaths = 100
	// pathKeyBytes bounds one key inside a reported path ("…" included).
	pathKeyBytes = 64
	// previewBytes and tailBytes size the preview and tail of a bounded
	// string, at most MaxString/2 and MaxString/4.
	previewBytes, tailBytes = 512, 256
)

// Options configure a Redactor.
type Options struct {
	// MaxString bounds strings, in bytes (after redaction): a longer one
	// is replaced by a {truncated, ...} object. Default (<= 0)
	// DefaultMaxString.
	MaxString int
	// ExtraKeys are more sensitive key names. They match like the built-in
	// ones: case-insensitively, ignoring '_', '-', '.' and spaces, anywhere
	// inside a key ("cookie" also covers "Set-Cookie").
	ExtraKeys []string
}

// SpillFunc receives the path and the full, already redacted text of a
// string that is being bounded, and returns the URI of an artifact that
// holds it, or "" when none was written. It is called synchronously, in
// document order.
type SpillFunc func(path, full string) string

// Report says where a document was changed (paths, never values).
type Report struct {
	// Redacted lists (up to maxPaths) where a value was replaced for its
	// key or inline secrets masked in a string or key; Bounded, where a
	// string was replaced by a {truncated, ...} object. The totals count
	// every change.
	Redacted, Bounded           []string
	RedactedTotal, BoundedTotal int
	// SanitizedTotal counts the strings and keys Clean changed (not
	// listed: cleaning is routine, not a disclosure).
	SanitizedTotal int
}

// Changed reports whether anything was redacted, bounded or sanitized.
func (r Report) Changed() bool { return r.RedactedTotal+r.BoundedTotal+r.SanitizedTotal > 0 }

// LimitError is returned when a document exceeds MaxDepth or MaxItems. Nothing of the document is returned with it.
type LimitError struct {
	Limit string // "depth" or "items"
	Max   int    // the configured limit
	Path  string // where it was exceeded
}

func (e *LimitError) Error() string {
	at := e.Path
	if at == "" {
		at = "the root"
	}
	return fmt.Sprintf("redact: document exceeds the %s limit of %d at %s", e.Limit, e.Max, at)
}

// SyntaxError is returned by JSON for a document that is not valid JSON.
type SyntaxError struct {
	Offset int // byte offset of the error in the input
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("redact: invalid JSON at offset %d: %s", e.Offset, e.msg)
}

// Redactor bounds and redacts documents and text. It is immutable after
// New and safe for concurrent use.
type Redactor struct {
	maxString, preview, tail int
	keys                     keySet

	// anchor tables: text (free text), jraw (JSON string bytes as they
	// appear in the document), jdec (decoded JSON strings).
	text, jraw, jdec [256]uint8

	// re compiles the token patterns on first use: most redactors never
	// need them, and compiling cost every start ~1,000 allocations.
	re func() *patterns
}

// patterns are the token patterns, compiled once per Redactor.
type patterns struct {
	reSK, reStripe, reGH, reGHPat, reGLPat, reXox, reNPM, reHF *regexp.Regexp
	reAIza, reAWS, reJWT, reBearer, reKV, reUserinfo, rePEM    *regexp.Regexp
}

// New returns a Redactor for o.
func New(o Options) *Redactor {
	if o.MaxString <= 0 {
		o.MaxString = DefaultMaxString
	}
	r := &Redactor{maxString: o.MaxString, preview: min(previewBytes, o.MaxString/2), tail: min(tailBytes, o.MaxString/4)}
	r.keys = newKeySet(o.ExtraKeys)
	r.initTables()
	r.re = sync.OnceValue(func() *patterns {
		p := &patterns{}
		m := regexp.MustCompile
		// Anchored: they run only where the byte scan found their prefix.
		// The minimum lengths keep words out (sk-… also needs a digit);
		// npm_, hf_ and Stripe bodies hold no '_', unlike snake_case.
		p.reSK = m(`^sk-[A-Za-z0-9_-]{20,}`)
		p.reStripe = m(`^[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)
		p.reGH = m(`^gh[pousr]_[A-Za-z0-9]{20,}`)
		p.reGHPat = m(`^github_pat_[A-Za-z0-9_]{20,}`)
		p.reGLPat = m(`^glpat-[A-Za-z0-9_-]{20,}`)
		p.reXox = m(`^(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}`)
		p.reNPM = m(`^npm_[A-Za-z0-9]{30,}`)
		p.reHF = m(`^hf_[A-Za-z0-9]{30,}`)
		p.reAIza = m(`^AIza[0-9A-Za-z_-]{35,}`)
		p.reAWS = m(`^(?:AKIA|ASIA)[A-Z0-9]{16}`) // and a word ends there (see match)
		p.reJWT = m(`^eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
		p.reBearer = m(`^(?i:bearer)[ \t]+([A-Za-z0-9._~+/=-]+)`)
		// key=value, anchored at the separator (the key found by looking
		// back); an auth scheme before the value is kept.
		p.reKV = m(`^(?:=>|=|:)[ \t]*(?:(?i:bearer|basic|token|digest)[ \t]+)?("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|\\"(?:[^"\\\n]|\\\\)*\\"|[^\s&"'<>\\]+)`)
		p.reUserinfo = m(`^://[^/?#@\s:"'<>\\]*:([^/?#@\s"'<>\\]+)@`)
		p.rePEM = m(`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?(-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)|[\s\S]*)`)
		return p
	})
	return r
}

// keySet matches keys against stems; a letter mask rejects nearly every
// key without comparing strings.
type keySet struct {
	stems  []string
	masks  []uint64
	minLen int
	bits   [256]uint64 // the letterMask bit of each byte
}

func newKeySet(extra []string) keySet {
	var ks keySet
	for c := 0; c < 256; c++ {
		ks.bits[c] = letterMask(string(rune(c)))
		if c >= 0x80 {
			ks.bits[c] = 0
		}
	}
	add := func(s string) {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if isSep(c) {
				continue
			}
			b.WriteByte(lower(c))
		}
		n := b.String()
		if n == "" {
			return
		}
		for _, have := range ks.stems {
			if have == n {
				return
			}
		}
		ks.stems = append(ks.stems, n)
		ks.masks = append(ks.masks, letterMask(n))
		if ks.minLen == 0 || len(n) < ks.minLen {
			ks.minLen = len(n)
		}
	}
	// The built-in stems, normalised (lower case, no separators).
	for _, s := range [...]string{"password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey", "authorization"} {
		add(s)
	}
	for _, s := range extra {
		add(s)
	}
	return ks
}

func isSep(c byte) bool { return c == '_' || c == '-' || c == '.' || c == ' ' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// letterMask has bit c-'a' for each letter and bit 26+d for each digit.
func letterMask[T string | []byte](s T) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if 'a' <= c && c <= 'z' {
			m |= 1 << (c - 'a')
		} else if '0' <= s[i] && s[i] <= '9' {
			m |= 1 << (26 + s[i] - '0')
		}
	}
	return m
}

// matchKey reports whether values under key k are redacted: k contains a
// stem, case-insensitively and ignoring '_', '-', '.' and spaces.
func matchKey[T string | []byte](ks *keySet, k T) bool {
	if len(k) < ks.minLen {
		return false
	}
	var m uint64
	for i := 0; i < len(k); i++ {
		m |= ks.bits[k[i]]
	}
	maybe := false
	for _, sm := range ks.masks {
		if m&sm == sm {
			maybe = true
			break
		}
	}
	if !maybe {
		return false
	}
	var buf [128]byte
	n := buf[:0]
	for i := 0; i < len(k); i++ {
		if !isSep(k[i]) {
			n = append(n, lower(k[i]))
		}
	}
	for j, st := range ks.stems {
		if m&ks.masks[j] == ks.masks[j] && containsStr(n, st) {
			return true
		}
	}
	return false
}

func containsStr(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if b[i] == s[0] && string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}
