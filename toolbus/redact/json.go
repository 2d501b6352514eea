package redact

import (
	"github.com/awbridge/awbridge/internal/invisible"
	"github.com/awbridge/awbridge/internal/jsonw"
)

// JSON redacts and bounds the document raw in one pass that validates it
// and enforces MaxDepth and MaxItems, reporting paths under root
// ("result" gives "result.token"). What does not change keeps its bytes
// (a changed string is re-encoded); when nothing changes it returns raw
// itself without allocating. spill, which may be nil, is called for each
// string longer than MaxString. Errors: *SyntaxError, *LimitError.
func (r *Redactor) JSON(root string, raw []byte, spill SpillFunc) ([]byte, Report, error) {
	s := jscan{r: r, raw: raw, spill: spill, root: root}
	s.ws()
	if err := s.value(0); err != nil {
		return nil, Report{}, err
	}
	s.ws()
	if s.i != len(raw) {
		return nil, Report{}, s.syntax("data after the top-level value")
	}
	if s.out == nil {
		return raw, s.rp.rep, nil
	}
	s.out = append(s.out, raw[s.copied:]...)
	return s.out, s.rp.rep, nil
}

// jseg is one step of the current path: a key (its span in raw, without
// quotes) or an array index.
type jseg struct {
	start, end int // key span; end < 0 for an index
	index      int
	esc        bool
}

// jscan is a recursive-descent JSON scanner that copies raw to out lazily,
// at the first change.
type jscan struct {
	r      *Redactor
	raw    []byte
	i      int
	out    []byte // nil until something changes
	copied int    // raw[:copied] is in out
	items  int
	skip   int // > 0 inside a value being replaced: validate only
	spill  SpillFunc
	root   string
	rp     reporter

	segs    [32]jseg
	nsegs   int
	more    []jseg // segments beyond len(segs)
	scratch [256]byte
}

func (s *jscan) push(g jseg) {
	if s.nsegs < len(s.segs) {
		s.segs[s.nsegs] = g
	} else {
		s.more = append(s.more, g)
	}
	s.nsegs++
}

func (s *jscan) pop() {
	s.nsegs--
	if s.nsegs >= len(s.segs) {
		s.more = s.more[:len(s.more)-1]
	}
}

func (s *jscan) seg(k int) jseg {
	if k < len(s.segs) {
		return s.segs[k]
	}
	return s.more[k-len(s.segs)]
}

func (s *jscan) path() string {
	b := []byte(s.root)
	first := s.root == ""
	for k := 0; k < s.nsegs; k++ {
		g := s.seg(k)
		if g.end < 0 {
			b = appendPathIndex(b, g.index)
		} else {
			key := s.raw[g.start:g.end]
			if g.esc {
				key, _ = jsonw.Unescape(nil, key)
			}
			b = s.r.appendPathKey(b, string(key), first)
		}
		first = false
	}
	return string(b)
}

func (s *jscan) syntax(msg string) error { return &SyntaxError{Offset: s.i, msg: msg} }

func (s *jscan) limit(which string, max int) error {
	return &LimitError{Limit: which, Max: max, Path: s.path()}
}

// replace puts repl in place of raw[a:b].
func (s *jscan) replace(a, b int, repl []byte) {
	if s.out == nil {
		s.out = make([]byte, 0, len(s.raw)+len(repl)+64)
	}
	s.out = append(s.out, s.raw[s.copied:a]...)
	s.out = append(s.out, repl...)
	s.copied = b
}

func (s *jscan) ws() { s.i = jsonw.SkipSpace(s.raw, s.i) }

// value scans one value; depth is that of the enclosing container.
func (s *jscan) value(depth int) error {
	if s.i >= len(s.raw) {
		return s.syntax("unexpected end of input")
	}
	s.items++
	if s.items > MaxItems {
		return s.limit("items", MaxItems)
	}
	switch c := s.raw[s.i]; c {
	case '{':
		return s.object(depth + 1)
	case '[':
		return s.array(depth + 1)
	case '"':
		return s.stringValue()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func (s *jscan) literal(lit string) error {
	if !hasPrefixAt(s.raw, s.i, lit) {
		return s.syntax("invalid literal")
	}
	s.i += len(lit)
	return nil
}

func (s *jscan) number() error {
	if c := s.raw[s.i]; c != '-' && (c < '0' || c > '9') {
		return s.syntax("invalid character looking for a value")
	}
	end, ok := jsonw.SkipNumber(s.raw, s.i)
	s.i = end
	if !ok {
		return s.syntax("invalid number")
	}
	return nil
}

func (s *jscan) object(depth int) error {
	if depth > MaxDepth {
		return s.limit("depth", MaxDepth)
	}
	s.i++
	s.ws()
	if s.i < len(s.raw) && s.raw[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		if s.i >= len(s.raw) || s.raw[s.i] != '"' {
			return s.syntax("expected a string key")
		}
		kq := s.i // the key with its quotes is raw[kq:ke]
		key, esc, res, err := s.str()
		if err != nil {
			return err
		}
		ke := s.i
		s.push(jseg{start: kq + 1, end: ke - 1, esc: esc})
		sensitive := false
		if s.skip == 0 {
			if res&(scanBadUTF8|scanUnsafe) == 0 {
				sensitive = matchKey(&s.r.keys, key)
			}
			if res&(scanSecret|scanBadUTF8|scanUnsafe) != 0 {
				masked, changed, dirty := s.clean(key, res)
				if dirty {
					// Judge the key as it will read: "pass\u200bword" is
					// a password.
					sensitive = matchKey(&s.r.keys, Clean(string(key)))
				}
				if changed || dirty {
					s.replace(kq, ke, jsonw.AppendString(nil, masked))
				}
			}
		}
		s.ws()
		if s.i >= len(s.raw) || s.raw[s.i] != ':' {
			return s.syntax("expected ':' after a key")
		}
		s.i++
		s.ws()
		if sensitive && !s.atNoSecret() {
			vs := s.i
			s.skip++
			err := s.value(depth)
			s.skip--
			if err != nil {
				return err
			}
			if string(s.raw[vs:s.i]) != `"`+Mask+`"` {
				s.rp.redacted(s.path())
				s.replace(vs, s.i, []byte(`"`+Mask+`"`))
			}
		} else if err := s.value(depth); err != nil {
			return err
		}
		s.pop()
		s.ws()
		if s.i < len(s.raw) {
			switch s.raw[s.i] {
			case ',':
				s.i++
				s.ws()
				continue
			case '}':
				s.i++
				return nil
			}
		}
		return s.syntax("expected ',' or '}' after an object member")
	}
}

func (s *jscan) array(depth int) error {
	if depth > MaxDepth {
		return s.limit("depth", MaxDepth)
	}
	s.i++
	s.ws()
	if s.i < len(s.raw) && s.raw[s.i] == ']' {
		s.i++
		return nil
	}
	for idx := 0; ; idx++ {
		s.push(jseg{end: -1, index: idx})
		if err := s.value(depth); err != nil {
			return err
		}
		s.pop()
		s.ws()
		if s.i < len(s.raw) {
			switch s.raw[s.i] {
			case ',':
				s.i++
				s.ws()
				continue
			case ']':
				s.i++
				return nil
			}
		}
		return s.syntax("expected ',' or ']' after an array element")
	}
}

func (s *jscan) stringValue() error {
	start := s.i
	content, _, res, err := s.str()
	if err != nil || s.skip > 0 {
		return err
	}
	long := len(content) > s.r.maxString
	if res&(scanSecret|scanBadUTF8|scanUnsafe) == 0 && !long {
		return nil
	}
	masked, changed, dirty := s.clean(content, res)
	if len(masked) > s.r.maxString {
		p := s.path()
		s.rp.bounded(p)
		s.replace(start, s.i, s.r.bound(p, masked, s.spill))
	} else if changed || dirty {
		s.replace(start, s.i, jsonw.AppendString(nil, masked))
	}
	return nil
}

// clean masks, then cleans (see Text), a string or key the byte scan
// flagged, and reports what it changed.
func (s *jscan) clean(content []byte, res scanResult) (out string, changed, dirty bool) {
	out, changed = s.r.Text(string(content))
	if dirty = res&(scanBadUTF8|scanUnsafe) != 0; dirty {
		out = Clean(out)
		s.rp.sanitized()
	}
	if changed {
		s.rp.redacted(s.path())
	}
	return out, changed, dirty
}

// str scans the string at s.i and returns its decoded content (raw itself
// when it has no escapes, else decoded into scratch or a new buffer, valid
// until the next call) and what the byte scan found.
func (s *jscan) str() (content []byte, esc bool, res scanResult, err error) {
	// One pass finds the closing quote, validates and probes for secrets
	// (a probe past the quote costs at most a needless run of Text).
	i := s.i + 1
	rest := s.raw[i:]
	tab := &s.r.jraw
	for k := 0; k < len(rest); k++ {
		a := tab[rest[k]]
		if a == aNone {
			continue
		}
		switch a {
		case aQuote:
			s.i = i + k + 1
			return rest[:k], false, res, nil
		case aEsc:
			return s.strEscaped(i)
		case aCtl:
			s.i = i + k
			return nil, false, 0, s.syntax("control character in a string")
		case aLow:
			res |= scanUnsafe
		case aHigh:
			if r, ok, size := decodeRune(rest, k); !ok {
				res |= scanBadUTF8
			} else {
				if invisible.Strip(r) && invisible.StripAt(rest, k, r, size) { // Strip inlined first: the hot path
					res |= scanUnsafe
				} else if invisible.Kept(r) || invisible.Joiner(r) { // a presentation selector or a joiner in place
					res |= scanSecret
				}
				k += size - 1
			}
		default:
			if res&scanSecret == 0 && probe(s.r, rest, k, a, nil) {
				res |= scanSecret
			}
		}
	}
	s.i = len(s.raw)
	return nil, false, 0, s.syntax("unterminated string")
}

// strEscaped scans a string with escapes whose content starts at i.
func (s *jscan) strEscaped(i int) (content []byte, esc bool, res scanResult, err error) {
	// Escapes: find the closing quote, then decode (and validate).
	j := i
	for j < len(s.raw) && s.raw[j] != '"' {
		if s.raw[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(s.raw) {
		s.i = len(s.raw)
		return nil, false, 0, s.syntax("unterminated string")
	}
	content, bad := jsonw.Unescape(s.scratch[:0], s.raw[i:j])
	if bad >= 0 {
		s.i = i + bad
		if s.raw[s.i] < 0x20 {
			return nil, false, 0, s.syntax("control character in a string")
		}
		return nil, false, 0, s.syntax("invalid escape in a string")
	}
	s.i = j + 1
	return content, true, scan(s.r, content, &s.r.jdec), nil
}

// atNoSecret reports whether the value at s.i is true, false or null,
// which a sensitive key keeps (a number may be a PIN).
func (s *jscan) atNoSecret() bool {
	if s.i >= len(s.raw) {
		return false
	}
	switch s.raw[s.i] {
	case 't', 'f', 'n':
		return true
	}
	return false
}
