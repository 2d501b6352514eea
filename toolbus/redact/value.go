package redact

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Value returns a redacted, bounded copy of v, a document decoded by
// encoding/json with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil; float64 and the integer types are accepted as
// numbers; a json.RawMessage goes through JSON, its limits counted
// apart), and a Report of what changed, with paths under root ("result"
// gives "result.token"; "" gives "token", and the root itself is "").
// Any other type is an error.
//
// v is never modified. When nothing needs to change, Value returns v
// itself; otherwise the result shares unchanged subtrees with v: treat
// both as read-only. Object keys are visited in sorted order, so paths and
// spill calls are deterministic; a key whose masked form collides with
// another key gets a "#2" suffix. spill, which may be nil, is called for
// each string longer than MaxString. A document deeper than MaxDepth or
// with more than MaxItems values is a *LimitError.
func (r *Redactor) Value(root string, v any, spill SpillFunc) (any, Report, error) {
	items := 0
	if dirty, hit := r.dirty(v, 0, &items); !dirty && !hit {
		return v, Report{}, nil
	}
	w := walker{r: r, spill: spill, root: root, rp: reporter{max: r.o.MaxPaths}}
	out, _, err := w.walk(v, 0)
	if err != nil {
		return nil, Report{}, err
	}
	return out, w.rp.rep, nil
}

// dirty is the first pass: no allocation, no paths, stops at the first
// thing to change. hit says a limit was exceeded; the walker then reports
// it with its path.
func (r *Redactor) dirty(v any, depth int, items *int) (dirty, hit bool) {
	*items++
	if *items > r.o.MaxItems {
		return false, true
	}
	switch t := v.(type) {
	case string:
		return len(t) > r.o.MaxString || r.textCandidate(t) || needsClean(t), false
	case map[string]any:
		if depth+1 > r.o.MaxDepth {
			return false, true
		}
		for k, c := range t {
			if r.SensitiveKey(k) || r.textCandidate(k) || needsClean(k) {
				return true, false
			}
			if d, h := r.dirty(c, depth+1, items); d || h {
				return d, h
			}
		}
	case []any:
		if depth+1 > r.o.MaxDepth {
			return false, true
		}
		for _, c := range t {
			if d, h := r.dirty(c, depth+1, items); d || h {
				return d, h
			}
		}
	case json.RawMessage:
		out, rep, err := r.JSON("", t, nil)
		return err != nil || rep.Changed() || len(out) != len(t), false
	case json.Number, bool, nil, float64, float32, int, int64, int32, uint, uint64, uint32:
	default:
		return true, false // the walker reports the type
	}
	return false, false
}

// textCandidate reports whether Text might change s.
func (r *Redactor) textCandidate(s string) bool {
	return scan(r, s, &r.text)&scanSecret != 0
}

type pathSeg struct {
	key   string
	index int
	isKey bool
}

type walker struct {
	r     *Redactor
	spill SpillFunc
	root  string
	rp    reporter
	items int
	segs  []pathSeg
}

func (w *walker) path() string {
	b := []byte(w.root)
	first := w.root == ""
	for _, s := range w.segs {
		if s.isKey {
			b = w.r.appendPathKey(b, s.key, first)
		} else {
			b = appendPathIndex(b, s.index)
		}
		first = false
	}
	return string(b)
}

func (w *walker) limit(which string, max int) error {
	return &LimitError{Limit: which, Max: max, Path: w.path()}
}

// count enforces the limits over a subtree that is being replaced.
func (w *walker) count(v any, depth int) error {
	w.items++
	if w.items > w.r.o.MaxItems {
		return w.limit("items", w.r.o.MaxItems)
	}
	switch t := v.(type) {
	case map[string]any:
		if depth+1 > w.r.o.MaxDepth {
			return w.limit("depth", w.r.o.MaxDepth)
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			w.segs = append(w.segs, pathSeg{key: k, isKey: true})
			if err := w.count(t[k], depth+1); err != nil {
				return err
			}
			w.segs = w.segs[:len(w.segs)-1]
		}
	case []any:
		if depth+1 > w.r.o.MaxDepth {
			return w.limit("depth", w.r.o.MaxDepth)
		}
		for i, c := range t {
			w.segs = append(w.segs, pathSeg{index: i})
			if err := w.count(c, depth+1); err != nil {
				return err
			}
			w.segs = w.segs[:len(w.segs)-1]
		}
	}
	return nil
}

func (w *walker) walk(v any, depth int) (any, bool, error) {
	w.items++
	if w.items > w.r.o.MaxItems {
		return nil, false, w.limit("items", w.r.o.MaxItems)
	}
	switch t := v.(type) {
	case string:
		return w.str(t)
	case map[string]any:
		return w.object(t, depth+1)
	case []any:
		return w.array(t, depth+1)
	case json.RawMessage:
		out, rep, err := w.r.JSON(w.path(), t, w.spill)
		if err != nil {
			return nil, false, err
		}
		w.rp.merge(rep)
		if rep.Changed() || len(out) != len(t) || &out[0] != &t[0] {
			return json.RawMessage(out), true, nil
		}
		return v, false, nil
	case json.Number, bool, nil, float64, float32, int, int64, int32, uint, uint64, uint32:
		return v, false, nil
	default:
		return nil, false, fmt.Errorf("redact: unsupported type %T at %q", v, w.path())
	}
}

func (w *walker) str(s string) (any, bool, error) {
	// Mask, then clean (see Text).
	m, changed := w.r.Text(s)
	fixed := needsClean(s)
	if fixed {
		m = Clean(m)
		w.rp.sanitized()
	}
	if changed {
		w.rp.redacted(w.path())
	}
	if len(m) > w.r.o.MaxString {
		p := w.path()
		w.rp.bounded(p)
		return w.r.bound(p, m, w.spill).value(), true, nil
	}
	return m, changed || fixed, nil
}

func (w *walker) object(m map[string]any, depth int) (any, bool, error) {
	if depth > w.r.o.MaxDepth {
		return nil, false, w.limit("depth", w.r.o.MaxDepth)
	}
	type entry struct {
		key string
		val any
	}
	keys := slices.Sorted(maps.Keys(m))
	out := make([]entry, 0, len(keys))
	anyChanged := false
	for _, k := range keys {
		c := m[k]
		ck := k
		mk, kchanged := w.r.Text(k) // mask, then clean (see Text)
		if needsClean(k) {
			ck, mk = Clean(k), Clean(mk)
			w.rp.sanitized()
			anyChanged = true
		}
		w.segs = append(w.segs, pathSeg{key: k, isKey: true})
		if kchanged {
			w.rp.redacted(w.path())
			anyChanged = true
		}
		var nv any
		if w.r.SensitiveKey(ck) && !noSecret(c) {
			if err := w.count(c, depth); err != nil {
				return nil, false, err
			}
			nv = Mask
			if s, ok := c.(string); !ok || s != Mask {
				w.rp.redacted(w.path())
				anyChanged = true
			}
		} else {
			var changed bool
			var err error
			if nv, changed, err = w.walk(c, depth); err != nil {
				return nil, false, err
			}
			anyChanged = anyChanged || changed
		}
		w.segs = w.segs[:len(w.segs)-1]
		out = append(out, entry{mk, nv})
	}
	if !anyChanged {
		return m, false, nil
	}
	res := make(map[string]any, len(out))
	for _, e := range out {
		k := e.key
		// A masked key may collide with another key: keep both.
		for n := 2; ; n++ {
			if _, dup := res[k]; !dup {
				break
			}
			k = e.key + "#" + strconv.Itoa(n)
		}
		res[k] = e.val
	}
	return res, true, nil
}

func (w *walker) array(a []any, depth int) (any, bool, error) {
	if depth > w.r.o.MaxDepth {
		return nil, false, w.limit("depth", w.r.o.MaxDepth)
	}
	var out []any
	for i, c := range a {
		w.segs = append(w.segs, pathSeg{index: i})
		nv, changed, err := w.walk(c, depth)
		w.segs = w.segs[:len(w.segs)-1]
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil {
			out = make([]any, len(a))
			copy(out, a[:i])
		}
		if out != nil {
			out[i] = nv
		}
	}
	if out == nil {
		return a, false, nil
	}
	return out, true, nil
}

// noSecret reports the values a sensitive key keeps: true, false and null
// carry no secret ("token":true says a token is set), whereas a number
// may be one (a numeric password or PIN). See jscan.atNoSecret.
func noSecret(v any) bool {
	switch v.(type) {
	case bool, nil:
		return true
	}
	return false
}
