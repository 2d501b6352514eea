package redact

import (
	"strings"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// Anchor classes: the bytes at which a secret may be recognised, chosen
// rare in ordinary text. Every other byte costs one table lookup.
const (
	aNone  uint8 = iota
	aK           // 'k': sk-, sk_live_, sk_test_, rk_live_, rk_test_
	aG           // 'g': gh?_, glpat-, github_pat_
	aX           // 'x': xox?-, xapp-
	aU           // '_': npm_, hf_
	aA           // 'A': AIza, AKIA, ASIA
	aJ           // 'J': eyJ (JWT)
	aB           // 'b', 'B': Bearer; -----BEGIN
	aSep         // '=' and ':': key=value, scheme://user:pass@
	aCtl         // a control byte, invalid inside a raw JSON string
	aHigh        // a byte >= 0x80, checked for valid UTF-8 (JSON only)
	aQuote       // '"' ends a raw JSON string
	aEsc         // '\\' starts an escape in a raw JSON string
	aLow         // an unsafe ASCII control byte (in JSON: DEL raw, the rest decoded from escapes)
)

func (r *Redactor) initTables() {
	for _, t := range []*[256]uint8{&r.text, &r.jraw, &r.jdec} {
		t['k'] = aK
		t['g'] = aG
		t['x'] = aX
		t['_'] = aU
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
		if invisible.Strip(rune(c)) {
			r.jdec[c] = aLow
			r.text[c] = aLow
		}
	}
	for c := 0x80; c < 0x100; c++ {
		r.jraw[c] = aHigh
		r.jdec[c] = aHigh
		r.text[c] = aHigh
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

// wordStart reports whether a word starts at j: at the start, after a
// non-word byte, or where hidden characters were cut out (see view).
func wordStart[T string | []byte](s T, j int, cuts []cut) bool {
	return j == 0 || !isWord(s[j-1]) || len(cuts) > 0 && cutAt(cuts, j)
}

// wordEnd reports whether a word ends at j (see wordStart).
func wordEnd(s string, j int, cuts []cut) bool {
	return j == len(s) || !isWord(s[j]) || len(cuts) > 0 && cutAt(cuts, j)
}

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

// kvKey returns the key before the separator at i (skipping blanks and
// one closing quote, possibly escaped), or ok=false. Separators are not
// key bytes, so all lookbacks together cost one pass.
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
// here, exact about prefixes and word starts; the patterns do the rest.
// It may look past the end of a JSON string but never before its start.
// cuts are those of a view (nil for text as it is).
func probe[T string | []byte](r *Redactor, s T, i int, a uint8, cuts []cut) bool {
	switch a {
	case aK:
		if i < 1 || !wordStart(s, i-1, cuts) {
			return false
		}
		switch s[i-1] {
		case 's':
			return hasPrefixAt(s, i+1, "-") || stripeAt(s, i+1)
		case 'r':
			return stripeAt(s, i+1)
		}
		return false
	case aG:
		if !wordStart(s, i, cuts) || len(s)-i < 5 {
			return false
		}
		if s[i+1] == 'h' {
			return strings.IndexByte("pousr", s[i+2]) >= 0 && s[i+3] == '_'
		}
		return hasPrefixAt(s, i, "glpat-") || hasPrefixAt(s, i, "github_pat_")
	case aX:
		if !wordStart(s, i, cuts) || len(s)-i < 5 {
			return false
		}
		return hasPrefixAt(s, i, "xox") && strings.IndexByte("abprs", s[i+3]) >= 0 && s[i+4] == '-' || hasPrefixAt(s, i, "xapp-")
	case aU:
		return i >= 3 && string(s[i-3:i]) == "npm" && wordStart(s, i-3, cuts) ||
			i >= 2 && string(s[i-2:i]) == "hf" && wordStart(s, i-2, cuts)
	case aA:
		return wordStart(s, i, cuts) && (hasPrefixAt(s, i, "AIza") || hasPrefixAt(s, i, "AKIA") || hasPrefixAt(s, i, "ASIA"))
	case aJ:
		return i >= 2 && s[i-2] == 'e' && s[i-1] == 'y' && wordStart(s, i-2, cuts)
	case aB:
		if hasPrefixFoldAt(s, i+1, "earer") && wordStart(s, i, cuts) {
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

// stripeAt reports whether a Stripe key's "_live_" or "_test_" is at i.
func stripeAt[T string | []byte](s T, i int) bool {
	return hasPrefixAt(s, i, "_live_") || hasPrefixAt(s, i, "_test_")
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
	scanSecret  scanResult = 1 << iota // a probe fired, or a joiner may hide a secret: run the patterns
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
			c, ok, size := decodeRune(s, i)
			switch {
			case !ok:
				res |= scanBadUTF8
			case invisible.Strip(c) && invisible.StripAt(s, i, c, size): // Strip inlined first: the hot path
				res |= scanUnsafe
			case invisible.Kept(c) || invisible.Joiner(c): // a presentation selector or a joiner in place
				res |= scanSecret
			}
			i += size - 1
		default:
			if res&scanSecret == 0 && probe(r, s, i, a, nil) {
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

// Text masks inline secrets in free text and reports whether it changed
// anything; it is idempotent. Secrets are recognised as the text reads:
// hidden characters are looked through, and where they were a word starts
// (see view), so "key<U+200B>sk-ant-..." hides nothing. Clean after
// masking, never before (that would glue the key to the word before it).
func (r *Redactor) Text(s string) (string, bool) {
	first := -1
	for i := 0; i < len(s); i++ {
		switch a := r.text[s[i]]; a {
		case aNone:
		case aLow:
			return r.mask(s, newView(s), 0)
		case aHigh:
			c, ok, size := decodeRune(s, i)
			if ok && invisible.Hidden(c) {
				return r.mask(s, newView(s), 0)
			}
			i += size - 1
		default:
			if first < 0 && probe(r, s, i, a, nil) {
				first = i
			}
		}
	}
	if first < 0 {
		return s, false
	}
	return r.mask(s, view{text: s}, first)
}

// mask runs the patterns over the view v of s from first on and replaces
// what they match in s.
func (r *Redactor) mask(s string, v view, first int) (string, bool) {
	out := s
	if strings.Contains(v.text, "-----BEGIN ") {
		if sp := r.pemSpans(v.text); sp != nil {
			out, first = splice(s, sp, v.cuts), 0
			v = newView(out)
		}
	}
	if sp := r.tokenSpans(v.text, first, v.cuts); sp != nil {
		out = splice(out, sp, v.cuts)
	}
	return out, out != s
}

// span is a part of a text to replace.
type span struct {
	start, end int
	repl       string
}

// pemSpans finds the bodies of PEM private keys (a key without its END
// line is masked to the end of the text).
func (r *Redactor) pemSpans(s string) []span {
	var sp []span
	for _, loc := range r.re().rePEM.FindAllStringSubmatchIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		head := m[:5+strings.Index(m[5:], "-----")+5]
		tail := ""
		if loc[2] >= 0 {
			tail = s[loc[2]:loc[3]]
		}
		if repl := head + Mask + tail; repl != m {
			sp = append(sp, span{loc[0], loc[1], repl})
		}
	}
	return sp
}

// tokenSpans applies the token, key=value, userinfo and Bearer patterns
// left to right from the candidate at first and returns what to replace.
// A match overlapping an earlier one is skipped; an already masked span
// counts as a match, so a second pass finds the same.
func (r *Redactor) tokenSpans(s string, first int, cuts []cut) []span {
	var sp []span
	covered := 0 // s[:covered] belongs to an earlier match
	// dead[k]: a candidate of kind k starting before it cannot match (one
	// earlier in the same run did not): "sk-sk-sk-…" stays linear.
	var dead [nRunKinds]int
	for i := first; i < len(s); i++ {
		a := r.text[s[i]]
		if a == aNone || !probe(r, s, i, a, cuts) {
			continue
		}
		kind, ts := runKind(s, i, a)
		if kind >= 0 && ts < dead[kind] {
			continue
		}
		start, end, repl, ok := r.match(s, i, a, cuts)
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
			sp = append(sp, span{start, end, repl})
		}
		covered = end
		if end > i {
			i = end - 1
		}
	}
	return sp
}

// splice replaces the spans (ascending, disjoint) of a view with cuts in
// the text s it was made of (cuts nil: s itself). Hidden characters
// inside a span go with it; those at its edges stay.
func splice(s string, sp []span, cuts []cut) string {
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for _, x := range sp {
		start, end := origStart(cuts, x.start), origEnd(cuts, x.end)
		b.WriteString(s[pos:start])
		b.WriteString(x.repl)
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// Token kinds holding '-', so another candidate can start inside one.
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
		if s[i+1] == '-' {
			return runSK, i - 1
		}
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

// runEnd is the end of the run of token bytes of kind starting at i, all
// of which a failed match of that kind examined.
func runEnd(s string, i, kind int) int {
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '_' && kind != runXox) {
		i++
	}
	return i
}

// match runs the anchored pattern for the candidate at i and returns the
// span to replace and its replacement.
func (r *Redactor) match(s string, i int, a uint8, cuts []cut) (start, end int, repl string, ok bool) {
	tok := func(j int, prefix string, loc []int) (int, int, string, bool) {
		if loc == nil {
			return 0, 0, "", false
		}
		return j, j + loc[1], prefix + "…" + Mask, true
	}
	switch a {
	case aK:
		if s[i+1] != '-' {
			return tok(i-1, s[i-1:i+7], r.re().reStripe.FindStringIndex(s[i-1:]))
		}
		loc := r.re().reSK.FindStringIndex(s[i-1:])
		if loc != nil && !strings.ContainsAny(s[i+2:i-1+loc[1]], "0123456789") {
			loc = nil // a long kebab-case word, not a key
		}
		return tok(i-1, "sk-", loc)
	case aG:
		switch {
		case s[i+1] == 'h':
			return tok(i, s[i:i+4], r.re().reGH.FindStringIndex(s[i:]))
		case s[i+1] == 'l':
			return tok(i, "glpat-", r.re().reGLPat.FindStringIndex(s[i:]))
		default:
			return tok(i, "github_pat_", r.re().reGHPat.FindStringIndex(s[i:]))
		}
	case aX:
		return tok(i, s[i:i+5], r.re().reXox.FindStringIndex(s[i:]))
	case aU:
		if i >= 3 && s[i-3:i] == "npm" {
			return tok(i-3, "npm_", r.re().reNPM.FindStringIndex(s[i-3:]))
		}
		return tok(i-2, "hf_", r.re().reHF.FindStringIndex(s[i-2:]))
	case aA:
		if strings.HasPrefix(s[i:], "AIza") {
			return tok(i, "AIza", r.re().reAIza.FindStringIndex(s[i:]))
		}
		loc := r.re().reAWS.FindStringIndex(s[i:])
		if loc != nil && !wordEnd(s, i+loc[1], cuts) {
			loc = nil // longer than a key id
		}
		return tok(i, s[i:i+4], loc)
	case aJ:
		return tok(i-2, "eyJ", r.re().reJWT.FindStringIndex(s[i-2:]))
	case aB:
		if i >= 5 && s[i-5:i] == "-----" && strings.HasPrefix(s[i:], "BEGIN ") {
			return 0, 0, "", false // PEM, masked before
		}
		loc := r.re().reBearer.FindStringSubmatchIndex(s[i:])
		if loc == nil || !looksLikeToken(s[i+loc[2]:i+loc[3]]) {
			return 0, 0, "", false
		}
		return i + loc[2], i + loc[3], Mask, true
	case aSep:
		if s[i] == ':' && userinfoAt(s, i) {
			if loc := r.re().reUserinfo.FindStringSubmatchIndex(s[i:]); loc != nil {
				return i + loc[2], i + loc[3], Mask, true
			}
		}
		ks, ke, ok := kvKey(s, i)
		if !ok || !matchKey(&r.keys, s[ks:ke]) {
			return 0, 0, "", false
		}
		loc := r.re().reKV.FindStringSubmatchIndex(s[i:])
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
