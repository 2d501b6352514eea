package awsim

import (
	"errors"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file models JSON the way aw-server (CPython's json module behind
// Flask) sees it: objects keep their key order, integers are unbounded,
// NaN and Infinity are accepted, and lone UTF-16 surrogates survive a round
// trip. Strings hold WTF-8: a lone surrogate is kept as its 3-byte encoding.
//
// Values are: nil, bool, *big.Int, float64, string, []any and *object.

// object is a JSON object with Python dict semantics: insertion order is kept,
// and setting an existing key keeps its position.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *object) len() int { return len(o.keys) }

// clone deep-copies a JSON value.
func clone(v any) any {
	switch t := v.(type) {
	case *object:
		c := &object{keys: append([]string(nil), t.keys...), vals: make(map[string]any, len(t.vals))}
		for k, x := range t.vals {
			c.vals[k] = clone(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = clone(x)
		}
		return c
	case *big.Int:
		return new(big.Int).Set(t)
	}
	return v
}

// errJSONDepth is returned for documents nested deeper than CPython's
// recursion limit allows: there the server fails with a 500, not a 400.
var errJSONDepth = errors.New("json nested too deeply")

// maxJSONDepth approximates CPython's default recursion limit (1000 frames,
// a few of which Flask and the decoder use).
const maxJSONDepth = 990

// maxIntDigits is CPython 3.11's limit on int("...") conversions.
const maxIntDigits = 4300

// decodeJSON parses body like json.loads(bytes) does. A syntax error (a
// ValueError in Python, a 400 from Flask) is returned as a plain error;
// errJSONDepth means a RecursionError (a 500).
func decodeJSON(body []byte) (any, error) {
	if len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
		body = body[3:] // json.loads decodes bytes with utf-8-sig
	}
	if !validWTF8(body) {
		return nil, errors.New("invalid utf-8")
	}
	d := &jdec{s: body}
	d.ws()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.i != len(d.s) {
		return nil, errors.New("extra data")
	}
	return v, nil
}

// validWTF8 reports whether b is UTF-8, allowing encoded surrogates (Python
// decodes request bodies with the surrogatepass handler).
func validWTF8(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		if isSurrogateSeq(b[i:]) {
			i += 3
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		i += n
	}
	return true
}

// isSurrogateSeq reports whether b starts with the 3-byte encoding of a
// UTF-16 surrogate (U+D800..U+DFFF).
func isSurrogateSeq(b []byte) bool {
	return len(b) >= 3 && b[0] == 0xED && b[1] >= 0xA0 && b[1] <= 0xBF && b[2] >= 0x80 && b[2] <= 0xBF
}

type jdec struct {
	s []byte
	i int
}

func (d *jdec) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jdec) lit(word string) bool {
	if strings.HasPrefix(string(d.s[d.i:min(len(d.s), d.i+len(word))]), word) {
		d.i += len(word)
		return true
	}
	return false
}

func (d *jdec) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	if d.i >= len(d.s) {
		return nil, errors.New("expecting value")
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.obj(depth)
	case c == '[':
		return d.arr(depth)
	case c == '"':
		d.i++
		return d.str()
	case d.lit("null"):
		return nil, nil
	case d.lit("true"):
		return true, nil
	case d.lit("false"):
		return false, nil
	case d.lit("NaN"):
		return math.NaN(), nil
	case d.lit("Infinity"):
		return math.Inf(1), nil
	case d.lit("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return d.num()
	}
	return nil, errors.New("expecting value")
}

func (d *jdec) obj(depth int) (any, error) {
	d.i++ // {
	o := newObject()
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return o, nil
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, errors.New("expecting property name enclosed in double quotes")
		}
		d.i++
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, errors.New("expecting ':' delimiter")
		}
		d.i++
		d.ws()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		o.set(k, v)
		d.ws()
		if d.i >= len(d.s) {
			return nil, errors.New("expecting ',' delimiter")
		}
		switch d.s[d.i] {
		case '}':
			d.i++
			return o, nil
		case ',':
			d.i++
			d.ws()
		default:
			return nil, errors.New("expecting ',' delimiter")
		}
	}
}

func (d *jdec) arr(depth int) (any, error) {
	d.i++ // [
	out := []any{}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return out, nil
	}
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		d.ws()
		if d.i >= len(d.s) {
			return nil, errors.New("expecting ',' delimiter")
		}
		switch d.s[d.i] {
		case ']':
			d.i++
			return out, nil
		case ',':
			d.i++
			d.ws()
		default:
			return nil, errors.New("expecting ',' delimiter")
		}
	}
}

func (d *jdec) num() (any, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i >= len(d.s) {
		return nil, errors.New("expecting value")
	}
	if d.s[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, errors.New("expecting value")
	}
	isFloat := false
	if d.i+1 < len(d.s) && d.s[d.i] == '.' && d.s[d.i+1] >= '0' && d.s[d.i+1] <= '9' {
		d.i++
		digits()
		isFloat = true
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		save := d.i
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			d.i = save // not an exponent; the rest is extra data
		} else {
			isFloat = true
		}
	}
	text := string(d.s[start:d.i])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	}
	if len(strings.TrimLeft(text, "-")) > maxIntDigits {
		return nil, errors.New("exceeds the limit for integer string conversion")
	}
	n, _ := new(big.Int).SetString(text, 10)
	return n, nil
}

// str decodes a string body after its opening quote.
func (d *jdec) str() (string, error) {
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			return "", errors.New("unterminated string")
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String(), nil
		case c < 0x20:
			return "", errors.New("invalid control character")
		case c == '\\':
			d.i++
			if d.i >= len(d.s) {
				return "", errors.New("unterminated string")
			}
			e := d.s[d.i]
			d.i++
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				u, ok := d.hex4()
				if !ok {
					return "", errors.New("invalid \\uXXXX escape")
				}
				if u >= 0xD800 && u <= 0xDBFF && d.i+1 < len(d.s) && d.s[d.i] == '\\' && d.s[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					if lo, ok := d.hex4(); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						b.WriteRune(0x10000 + (rune(u)-0xD800)<<10 + (rune(lo) - 0xDC00))
						continue
					}
					d.i = save
				}
				writeCodeUnit(&b, rune(u))
			default:
				return "", errors.New("invalid \\escape")
			}
		default:
			b.WriteByte(c)
			d.i++
		}
	}
}

func (d *jdec) hex4() (uint16, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.s[d.i:d.i+4]), 16, 16)
	if err != nil || strings.ContainsAny(string(d.s[d.i:d.i+4]), "+-xX_") {
		return 0, false
	}
	d.i += 4
	return uint16(v), true
}

// writeCodeUnit writes r, encoding a lone surrogate as WTF-8.
func writeCodeUnit(b *strings.Builder, r rune) {
	if r >= 0xD800 && r <= 0xDFFF {
		b.WriteByte(0xE0 | byte(r>>12))
		b.WriteByte(0x80 | byte(r>>6)&0x3F)
		b.WriteByte(0x80 | byte(r)&0x3F)
		return
	}
	b.WriteRune(r)
}

// nextCodePoint decodes one code point of a WTF-8 string.
func nextCodePoint(s string) (rune, int) {
	if len(s) >= 3 && isSurrogateSeq([]byte(s[:3])) {
		return rune(s[0]&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	}
	return utf8.DecodeRuneInString(s)
}

// encStyle is one of the two serialisations aw-server uses.
type encStyle struct {
	compact bool // separators "," ":" instead of ", " ": "
	sorted  bool // sort_keys
}

var (
	// styleRestx is flask-restx's output_json: json.dumps defaults.
	styleRestx = encStyle{}
	// styleJsonify is Flask's jsonify: compact, sorted keys.
	styleJsonify = encStyle{compact: true, sorted: true}
)

// appendJSON appends v as CPython's json.dumps(v, ensure_ascii=True) would.
func appendJSON(dst []byte, v any, st encStyle) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case *big.Int:
		return t.Append(dst, 10)
	case int:
		return strconv.AppendInt(dst, int64(t), 10)
	case int64:
		return strconv.AppendInt(dst, t, 10)
	case float64:
		switch {
		case math.IsNaN(t):
			return append(dst, "NaN"...)
		case math.IsInf(t, 1):
			return append(dst, "Infinity"...)
		case math.IsInf(t, -1):
			return append(dst, "-Infinity"...)
		}
		return appendPyFloat(dst, t)
	case string:
		return appendPyString(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = appendSep(dst, ',', st)
			}
			dst = appendJSON(dst, x, st)
		}
		return append(dst, ']')
	case *object:
		keys := t.keys
		if st.sorted {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = appendSep(dst, ',', st)
			}
			dst = appendPyString(dst, k)
			dst = appendSep(dst, ':', st)
			dst = appendJSON(dst, t.vals[k], st)
		}
		return append(dst, '}')
	}
	panic("awsim: unsupported JSON value")
}

func appendSep(dst []byte, c byte, st encStyle) []byte {
	dst = append(dst, c)
	if !st.compact {
		dst = append(dst, ' ')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendPyString appends s as json.dumps does with ensure_ascii=True.
func appendPyString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c <= 0x7E && c != '"' && c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			i++
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = appendU4(dst, rune(c))
			}
			continue
		}
		r, n := nextCodePoint(s[i:])
		i += n
		if r > 0xFFFF {
			r -= 0x10000
			dst = appendU4(dst, 0xD800+(r>>10))
			dst = appendU4(dst, 0xDC00+(r&0x3FF))
			continue
		}
		dst = appendU4(dst, r)
	}
	return append(dst, '"')
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// appendPyFloat appends repr(f) for a finite f (Python's shortest
// round-trip repr: fixed notation for 1e-4 <= |f| < 1e16, else exponent).
func appendPyFloat(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, "0."...)
			dst = append(dst, strings.Repeat("0", -decpt)...)
			return append(dst, digits...)
		case decpt >= len(digits):
			dst = append(dst, digits...)
			dst = append(dst, strings.Repeat("0", decpt-len(digits))...)
			return append(dst, ".0"...)
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			return append(dst, digits[decpt:]...)
		}
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if exp < 0 {
		dst = append(dst, '-')
		exp = -exp
	} else {
		dst = append(dst, '+')
	}
	if exp < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// pyRepr is Python's repr() of a JSON value, as jsonschema's error messages
// print it.
func pyRepr(v any) string {
	var b []byte
	return string(appendRepr(b, v))
}

func appendRepr(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "None"...)
	case bool:
		if t {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	case *big.Int:
		return t.Append(dst, 10)
	case float64:
		switch {
		case math.IsNaN(t):
			return append(dst, "nan"...)
		case math.IsInf(t, 1):
			return append(dst, "inf"...)
		case math.IsInf(t, -1):
			return append(dst, "-inf"...)
		}
		return appendPyFloat(dst, t)
	case string:
		return appendStrRepr(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendRepr(dst, x)
		}
		return append(dst, ']')
	case *object:
		dst = append(dst, '{')
		for i, k := range t.keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendStrRepr(dst, k)
			dst = append(dst, ": "...)
			dst = appendRepr(dst, t.vals[k])
		}
		return append(dst, '}')
	}
	return append(dst, "?"...)
}

// appendStrRepr appends repr(s) for a Python str.
func appendStrRepr(dst []byte, s string) []byte {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	dst = append(dst, q)
	for i := 0; i < len(s); {
		r, n := nextCodePoint(s[i:])
		i += n
		switch {
		case r == rune(q) || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r < 0x20 || r == 0x7F:
			dst = append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xF])
		case r < 0x7F:
			dst = append(dst, byte(r))
		case r >= 0xD800 && r <= 0xDFFF, !unicode.IsPrint(r):
			switch {
			case r <= 0xFF:
				dst = append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xF])
			case r <= 0xFFFF:
				dst = append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
			default:
				dst = append(dst, `\U`...)
				dst = append(dst, []byte(strconv.FormatInt(int64(r)|1<<32, 16))[1:]...)
			}
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, q)
}

// pyStr is Python's str() of a JSON value (what peewee stores for a
// non-string CharField value).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyEqual is Python's == between two JSON values (True == 1 == 1.0; NaN is
// never equal; dicts compare without regard to order).
func pyEqual(a, b any) bool {
	if na, ok := asNumber(a); ok {
		nb, ok := asNumber(b)
		return ok && numEqual(na, nb)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || x.len() != y.len() {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.vals[k]
			if !ok || !pyEqual(x.vals[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// asNumber returns v as a number (bool counts, as in Python).
func asNumber(v any) (any, bool) {
	switch t := v.(type) {
	case bool:
		if t {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case *big.Int, float64:
		return v, true
	case int:
		return big.NewInt(int64(t)), true
	case int64:
		return big.NewInt(t), true
	}
	return nil, false
}

func numEqual(a, b any) bool {
	ai, aInt := a.(*big.Int)
	bi, bInt := b.(*big.Int)
	switch {
	case aInt && bInt:
		return ai.Cmp(bi) == 0
	case aInt:
		return intFloatEqual(ai, b.(float64))
	case bInt:
		return intFloatEqual(bi, a.(float64))
	}
	return a.(float64) == b.(float64)
}

func intFloatEqual(i *big.Int, f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return false
	}
	bf := new(big.Float).SetInt(i)
	return bf.Cmp(big.NewFloat(f)) == 0
}

// isPyNumber reports whether v is a JSON number for jsonschema ("number"
// excludes booleans).
func isPyNumber(v any) bool {
	switch v.(type) {
	case *big.Int, float64:
		return true
	}
	return false
}

// obj builds an object from key, value pairs.
func obj(pairs ...any) *object {
	o := newObject()
	for i := 0; i+1 < len(pairs); i += 2 {
		o.set(pairs[i].(string), pairs[i+1])
	}
	return o
}
