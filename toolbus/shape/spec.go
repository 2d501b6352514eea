package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// MissingMode says what a spec answers when the data at its path is
// missing and it has no default.
type MissingMode string

// The missing modes.
const (
	ModeError     MissingMode = "error"
	ModeNull      MissingMode = "null"
	ModeUndefined MissingMode = "undefined"
	ModeEmpty     MissingMode = "empty"
)

// Spec is a parsed output spec. The nil *Spec is valid and shapes nothing.
// A Spec is immutable after Parse and safe for concurrent use.
type Spec struct {
	path    Path
	pick    []string // nil: no pick; empty: keep no key
	omit    []string
	pickSet map[string]struct{}
	omitSet map[string]struct{}
	sub     *Spec // map
	missing MissingMode
	def     any
	hasDef  bool
	// mayOmit: Apply can answer Result.Omit (missing "undefined" without
	// default here, or in a map spec that may be applied to a non-array).
	mayOmit bool
}

// SpecError is a spec that does not parse. Field names the offending part,
// relative to the spec: "path", "pick[2]", "map.missing", "" for the spec
// itself. The tool bus reports it as a ContractError SchemaInvalid.
type SpecError struct {
	Field string
	Msg   string
	Err   error // the cause, e.g. a *PathError; may be nil
}

func (e *SpecError) Error() string {
	if e.Field == "" {
		return "invalid output spec: " + e.Msg
	}
	return "invalid output spec: " + e.Field + ": " + e.Msg
}

// Unwrap returns the cause.
func (e *SpecError) Unwrap() error { return e.Err }

// SpecKeys lists the keys a spec may have, for help texts and messages.
const SpecKeys = "path, pick, omit, map, missing, default"

// specKey returns the index of a spec key, or -1.
func specKey(k string) int {
	switch k {
	case "path":
		return 0
	case "pick":
		return 1
	case "omit":
		return 2
	case "map":
		return 3
	case "missing":
		return 4
	case "default":
		return 5
	}
	return -1
}

// Limits on what a spec may ask for, and so on how much work shaping does.
// A default may be repeated once per array element inside map, so
// maxDefaultBytes bounds how much a spec can amplify the result.
const (
	maxPathBytes    = 1024
	maxPathSegments = 64
	maxKeys         = 256 // per pick or omit list
	maxKeyBytes     = 256
	maxMapDepth     = 8 // {"map":{"map":{}}} has depth 2
	maxDefaultBytes = 4096
	maxSpecBytes    = 64 << 10
)

// Parse parses a spec: a JSON object with only the keys path, pick, omit,
// map, missing and default (exact and case-sensitive, each at most once).
// path is a string ([PathSyntax]); pick and omit are arrays of key strings;
// map is a nested spec; missing is "error" (the default), "null",
// "undefined" or "empty"; default is any JSON value. A null value for path,
// pick, omit, map or missing means "not set"; a null default is a default.
// Empty raw text or null yields the nil Spec. Errors are *[SpecError].
func Parse(raw json.RawMessage) (*Spec, error) {
	raw = jsonw.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > maxSpecBytes {
		return nil, &SpecError{Msg: fmt.Sprintf("longer than %d bytes", maxSpecBytes)}
	}
	return parseSpec(raw, "", 0)
}

func parseSpec(raw []byte, prefix string, depth int) (*Spec, error) {
	fail := func(field, msg string, err error) error {
		return &SpecError{Field: prefix + field, Msg: msg, Err: err}
	}
	whole := strings.TrimSuffix(prefix, ".")
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, &SpecError{Field: whole, Msg: "not valid JSON", Err: err}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &SpecError{Field: whole, Msg: "must be an object with keys " + SpecKeys}
	}
	s := &Spec{missing: ModeError}
	var seen [6]bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &SpecError{Field: whole, Msg: "not valid JSON", Err: err}
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, &SpecError{Field: whole, Msg: "not valid JSON", Err: err}
		}
		k := specKey(key)
		if k < 0 {
			msg := "unknown key; allowed: " + SpecKeys
			if specKey(strings.ToLower(key)) >= 0 {
				msg = fmt.Sprintf("unknown key (keys are case-sensitive: did you mean %q?)", strings.ToLower(key))
			}
			return nil, fail(text.Cut(key, 64), msg, nil)
		}
		if seen[k] {
			return nil, fail(key, "duplicate key", nil)
		}
		seen[k] = true
		isNull := string(jsonw.TrimSpace(val)) == "null"
		switch key {
		case "path":
			if isNull {
				continue
			}
			var p string
			if err := json.Unmarshal(val, &p); err != nil {
				return nil, fail(key, "must be a string", nil)
			}
			s.path, err = ParsePath(p)
			if err != nil {
				return nil, fail(key, err.Error(), err)
			}
		case "pick", "omit":
			if isNull {
				continue
			}
			keys, set, err := parseKeys(val, prefix+key)
			if err != nil {
				return nil, err
			}
			if key == "pick" {
				s.pick, s.pickSet = keys, set
			} else {
				s.omit, s.omitSet = keys, set
			}
		case "map":
			if isNull {
				continue
			}
			if depth+1 > maxMapDepth {
				return nil, fail(key, fmt.Sprintf("map specs nest deeper than %d", maxMapDepth), nil)
			}
			s.sub, err = parseSpec(val, prefix+"map.", depth+1)
			if err != nil {
				return nil, err
			}
		case "missing":
			if isNull {
				continue
			}
			var m string
			_ = json.Unmarshal(val, &m)
			switch mm := MissingMode(m); mm {
			case ModeError, ModeNull, ModeUndefined, ModeEmpty:
				s.missing = mm
			default:
				return nil, fail(key, `must be one of "error", "null", "undefined", "empty"`, nil)
			}
		case "default":
			if len(val) > maxDefaultBytes {
				return nil, fail(key, fmt.Sprintf("longer than %d bytes of JSON", maxDefaultBytes), nil)
			}
			v, err := decodeJSON(val)
			if err != nil {
				return nil, fail(key, "not valid JSON", err)
			}
			s.def, s.hasDef = v, true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, &SpecError{Field: whole, Msg: "not valid JSON", Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &SpecError{Field: whole, Msg: "unexpected data after the spec"}
	}
	s.mayOmit = (s.missing == ModeUndefined && !s.hasDef) || (s.sub != nil && s.sub.mayOmit)
	return s, nil
}

// parseKeys parses a pick or omit list: an array of at most MaxKeys
// strings of at most MaxKeyBytes each. Duplicates are dropped.
func parseKeys(raw []byte, field string) ([]string, map[string]struct{}, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, &SpecError{Field: field, Msg: "must be an array of key strings"}
	}
	if len(items) > maxKeys {
		return nil, nil, &SpecError{Field: field, Msg: fmt.Sprintf("more than %d keys", maxKeys)}
	}
	keys := make([]string, 0, len(items))
	set := make(map[string]struct{}, len(items))
	for i, it := range items {
		var k string
		if it = jsonw.TrimSpace(it); len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &k) != nil {
			return nil, nil, &SpecError{Field: fmt.Sprintf("%s[%d]", field, i), Msg: "must be a string"}
		}
		if len(k) > maxKeyBytes {
			return nil, nil, &SpecError{Field: fmt.Sprintf("%s[%d]", field, i), Msg: fmt.Sprintf("longer than %d bytes", maxKeyBytes)}
		}
		if _, dup := set[k]; dup {
			continue
		}
		set[k] = struct{}{}
		keys = append(keys, k)
	}
	return keys, set, nil
}

// decodeJSON decodes one JSON value with UseNumber, as the tool bus does.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

// IsIdentity reports whether s changes nothing (nil, or no path, pick,
// omit or map), so a caller can skip shaping altogether.
func (s *Spec) IsIdentity() bool {
	return s == nil || (len(s.path.segs) == 0 && s.pick == nil && s.omit == nil && s.sub == nil)
}
