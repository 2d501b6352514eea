package shape

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// ErrInvalidJSON is returned by [Spec.ApplyRaw] for input that is not one
// valid JSON value.
var ErrInvalidJSON = errors.New("input is not valid JSON")

// ApplyRaw shapes a JSON document as if decoded (the last of duplicate
// keys wins). It walks the path and picks keys on the bytes and decodes
// only what the spec selects: about 10 µs instead of 70 µs on a 9 KB
// frame. Errors are *[MissingError] or [ErrInvalidJSON].
func (s *Spec) ApplyRaw(raw []byte) (Result, error) {
	if !gjson.ValidBytes(raw) {
		return Result{}, ErrInvalidJSON
	}
	raw = jsonw.TrimSpace(raw)
	if s.IsIdentity() {
		v, err := decodeJSON(raw)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		return Result{Value: v}, nil
	}
	cur := raw
	if len(s.path.segs) > 0 {
		sub, m := resolveRaw(raw, s.path.segs)
		if m != nil {
			return finish(s.missingData(m))
		}
		cur = sub
	}
	var (
		v      any
		err    error
		picked bool
	)
	if s.pick != nil && len(cur) > 0 && cur[0] == '{' {
		v, err = s.pickRaw(cur)
		picked = true
	} else {
		v, err = decodeValue(cur)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	return finish(s.rest(v, picked))
}

// resolveRaw follows segs through the JSON value b.
func resolveRaw(b []byte, segs []segment) ([]byte, *missing) {
	cur := b
	for i, sg := range segs {
		if len(cur) == 0 {
			return nil, &missing{segs: segs, at: i + 1, reason: "the parent is not valid JSON"}
		}
		switch cur[0] {
		case '{':
			var val []byte
			found := false
			jsonw.EachMember(cur, func(k, v []byte) bool {
				if keyEqual(k, sg.key) {
					val, found = v, true // keep going: the last duplicate wins
				}
				return true
			})
			if !found {
				return nil, &missing{segs: segs, at: i + 1, reason: "no such key"}
			}
			cur = val
		case '[':
			if !sg.num {
				return nil, &missing{segs: segs, at: i + 1, reason: "the parent is an array, which has no keys"}
			}
			idx, n := sg.index, -1
			if idx < 0 {
				n = arrayLen(cur)
				idx += n
			}
			var val []byte
			found := false
			count := 0
			if idx >= 0 {
				jsonw.EachElement(cur, func(j int, v []byte) bool {
					count = j + 1
					if j == idx {
						val, found = v, true
						return false
					}
					return true
				})
			}
			if !found {
				if n < 0 {
					n = count
				}
				return nil, &missing{segs: segs, at: i + 1, reason: fmt.Sprintf("index out of range (array length %d)", n)}
			}
			cur = val
		default:
			return nil, &missing{segs: segs, at: i + 1, reason: "the parent is " + kindOfRaw(cur[0]) + ", not an object or array"}
		}
	}
	return cur, nil
}

func kindOfRaw(c byte) string {
	switch c {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// pickRaw picks s.pick from the JSON object b, decoding only their values.
func (s *Spec) pickRaw(b []byte) (map[string]any, error) {
	out := make(map[string]any, len(s.pick))
	var err error
	jsonw.EachMember(b, func(kr, vr []byte) bool {
		var k string
		if inner, ok := plainString(kr); ok {
			if _, want := s.pickSet[string(inner)]; !want {
				return true
			}
			k = string(inner)
		} else {
			if err = json.Unmarshal(kr, &k); err != nil {
				return false
			}
			if _, want := s.pickSet[k]; !want {
				return true
			}
		}
		var v any
		if v, err = decodeValue(vr); err != nil {
			return false
		}
		out[k] = v
		return true
	})
	return out, err
}

// plainString returns the content of the JSON string literal q when it
// decodes to itself: no escapes, no control characters, valid UTF-8.
func plainString(q []byte) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, false
	}
	inner := q[1 : len(q)-1]
	ascii := true
	for _, c := range inner {
		if c < 0x20 || c == '\\' || c == '"' {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}

// keyEqual reports whether the JSON string literal kr decodes to key.
func keyEqual(kr []byte, key string) bool {
	if inner, ok := plainString(kr); ok {
		return string(inner) == key
	}
	var k string
	return json.Unmarshal(kr, &k) == nil && k == key
}

// decodeValue is decodeJSON with fast paths for scalars.
func decodeValue(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, errors.New("empty value")
	}
	switch c := b[0]; {
	case c == '"':
		if inner, ok := plainString(b); ok {
			return string(inner), nil
		}
	case c == 't' && string(b) == "true":
		return true, nil
	case c == 'f' && string(b) == "false":
		return false, nil
	case c == 'n' && string(b) == "null":
		return nil, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if end, ok := jsonw.SkipNumber(b, 0); ok && end == len(b) {
			return json.Number(b), nil
		}
	}
	return decodeJSON(b)
}

func arrayLen(b []byte) int {
	n := 0
	jsonw.EachElement(b, func(int, []byte) bool { n++; return true })
	return n
}
