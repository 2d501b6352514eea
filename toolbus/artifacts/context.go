package artifacts

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// contextLegend opens every .context document, in the tool bus's
// [LEGEND] / [CONTENT] format.
const contextLegend = "[LEGEND]\n" +
	"A = Answer: the tool's result, flattened to one line per value.\n" +
	"N = Notes: how the result was obtained, and what was left out.\n" +
	"R = References: artifact URIs and follow-up calls.\n" +
	"\n" +
	"[CONTENT]\n"

// cutMarker ends a line that was cut to limits.maxLineBytes.
const cutMarker = " [cut]"

// Context is what a .context document says about one call.
type Context struct {
	Tool   string
	Trace  string
	Span   string
	Status string // Ok, Error or Retryable
	// Answer is the shaped, redacted result as JSON (nil: none, shown as
	// null).
	Answer json.RawMessage
	// Notes say how the result was obtained (one line each).
	Notes []string
	// Refs are artifact URIs and follow-up calls (one line each).
	Refs []string
}

// limits bound a .context document.
type limits struct {
	// maxDepth is how many levels of objects and arrays are flattened;
	// deeper ones are summarized as {…n keys} or […n items}.
	maxDepth int
	// maxItems is how many elements of each array are written, and how
	// many notes and references.
	maxItems int
	// maxKeys is how many keys of each object are written (in sorted order).
	maxKeys int
	// maxLineBytes is the longest line (without its newline); a longer one
	// ends with " [cut]".
	maxLineBytes int
	// maxBytes is the longest document. Answer lines that do not fit are
	// left out, and a note says so. It leaves room for the legend and four
	// lines.
	maxBytes int
}

// contextLimits are the limits of every .context document.
var contextLimits = limits{maxDepth: 6, maxItems: 50, maxKeys: 50, maxLineBytes: 1024, maxBytes: 64 << 10}

// RenderContext renders the .context document of one call: the legend,
// then one `A:` line for the call and one per value of the answer
// (`path = value`, keys sorted), `N:` lines for the notes and for what the
// limits left out, and `R:` lines for the references. Strings that could be
// misread (empty, padded, "true", "12", starting with a quote or bracket,
// or holding control, format or other invisible characters) are written as
// JSON strings with those characters escaped, so every line is one line of
// valid UTF-8. It is safe for concurrent use.
func RenderContext(c Context) []byte { return render(c, contextLimits) }

func render(c Context, l limits) []byte {
	r := renderer{l: l}
	out := append(make([]byte, 0, 4096), contextLegend...)
	head := len(out)
	out = append(out, "A: tool="...)
	out = appendHeaderValue(out, c.Tool)
	out = append(out, " status="...)
	out = appendHeaderValue(out, c.Status)
	out = append(out, " trace="...)
	out = appendHeaderValue(out, c.Trace)
	out = append(out, " span="...)
	out = appendHeaderValue(out, c.Span)
	out, _ = r.cutLine(out, head)
	out = append(out, '\n')

	// Room left after the legend and the call's line, less one line kept
	// for the note that says the answer stopped.
	avail := l.maxBytes - len(out)
	reserve := l.maxLineBytes + 1
	refs, droppedRefs := r.textLines('R', c.Refs, &avail, reserve)
	notes, droppedNotes := r.textLines('N', c.Notes, &avail, reserve)

	// The A lines go straight into out: r.buf[r.base:].
	r.budget = avail - reserve
	r.buf, r.base = out, len(out)
	var answer any
	if len(c.Answer) > 0 {
		d := json.NewDecoder(bytes.NewReader(c.Answer))
		d.UseNumber()
		if d.Decode(&answer) != nil {
			answer, r.undecodable = nil, true
		}
	}
	r.walk(answer, 0)

	gen := r.genNotes(droppedNotes, droppedRefs)
	for r.size()+len(gen) > r.budget && r.size() > 0 {
		r.buf = r.buf[:r.base+bytes.LastIndexByte(r.buf[r.base:len(r.buf)-1], '\n')+1]
		r.stopped = true
	}
	droppedGen := false
	for r.size()+len(gen) > r.budget {
		gen = gen[:bytes.LastIndexByte(gen[:len(gen)-1], '\n')+1]
		r.stopped, droppedGen = true, true
	}
	if r.stopped {
		start := len(gen)
		gen = append(gen, "N: the answer stopped at this document's limit of "...)
		gen = strconv.AppendInt(gen, int64(l.maxBytes), 10)
		gen = append(gen, " bytes; later values were left out"...)
		if droppedGen {
			gen = append(gen, ", and notes about them"...)
		}
		gen, _ = r.cutLine(gen, start)
		gen = append(gen, '\n')
	}
	out = append(r.buf, notes...)
	out = append(out, gen...)
	return append(out, refs...)
}

// renderer flattens one answer. Not safe for concurrent use; one per call.
type renderer struct {
	l       limits
	buf     []byte // the document so far; the A lines start at base
	base    int
	budget  int  // the most the A lines may take
	stopped bool // a line did not fit: the walk is over
	path    []byte
	keys    [][]string // a reusable key slice per depth

	cuts        int      // arrays and objects cut to maxItems or maxKeys
	cutNotes    []string // the first few of them
	deep        int      // containers summarized at maxDepth
	deepPath    string
	longLines   int // lines cut to maxLineBytes
	longPath    string
	undecodable bool
}

const maxCutNotes = 5

// textLines renders notes or references, one line each, at most maxItems,
// while they fit in *avail less reserve. It returns how many were dropped.
func (r *renderer) textLines(tag byte, texts []string, avail *int, reserve int) ([]byte, int) {
	var out []byte
	dropped := 0
	for i, t := range texts {
		if i >= r.l.maxItems {
			dropped += len(texts) - i
			break
		}
		start := len(out)
		out = append(out, tag, ':', ' ')
		out = appendText(out, t, r.l.maxLineBytes+1)
		out, _ = r.cutLine(out, start)
		out = append(out, '\n')
		if n := len(out) - start; n > *avail-reserve {
			out = out[:start]
			dropped++
			continue
		}
		*avail -= len(out) - start
	}
	return out, dropped
}

// cutLine cuts the line b[start:] to maxLineBytes at a rune boundary,
// ending it with cutMarker.
func (r *renderer) cutLine(b []byte, start int) ([]byte, bool) {
	if len(b)-start <= r.l.maxLineBytes {
		return b, false
	}
	cut := start + len(text.Head(b[start:], r.l.maxLineBytes-len(cutMarker)))
	return append(b[:cut], cutMarker...), true
}

// walk writes v, found at r.path, nested depth containers deep.
func (r *renderer) walk(v any, depth int) {
	if r.stopped {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		r.object(x, depth)
	case []any:
		r.array(x, depth)
	default: // a string, json.Number, bool or nil, as the decoder made it
		start := r.lineStart()
		switch x := x.(type) {
		case string:
			r.buf = appendString(r.buf, x, r.l.maxLineBytes+1)
		case json.Number:
			r.buf = append(r.buf, x...)
		case bool:
			r.buf = strconv.AppendBool(r.buf, x)
		default:
			r.buf = append(r.buf, "null"...)
		}
		r.lineEnd(start)
	}
}

func (r *renderer) object(m map[string]any, depth int) {
	if len(m) == 0 {
		r.summary("{}", 0, "")
		return
	}
	if depth >= r.l.maxDepth {
		r.summary("{…", len(m), plural(len(m), " key}", " keys}"))
		return
	}
	for len(r.keys) <= depth {
		r.keys = append(r.keys, nil)
	}
	keys := r.keys[depth][:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.keys[depth] = keys
	if len(keys) > r.l.maxKeys { // noted first: the walk may stop inside
		r.noteCut(len(keys)-r.l.maxKeys, "key", r.l.maxKeys)
		keys = keys[:r.l.maxKeys]
	}
	mark := len(r.path)
	for _, k := range keys {
		r.path = appendKey(r.path, k)
		r.walk(m[k], depth+1)
		r.path = r.path[:mark]
		if r.stopped {
			break
		}
	}
	clear(r.keys[depth]) // let the strings go
}

func (r *renderer) array(a []any, depth int) {
	if len(a) == 0 {
		r.summary("[]", 0, "")
		return
	}
	if depth >= r.l.maxDepth {
		r.summary("[…", len(a), plural(len(a), " item]", " items]"))
		return
	}
	if len(a) > r.l.maxItems { // noted first: the walk may stop inside
		r.noteCut(len(a)-r.l.maxItems, "item", r.l.maxItems)
		a = a[:r.l.maxItems]
	}
	mark := len(r.path)
	for i, v := range a {
		r.path = append(r.path, '[')
		r.path = strconv.AppendInt(r.path, int64(i), 10)
		r.path = append(r.path, ']')
		r.walk(v, depth+1)
		r.path = r.path[:mark]
		if r.stopped {
			return
		}
	}
}

// summary writes an empty container, or one beyond maxDepth as {…n keys}.
func (r *renderer) summary(open string, n int, close string) {
	start := r.lineStart()
	r.buf = append(r.buf, open...)
	if close != "" {
		r.buf = strconv.AppendInt(r.buf, int64(n), 10)
		r.buf = append(r.buf, close...)
		if r.deep == 0 {
			r.deepPath = r.pathString()
		}
		r.deep++
	}
	r.lineEnd(start)
}

// noteCut records that left keys or items of the container at r.path were
// left out; the first few get a note of their own.
func (r *renderer) noteCut(left int, noun string, first int) {
	r.cuts++
	if len(r.cutNotes) >= maxCutNotes {
		return
	}
	where := "the answer"
	if len(r.path) > 0 {
		where = string(r.path)
	}
	r.cutNotes = append(r.cutNotes, where+": "+strconv.Itoa(left)+" "+
		plural(left, noun+" beyond the first "+strconv.Itoa(first)+" was left out",
			noun+"s beyond the first "+strconv.Itoa(first)+" were left out"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (r *renderer) pathString() string {
	if len(r.path) == 0 {
		return "."
	}
	return string(r.path)
}

// lineStart begins an A line with the current path.
func (r *renderer) lineStart() int {
	start := len(r.buf)
	r.buf = append(r.buf, "A: "...)
	if len(r.path) == 0 {
		r.buf = append(r.buf, '.')
	} else {
		r.buf = append(r.buf, r.path...)
	}
	r.buf = append(r.buf, " = "...)
	return start
}

// lineEnd cuts and ends the line begun at start, or takes it back and stops
// the walk when it does not fit the budget.
func (r *renderer) lineEnd(start int) {
	var cut bool
	r.buf, cut = r.cutLine(r.buf, start)
	r.buf = append(r.buf, '\n')
	if r.size() > r.budget {
		r.buf = r.buf[:start]
		r.stopped = true
		return
	}
	if cut {
		if r.longLines == 0 {
			r.longPath = r.pathString()
		}
		r.longLines++
	}
}

// size is how many bytes the A lines take.
func (r *renderer) size() int { return len(r.buf) - r.base }

// genNotes renders the notes about what the limits left out.
func (r *renderer) genNotes(droppedNotes, droppedRefs int) []byte {
	var out []byte
	line := func(parts ...string) {
		start := len(out)
		out = append(out, "N: "...)
		for _, p := range parts {
			out = append(out, p...)
		}
		out, _ = r.cutLine(out, start)
		out = append(out, '\n')
	}
	if r.undecodable {
		line("part of the answer could not be encoded as JSON and is shown as null")
	}
	for _, n := range r.cutNotes {
		line(n)
	}
	if r.cuts > len(r.cutNotes) {
		more := r.cuts - len(r.cutNotes)
		line(strconv.Itoa(more), plural(more, " more array or object was", " more arrays or objects were"), " cut the same way")
	}
	if r.deep > 0 {
		line(strconv.Itoa(r.deep), plural(r.deep, " array or object", " arrays or objects"), " nested deeper than ",
			strconv.Itoa(r.l.maxDepth), plural(r.deep, " levels was", " levels were"), " summarized, the first at ", r.deepPath)
	}
	if r.longLines > 0 {
		line(strconv.Itoa(r.longLines), plural(r.longLines, " line", " lines"), " longer than ", strconv.Itoa(r.l.maxLineBytes),
			plural(r.longLines, " bytes was", " bytes were"), " cut, the first at ", r.longPath)
	}
	if droppedNotes > 0 {
		line(strconv.Itoa(droppedNotes), plural(droppedNotes, " note was", " notes were"), " left out")
	}
	if droppedRefs > 0 {
		line(strconv.Itoa(droppedRefs), plural(droppedRefs, " reference was", " references were"), " left out")
	}
	return out
}

// appendKey appends one object key to a path: .key for plain keys,
// ["key"] for any other.
func appendKey(path []byte, k string) []byte {
	if SafeName(k, len(k), "") {
		if len(path) > 0 {
			path = append(path, '.')
		}
		return append(path, k...)
	}
	path = append(path, '[')
	path = appendQuoted(path, k)
	return append(path, ']')
}

// appendString appends s as is when it cannot be misread, else quoted. It
// writes at most the first limit bytes of s: the line is cut anyway.
func appendString(dst []byte, s string, limit int) []byte {
	if plainValue(s) {
		return append(dst, text.Head(s, limit)...)
	}
	return appendQuoted(dst, text.Head(s, limit))
}

// plainValue reports whether s can be written unquoted as a value: it is
// printable, not empty, not padded, does not start like a quoted string, an
// object or an array, and is not a JSON literal or number.
func plainValue(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	switch s[0] {
	case ' ', '"', '{', '[':
		return false
	}
	switch s {
	case "true", "false", "null":
		return false
	}
	if isJSONNumber(s) {
		return false
	}
	return text.Printable(s)
}

// appendText appends a note or reference, at most its first limit bytes:
// as is when printable, else quoted.
func appendText(dst []byte, s string, limit int) []byte {
	if s != "" && s[0] != '"' && text.Printable(s) {
		return append(dst, text.Head(s, limit)...)
	}
	return appendQuoted(dst, text.Head(s, limit))
}

// appendHeaderValue appends one value of the call's line: plain when it is
// printable ASCII without spaces, '=' or quotes.
func appendHeaderValue(dst []byte, s string) []byte {
	ok := s != ""
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c > 0x20 && c < 0x7f && c != '=' && c != '"'
	}
	if ok {
		return append(dst, s...)
	}
	return appendQuoted(dst, s)
}

// appendQuoted appends s as a JSON string that escapes every character
// printable rejects (so bidirectional overrides and zero-width characters
// are visible), and replaces invalid UTF-8 with U+FFFD.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = u(dst, rune(c))
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case unicode.IsPrint(r):
			dst = append(dst, s[i:i+size]...)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			dst = u(u(dst, r1), r2)
		default:
			dst = u(dst, r)
		}
		i += size
	}
	return append(dst, '"')
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	end, ok := jsonw.SkipNumber([]byte(s), 0)
	return ok && end == len(s)
}
