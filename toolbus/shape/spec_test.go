package shape

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	keys := func(n, size int) string {
		ks := make([]string, n)
		for i := range ks {
			ks[i] = fmt.Sprintf("%q", fmt.Sprintf("%0*d", size, i))
		}
		return "[" + strings.Join(ks, ",") + "]"
	}
	nested := func(depth int) string {
		return strings.Repeat(`{"map":`, depth) + "{}" + strings.Repeat("}", depth)
	}
	tests := []struct {
		name, spec, field, msg string
	}{
		{"array", `[]`, "", "must be an object with keys path, pick, omit, map, missing, default"},
		{"string shorthand", `"a.b"`, "", "must be an object"},
		{"number", `5`, "", "must be an object"},
		{"bad json", `{"path":`, "", "not valid JSON"},
		{"trailing data", `{} {}`, "", "unexpected data after the spec"},
		{"unknown key", `{"paths":"a"}`, "paths", "unknown key; allowed: path, pick, omit, map, missing, default"},
		{"case-sensitive", `{"Path":"a"}`, "Path", `did you mean "path"?`},
		{"long unknown key clipped", `{"` + strings.Repeat("k", 100) + `":1}`, strings.Repeat("k", 61) + "…", "unknown key"},
		{"duplicate", `{"path":"a","path":"b"}`, "path", "duplicate key"},
		{"path not string", `{"path":1}`, "path", "must be a string"},
		{"path syntax", `{"path":"a..b"}`, "path", "invalid path at byte 2: empty segment"},
		{"path too long", `{"path":"` + strings.Repeat("a", 1025) + `"}`, "path", "longer than 1024 bytes"},
		{"pick not array", `{"pick":"a"}`, "pick", "must be an array of key strings"},
		{"pick element", `{"pick":["a",1]}`, "pick[1]", "must be a string"},
		{"omit element", `{"omit":[null]}`, "omit[0]", "must be a string"},
		{"too many keys", `{"pick":` + keys(257, 3) + `}`, "pick", "more than 256 keys"},
		{"key too long", `{"omit":` + keys(1, 257) + `}`, "omit[0]", "longer than 256 bytes"},
		{"map not object", `{"map":5}`, "map", "must be an object"},
		{"nested field", `{"map":{"map":{"missing":"maybe"}}}`, "map.map.missing", `must be one of "error", "null", "undefined", "empty"`},
		{"nested path", `{"map":{"path":"a["}}`, "map.path", "unclosed '['"},
		{"nested unknown", `{"map":{"pik":[]}}`, "map.pik", "unknown key"},
		{"too deep", nested(9), strings.Repeat("map.", 8) + "map", "map specs nest deeper than 8"},
		{"missing case", `{"missing":"Error"}`, "missing", "must be one of"},
		{"missing type", `{"missing":true}`, "missing", "must be one of"},
		{"default too big", `{"default":"` + strings.Repeat("x", 4095) + `"}`, "default", "longer than 4096 bytes"},
		{"spec too big", `{"pick":["` + strings.Repeat("x", 64<<10) + `"]}`, "", "longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(json.RawMessage(tt.spec))
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v, %v; want a *SpecError", s, err)
			}
			if se.Field != tt.field || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("Parse = field %q msg %q; want field %q msg containing %q", se.Field, se.Msg, tt.field, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "invalid output spec: ") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestParsePathErrorText(t *testing.T) {
	_, err := Parse(json.RawMessage(`{"map":{"path":"rows[x]"}}`))
	if got, want := err.Error(), "invalid output spec: map.path: invalid path at byte 5: a bracket holds an integer index without leading zeros or a quoted key"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, spec string
		nilSpec    bool
		identity   bool
		missing    MissingMode
	}{
		{"empty text", ``, true, true, ModeError},
		{"spaces", " \n", true, true, ModeError},
		{"null", `null`, true, true, ModeError},
		{"empty object", `{}`, false, true, ModeError},
		{"nulls mean unset", `{"path":null,"pick":null,"omit":null,"map":null,"missing":null}`, false, true, ModeError},
		{"spaced nulls", "{ \"path\" : null ,\n\"map\":\tnull }", false, true, ModeError},
		{"only missing", `{"missing":"null"}`, false, true, ModeNull},
		{"only default", `{"default":null}`, false, true, ModeError},
		{"empty path", `{"path":""}`, false, true, ModeError},
		{"path", `{"path":"a"}`, false, false, ModeError},
		{"pick empty", `{"pick":[]}`, false, false, ModeError},
		{"omit", `{"omit":["a"],"missing":"undefined"}`, false, false, ModeUndefined},
		{"map", `{"map":{}}`, false, false, ModeError},
		{"8 nested maps", strings.Repeat(`{"map":`, 8) + "{}" + strings.Repeat("}", 8), false, false, ModeError},
		{"every key", `{"path":"a","pick":["b"],"omit":["c"],"map":{"path":"d"},"missing":"empty","default":[1]}`, false, false, ModeEmpty},
		{"default at the limit", `{"default":"` + strings.Repeat("x", 4094) + `"}`, false, true, ModeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(json.RawMessage(tt.spec))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if (s == nil) != tt.nilSpec {
				t.Errorf("nil spec = %v, want %v", s == nil, tt.nilSpec)
			}
			if s.IsIdentity() != tt.identity {
				t.Errorf("IsIdentity = %v, want %v", s.IsIdentity(), tt.identity)
			}
			if m := missingOf(s); m != tt.missing {
				t.Errorf("missing = %q, want %q", m, tt.missing)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	keys := `"k"` + strings.Repeat(`,"k"`, maxKeys)
	for _, tt := range []struct{ spec, field string }{
		{`{"pick":[` + keys + `]}`, "pick"},
		{strings.Repeat(`{"map":`, maxMapDepth+1) + `{}` + strings.Repeat(`}`, maxMapDepth+1), strings.TrimSuffix(strings.Repeat("map.", maxMapDepth+1), ".")},
		{`{"default":"` + strings.Repeat("a", maxDefaultBytes) + `"}`, "default"},
		{`{"default":"` + strings.Repeat(" ", maxSpecBytes) + `"}`, ""},
	} {
		_, err := Parse(json.RawMessage(tt.spec))
		var se *SpecError
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("Parse(%.80s) = %.200v, want a SpecError on %q", tt.spec, err, tt.field)
		}
	}
	if _, err := Parse(json.RawMessage(strings.Repeat(`{"map":`, maxMapDepth) + `{"pick":[` + keys[4:] + `]}` + strings.Repeat(`}`, maxMapDepth))); err != nil {
		t.Errorf("within the limits: %v", err)
	}
}

func TestParseDedupesKeys(t *testing.T) {
	s, err := Parse(json.RawMessage(`{"pick":["a","b","a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.pick) != 2 {
		t.Errorf("pick = %q, want duplicates dropped", s.pick)
	}
}

func TestSpecPath(t *testing.T) {
	s, err := Parse(json.RawMessage(`{"path":"rows.0['id']"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.path.String(); got != "rows[0].id" {
		t.Errorf("path = %q", got)
	}
}

// missingOf is s's missing mode (ModeError for the nil Spec).
func missingOf(s *Spec) MissingMode {
	if s == nil {
		return ModeError
	}
	return s.missing
}
