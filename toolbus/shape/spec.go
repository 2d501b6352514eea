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

// Spec is a parsed output spec; the nil *Spec shapes nothing.
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
	mayOmit bool // the spec may answer Result.Omit
}

// SpecError is a spec that does not parse. Field names the offending part:
// "path", "pick[2]", "map.missing", "" for the spec itself.
type SpecError struct {
	Field, Msg string
}

func (e *SpecError) Error() string {
	if e.Field == "" {
		return "invalid output spec: " + e.Msg
	}
	return "invalid output spec: " + e.Field + ": " + e.Msg
}

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

// Parse parses a spec: a JSON object with only the keys path (a string,
// [PathSyntax]), pick and omit (arrays of keys), map (a nested spec),
// missing ("error", "null", "undefined", "empty") and default (any value),
// each at most once. A null means "not set", except for default. Empty
// text or null yields the nil Spec. Errors are *[SpecError].
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
	fail := func(field, msg string) error { return &SpecError{Field: prefix + field, Msg: msg} }
	whole := strings.TrimSuffix(prefix, ".")
	invalid := &SpecError{Field: whole, Msg: "not valid JSON"}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, invalid
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &SpecError{Field: whole, Msg: "must be an object with keys " + SpecKeys}
	}
	s := &Spec{missing: ModeError}
	var seen [6]bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, invalid
		}
		k := specKey(key)
		if k < 0 {
			msg := "unknown key; allowed: " + SpecKeys
			if specKey(strings.ToLower(key)) >= 0 {
				msg = fmt.Sprintf("unknown key (keys are case-sensitive: did you mean %q?)", strings.ToLower(key))
			}
			return nil, fail(text.Cut(key, 64), msg)
		}
		if seen[k] {
			return nil, fail(key, "duplicate key")
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
				return nil, fail(key, "must be a string")
			}
			s.path, err = ParsePath(p)
			if err != nil {
				return nil, fail(key, err.Error())
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
				return nil, fail(key, fmt.Sprintf("map specs nest deeper than %d", maxMapDepth))
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
				return nil, fail(key, `must be one of "error", "null", "undefined", "empty"`)
			}
		case "default":
			if len(val) > maxDefaultBytes {
				return nil, fail(key, fmt.Sprintf("longer than %d bytes of JSON", maxDefaultBytes))
			}
			v, err := decodeJSON(val)
			if err != nil {
				return nil, fail(key, "not valid JSON")
			}
			s.def, s.hasDef = v, true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, invalid
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &SpecError{Field: whole, Msg: "unexpected data after the spec"}
	}
	s.mayOmit = (s.missing == ModeUndefined && !s.hasDef) || (s.sub != nil && s.sub.mayOmit)
	return s, nil
}

// parseKeys parses a pick or omit list, dropping duplicates.
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

// IsIdentity reports whether s changes nothing.
func (s *Spec) IsIdentity() bool {
	return s == nil || (len(s.path.segs) == 0 && s.pick == nil && s.omit == nil && s.sub == nil)
}
