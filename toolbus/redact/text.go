package redact

import (
	"strings"
	"unicode/utf8"
)

// Anchor classes: the bytes at which a secret may be recognised. Every
// other byte costs one table lookup. They are chosen rare in ordinary
// text (no '-' or '_', frequent in titles and timestamps).
const (
	aNone  uint8 = iota
	aK           // 'k': sk-
	aG           // 'g': gh?_, glpat-, github_pat_
	aX           // 'x': xox?-
	aA           // 'A': AIza, AKIA, ASIA
	aJ           // 'J': eyJ (JWT)
	aB           // 'b', 'B': Bearer; -----BEGIN
	aSep         // '=' and ':': key=value, scheme://user:pass@
	aCtl         // a control byte, invalid inside a raw JSON string
	aHigh        // a byte >= 0x80, checked for valid UTF-8 (JSON only)
	aQuote       // '"' ends a raw JSON string
	aEsc         // '\\' starts an escape in a raw JSON string
	aLow         // an unsafe ASCII control byte that JSON allows (DEL raw, the rest decoded from escapes)
)

func (r *Redactor) initTables() {
	for _, t := range []*[256]uint8{&r.text, &r.jraw, &r.jdec} {
		t['k'] = aK
		t['g'] = aG
		t['x'] = aX
		t['A'] = aA
		t['J'] = aJ
		t['b'] = aB
		t['B'] = aB
		t['='] = aSep
		t[':'] = aSep
	}
	for c := 0; c < 0x20; c++ {
		r.jraw[c] = aCtl
	}
	r.jraw['"'] = aQuote
	r.jraw['\\'] = aEsc
	r.jraw[0x7f] = aLow
	for c := 0; c <= 0x7f; c++ {
		if unsafeRune(rune(c)) {
			r.jdec[c] = aLow
		}
	}
	for c := 0x80; c < 0x100; c++ {
		r.jraw[c] = aHigh
		r.jdec[c] = aHigh
	}
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isKeyByte: the bytes of a key in a key=value leak.
func isKeyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

func wordStart[T string | []byte](s T, j int) bool { return j == 0 || !isWord(s[j-1]) }

func hasPrefixAt[T string | []byte](s T, i int, p string) bool {
	return len(s)-i >= len(p) && string(s[i:i+len(p)]) == p
}

func hasPrefixFoldAt[T string | []byte](s T, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if lower(s[i+k]) != p[k] {
			return false
		}
	}
	return true
}

// kvKey returns the start and end of the key before the separator at i
// (skipping blanks and one closing quote, possibly escaped), or ok=false.
// Separators are not key bytes, so the keys of successive separators do
// not overlap and all lookbacks together cost one pass.
func kvKey[T string | []byte](s T, i int) (start, end int, ok bool) {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		if j > 0 && s[j-1] == '\\' {
			j--
		}
	}
	end = j
	for j > 0 && isKeyByte(s[j-1]) {
		j--
	}
	return j, end, j < end
}

// userinfoAt reports whether "://" at i starts an authority with a '@'.
func userinfoAt[T string | []byte](s T, i int) bool {
	if !hasPrefixAt(s, i+1, "//") {
		return false
	}
	colon := false
	for j := i + 3; j < len(s) && j < i+3+512; j++ {
		switch c := s[j]; c {
		case '@':
			return colon
		case ':':
			colon = true
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '\\':
			return false
		}
	}
	return false
}

// probe is the cheap test at an anchor: true when a secret may start
// here. It is exact about prefixes and word starts and leaves the rest to
// the anchored patterns. It may look past the end of a JSON string (see
// jscan.str) but never before its start.
func probe[T string | []byte](r *Redactor, s T, i int, a uint8) bool {
	switch a {
	case aK:
		return i >= 1 && s[i-1] == 's' && hasPrefixAt(s, i+1, "-") && wordStart(s, i-1)
	case aG:
		if !wordStart(s, i) || len(s)-i < 5 {
			return false
		}
		if s[i+1] == 'h' {
			return strings.IndexByte("pousr", s[i+2]) >= 0 && s[i+3] == '_'
		}
		return hasPrefixAt(s, i, "glpat-") || hasPrefixAt(s, i, "github_pat_")
	case aX:
		return hasPrefixAt(s, i, "xox") && len(s)-i >= 5 && strings.IndexByte("abprs", s[i+3]) >= 0 && s[i+4] == '-' && wordStart(s, i)
	case aA:
		return wordStart(s, i) && (hasPrefixAt(s, i, "AIza") || hasPrefixAt(s, i, "AKIA") || hasPrefixAt(s, i, "ASIA"))
	case aJ:
		return i >= 2 && s[i-2] == 'e' && s[i-1] == 'y' && wordStart(s, i-2)
	case aB:
		if hasPrefixFoldAt(s, i+1, "earer") && wordStart(s, i) {
			return bearerToken(s, i+6)
		}
		return i >= 5 && string(s[i-5:i]) == "-----" && hasPrefixAt(s, i, "BEGIN ")
	case aSep:
		if s[i] == ':' && userinfoAt(s, i) {
			return true
		}
		return kvSensitive(&r.keys, s, i)
	}
	return false
}

// bearerToken reports whether blanks and a token-like word follow i.
func bearerToken[T string | []byte](s T, i int) bool {
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j == i {
		return false
	}
	k := j
	for k < len(s) && (isAlnum(s[k]) || strings.IndexByte("._~+/=-", s[k]) >= 0) {
		k++
	}
	return looksLikeToken(s[j:k])
}

// kvSensitive reports whether the separator at i follows a sensitive key.
func kvSensitive[T string | []byte](ks *keySet, s T, i int) bool {
	ks0, ke, ok := kvKey(s, i)
	if !ok || ke-ks0 < ks.minLen {
		return false
	}
	return matchKey(ks, s[ks0:ke])
}

// scanResult is what a byte scan of one string found.
type scanResult uint8

const (
	scanSecret  scanResult = 1 << iota // a probe fired: run the patterns
	scanCtl                            // a raw control byte (invalid JSON)
	scanBadUTF8                        // invalid UTF-8
	scanUnsafe                         // an unsafe character (see Clean)
)

// scan runs the anchor table over s. It stops at the first control byte.
func scan[T string | []byte](r *Redactor, s T, tab *[256]uint8) (res scanResult) {
	for i := 0; i < len(s); i++ {
		a := tab[s[i]]
		if a == aNone {
			continue
		}
		switch a {
		case aCtl:
			return res | scanCtl
		case aLow:
			res |= scanUnsafe
		case aHigh:
			r, ok, size := decodeRune(s, i)
			if !ok {
				res |= scanBadUTF8
			} else if unsafeRune(r) {
				res |= scanUnsafe
			}
			i += size - 1
		default:
			if res&scanSecret == 0 && probe(r, s, i, a) {
				res |= scanSecret
			}
		}
	}
	return res
}

func decodeRune[T string | []byte](s T, i int) (rune, bool, int) {
	r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
	return r, !(r == utf8.RuneError && size == 1), size
}

// Text masks inline secrets in free text (log lines, .context documents,
// error messages) and reports whether it changed anything. Text of a
// Text result is unchanged. Ordinary text costs one table-driven pass and
// no allocation.
func (r *Redactor) Text(s string) (string, bool) {
	first := -1
	for i := 0; i < len(s); i++ {
		if a := r.text[s[i]]; a != aNone && probe(r, s, i, a) {
			first = i
			break
		}
	}
	if first < 0 {
		return s, false
	}
	out := s
	if strings.Contains(s, "-----BEGIN ") {
		if p, changed := r.maskPEM(s); changed {
			out, first = p, 0
		}
	}
	out = r.maskFrom(out, first)
	return out, out != s
}

// maskPEM masks the bodies of PEM private keys (a key without its END line
// is masked to the end of the text).
func (r *Redactor) maskPEM(s string) (string, bool) {
	var b strings.Builder
	pos := 0
	changed := false
	for _, loc := range r.rePEM.FindAllStringSubmatchIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		head := m[:5+strings.Index(m[5:], "-----")+5]
		tail := ""
		if loc[2] >= 0 {
			tail = s[loc[2]:loc[3]]
		}
		repl := head + Mask + tail
		if repl == m {
			continue
		}
		changed = true
		b.WriteString(s[pos:loc[0]])
		b.WriteString(repl)
		pos = loc[1]
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[pos:])
	return b.String(), true
}

// maskFrom applies the token, key=value, userinfo and Bearer patterns,
// left to right, starting at the candidate at first. A match whose span
// overlaps an earlier one is skipped; a span already masked counts as a
// match, so that a second pass finds the same matches.
func (r *Redactor) maskFrom(s string, first int) string {
	var b strings.Builder
	pos := 0     // s[:pos] has been written to b
	covered := 0 // s[:covered] belongs to an earlier match
	changed := false
	// dead[k]: a candidate of kind k starting before it cannot match,
	// because one that started earlier in the same run did not. Without
	// it, "sk-sk-sk-…" would cost quadratic time.
	var dead [nRunKinds]int
	for i := first; i < len(s); i++ {
		a := r.text[s[i]]
		if a == aNone || !probe(r, s, i, a) {
			continue
		}
		kind, ts := runKind(s, i, a)
		if kind >= 0 && ts < dead[kind] {
			continue
		}
		start, end, repl, ok := r.match(s, i, a)
		if !ok {
			if kind >= 0 {
				dead[kind] = runEnd(s, ts, kind)
			}
			continue
		}
		if start < covered {
			continue
		}
		if s[start:end] != repl {
			if !changed {
				b.Grow(len(s))
				changed = true
			}
			b.WriteString(s[pos:start])
			b.WriteString(repl)
			pos = end
		}
		covered = end
		if end > i {
			i = end - 1
		}
	}
	if !changed {
		return s
	}
	b.WriteString(s[pos:])
	return b.String()
}

// Token kinds whose characters include a non-word byte ('-'), so that
// another candidate of the same kind can start inside one.
const (
	runSK = iota
	runGLPat
	runXox
	runAIza
	runJWT
	nRunKinds
)

// runKind returns the run kind of the candidate at i and where its token
// starts, or -1.
func runKind(s string, i int, a uint8) (kind, start int) {
	switch a {
	case aK:
		return runSK, i - 1
	case aG:
		if s[i+1] == 'l' {
			return runGLPat, i
		}
	case aX:
		return runXox, i
	case aA:
		if s[i+1] == 'I' {
			return runAIza, i
		}
	case aJ:
		return runJWT, i - 2
	}
	return -1, 0
}

// runEnd is the end of the run of token bytes of kind starting at i: a
// failed match of that kind examined all of it, and any later candidate
// of the kind inside it sees a suffix of it followed by the same bytes.
func runEnd(s string, i, kind int) int {
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '_' && kind != runXox) {
		i++
	}
	return i
}

// match runs the anchored pattern for the candidate at i and returns the
// span to replace and its replacement.
func (r *Redactor) match(s string, i int, a uint8) (start, end int, repl string, ok bool) {
	tok := func(j int, prefix string, loc []int) (int, int, string, bool) {
		if loc == nil {
			return 0, 0, "", false
		}
		return j, j + loc[1], prefix + "…" + Mask, true
	}
	switch a {
	case aK:
		loc := r.reSK.FindStringIndex(s[i-1:])
		if loc != nil && !strings.ContainsAny(s[i+2:i-1+loc[1]], "0123456789") {
			loc = nil // a long kebab-case word, not a key
		}
		return tok(i-1, "sk-", loc)
	case aG:
		switch {
		case s[i+1] == 'h':
			return tok(i, s[i:i+4], r.reGH.FindStringIndex(s[i:]))
		case s[i+1] == 'l':
			return tok(i, "glpat-", r.reGLPat.FindStringIndex(s[i:]))
		default:
			return tok(i, "github_pat_", r.reGHPat.FindStringIndex(s[i:]))
		}
	case aX:
		return tok(i, s[i:i+5], r.reXox.FindStringIndex(s[i:]))
	case aA:
		if strings.HasPrefix(s[i:], "AIza") {
			return tok(i, "AIza", r.reAIza.FindStringIndex(s[i:]))
		}
		return tok(i, s[i:i+4], r.reAWS.FindStringIndex(s[i:]))
	case aJ:
		return tok(i-2, "eyJ", r.reJWT.FindStringIndex(s[i-2:]))
	case aB:
		if i >= 5 && s[i-5:i] == "-----" && strings.HasPrefix(s[i:], "BEGIN ") {
			return 0, 0, "", false // PEM, masked before
		}
		loc := r.reBearer.FindStringSubmatchIndex(s[i:])
		if loc == nil || !looksLikeToken(s[i+loc[2]:i+loc[3]]) {
			return 0, 0, "", false
		}
		return i + loc[2], i + loc[3], Mask, true
	case aSep:
		if s[i] == ':' && userinfoAt(s, i) {
			if loc := r.reUserinfo.FindStringSubmatchIndex(s[i:]); loc != nil {
				return i + loc[2], i + loc[3], Mask, true
			}
		}
		ks, ke, ok := kvKey(s, i)
		if !ok || !matchKey(&r.keys, s[ks:ke]) {
			return 0, 0, "", false
		}
		loc := r.reKV.FindStringSubmatchIndex(s[i:])
		if loc == nil {
			return 0, 0, "", false
		}
		v := s[i+loc[2] : i+loc[3]]
		switch {
		case strings.HasPrefix(v, `\"`):
			repl = `\"` + Mask + `\"`
		case v[0] == '"' || v[0] == '\'':
			repl = v[:1] + Mask + v[:1]
		default:
			repl = Mask
		}
		return i + loc[2], i + loc[3], repl, true
	}
	return 0, 0, "", false
}

// looksLikeToken tells a Bearer token from a word of prose: at least 8
// bytes with a digit, or at least 20 with both cases.
func looksLikeToken[T string | []byte](t T) bool {
	if len(t) < 8 {
		return false
	}
	var digit, up, low bool
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'A' <= c && c <= 'Z':
			up = true
		case 'a' <= c && c <= 'z':
			low = true
		}
	}
	return digit || len(t) >= 20 && up && low
}
