package shape

import "fmt"

// Result is a shaped value.
type Result struct {
	// Value is decoded JSON (json.Number for numbers), read-only.
	Value any
	// Omit: the spec answered missing "undefined"; the result is left out.
	Omit bool
}

// MissingError is missing data under missing "error" with no default. It
// holds the spec's keys and indexes, never data values.
type MissingError struct {
	// Path is the normalised path asked for, with the indexes of the
	// elements map was applied to: rows[3].id for
	// {"path":"rows","map":{"path":"id"}}.
	Path string
	// At is the prefix of Path that could not be followed, and Reason why
	// ("no such key", "index out of range (array length 2)").
	At, Reason string
}

func (e *MissingError) Error() string {
	if e.At == e.Path {
		return fmt.Sprintf("missing data at %s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("missing data at %s: %s: %s", e.Path, e.At, e.Reason)
}

// missing is a MissingError under construction: each map level it
// bubbles up through prepends its path and element index.
type missing struct {
	segs   []segment
	at     int // segs[:at] is MissingError.At
	reason string
}

// prefix prepends the path of an outer spec and, when index >= 0, the
// index of the array element the inner spec was applied to.
func (m *missing) prefix(outer []segment, index int) {
	n := len(outer)
	if index >= 0 {
		n++
	}
	segs := make([]segment, 0, n+len(m.segs))
	segs = append(segs, outer...)
	if index >= 0 {
		segs = append(segs, indexSegment(index))
	}
	m.segs = append(segs, m.segs...)
	m.at += n
}

func (m *missing) err() *MissingError {
	return &MissingError{
		Path:   string(appendSegments(nil, m.segs)),
		At:     string(appendSegments(nil, m.segs[:m.at])),
		Reason: m.reason,
	}
}

func finish(r Result, m *missing) (Result, error) {
	if m != nil {
		return Result{}, m.err()
	}
	return r, nil
}

func (s *Spec) apply(v any) (Result, *missing) {
	cur := v
	if len(s.path.segs) > 0 {
		x, m := resolve(v, s.path.segs)
		if m != nil {
			return s.missingData(m)
		}
		cur = x
	}
	return s.rest(cur, false)
}

// missingData answers missing data: the default, shaped by the remaining
// stages, else what the missing mode says.
func (s *Spec) missingData(m *missing) (Result, *missing) {
	if s.hasDef {
		return s.rest(s.def, false)
	}
	switch s.missing {
	case ModeNull:
		return Result{}, nil
	case ModeUndefined:
		return Result{Omit: true}, nil
	case ModeEmpty:
		return Result{Value: s.empty()}, nil
	}
	return Result{}, m
}

// empty is the value of missing "empty".
func (s *Spec) empty() any {
	switch {
	case s.sub != nil:
		return []any{}
	case s.pick != nil || s.omit != nil:
		return map[string]any{}
	}
	return nil
}

// rest runs pick (unless already done), omit and map on cur.
func (s *Spec) rest(cur any, picked bool) (Result, *missing) {
	if s.pick != nil && !picked {
		cur = s.pickValue(cur)
	}
	if s.omit != nil {
		cur = s.omitValue(cur)
	}
	if s.sub == nil {
		return Result{Value: cur}, nil
	}
	arr, ok := cur.([]any)
	if !ok {
		r, m := s.sub.apply(cur)
		if m != nil {
			m.prefix(s.path.segs, -1)
		}
		return r, m
	}
	out := make([]any, 0, len(arr))
	for i, e := range arr {
		r, m := s.sub.apply(e)
		if m != nil {
			m.prefix(s.path.segs, i)
			return Result{}, m
		}
		if !r.Omit {
			out = append(out, r.Value)
		}
	}
	return Result{Value: out}, nil
}

// resolve follows segs from v.
func resolve(v any, segs []segment) (any, *missing) {
	cur := v
	for i, sg := range segs {
		switch c := cur.(type) {
		case map[string]any:
			x, ok := c[sg.key]
			if !ok {
				return nil, &missing{segs: segs, at: i + 1, reason: "no such key"}
			}
			cur = x
		case []any:
			if !sg.num {
				return nil, &missing{segs: segs, at: i + 1, reason: "the parent is an array, which has no keys"}
			}
			idx, ok := arrayIndex(sg.index, len(c))
			if !ok {
				return nil, &missing{segs: segs, at: i + 1, reason: fmt.Sprintf("index out of range (array length %d)", len(c))}
			}
			cur = c[idx]
		default:
			return nil, &missing{segs: segs, at: i + 1, reason: "the parent is " + kindOf(cur) + ", not an object or array"}
		}
	}
	return cur, nil
}

// arrayIndex maps a possibly negative index onto an array of length n.
func arrayIndex(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i < n
}

// kindOf names the JSON kind of v, never its value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number" // json.Number: values are decoded with UseNumber
}

func (s *Spec) pickValue(cur any) any {
	switch c := cur.(type) {
	case map[string]any:
		return s.pickObject(c)
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			if o, ok := e.(map[string]any); ok {
				out[i] = s.pickObject(o)
			} else {
				out[i] = e
			}
		}
		return out
	}
	return cur
}

func (s *Spec) pickObject(o map[string]any) map[string]any {
	out := make(map[string]any, min(len(s.pick), len(o)))
	for _, k := range s.pick {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	return out
}

func (s *Spec) omitValue(cur any) any {
	switch c := cur.(type) {
	case map[string]any:
		return s.omitObject(c)
	case []any:
		var out []any // nil until an element changes
		for i, e := range c {
			o, ok := e.(map[string]any)
			if !ok {
				continue
			}
			o2 := s.omitObject(o)
			if len(o2) == len(o) {
				continue // nothing omitted: the same map
			}
			if out == nil {
				out = make([]any, len(c))
				copy(out, c)
			}
			out[i] = o2
		}
		if out == nil {
			return cur
		}
		return out
	}
	return cur
}

// omitObject returns o without the omitted keys; o itself when it has none
// of them.
func (s *Spec) omitObject(o map[string]any) map[string]any {
	n := 0
	for _, k := range s.omit {
		if _, ok := o[k]; ok {
			n++
		}
	}
	if n == 0 {
		return o
	}
	out := make(map[string]any, len(o)-n)
	for k, v := range o {
		if _, drop := s.omitSet[k]; !drop {
			out[k] = v
		}
	}
	return out
}
