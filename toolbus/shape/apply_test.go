package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
)

// doc is the document most cases shape.
const doc = `{
  "rows": [
    {"id": 1, "name": "a", "tags": ["x", "y"], "secret": "s1"},
    {"id": 2, "name": "b", "secret": "s2"},
    {"name": "c"}
  ],
  "meta": {"count": 3, "key.with.dots": "kd", "0": "zero", "x": "ex", "it's": "q", "a\"b": "quoted", "é": "accent"},
  "n": null,
  "s": "str",
  "f": 1.50,
  "list": [10, 20, 30],
  "groups": [
    {"items": [{"name": "g0i0"}, {"name": "g0i1"}]},
    {"items": [{"name": "g1i0"}, {"nom": "g1i1"}]},
    {"items": []}
  ],
  "now": {"window": {"app": "Firefox", "title": "Inbox", "pid": 42}, "afk": {"status": "not-afk"}}
}`

type applyCase struct {
	name string
	doc  string // defaults to doc
	spec string
	want string // the shaped value as JSON; unused with omit or err
	omit bool
	err  string // the exact MissingError message
	at   string // MissingError.Path, checked with err
}

func TestApplyPath(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "no spec", spec: `null`, doc: `{"a":1}`, want: `{"a":1}`},
		{name: "empty spec", spec: `{}`, doc: `[1,2]`, want: `[1,2]`},
		{name: "empty path", spec: `{"path":""}`, doc: `"x"`, want: `"x"`},
		{name: "key", spec: `{"path":"s"}`, want: `"str"`},
		{name: "nested key", spec: `{"path":"now.window.app"}`, want: `"Firefox"`},
		{name: "number kept exact", spec: `{"path":"f"}`, want: `1.50`},
		{name: "index", spec: `{"path":"rows[1].name"}`, want: `"b"`},
		{name: "dot index", spec: `{"path":"rows.1.name"}`, want: `"b"`},
		{name: "last", spec: `{"path":"list[-1]"}`, want: `30`},
		{name: "first from the end", spec: `{"path":"list[-3]"}`, want: `10`},
		{name: "dotted key", spec: `{"path":"meta[\"key.with.dots\"]"}`, want: `"kd"`},
		{name: "single-quoted key", spec: `{"path":"meta['x']"}`, want: `"ex"`},
		{name: "escaped quote", spec: `{"path":"meta['it\\'s']"}`, want: `"q"`},
		{name: "json escape", spec: `{"path":"meta[\"a\\\"b\"]"}`, want: `"quoted"`},
		{name: "unicode escape", spec: `{"path":"meta[\"\\u00e9\"]"}`, want: `"accent"`},
		{name: "integer is a key on objects", spec: `{"path":"meta.0"}`, want: `"zero"`},
		{name: "bracket integer is a key on objects", spec: `{"path":"meta[0]"}`, want: `"zero"`},
		{name: "quoted integer is a key", spec: `{"path":"meta[\"0\"]"}`, want: `"zero"`},
		{name: "present null is a value", spec: `{"path":"n"}`, want: `null`},
		{name: "top-level array", doc: `[[1,2],[3]]`, spec: `{"path":"[0][-1]"}`, want: `2`},
		{name: "absent key", spec: `{"path":"now.screen.size"}`,
			err: "missing data at now.screen.size: now.screen: no such key", at: "now.screen.size"},
		{name: "last key absent", spec: `{"path":"now.window.url"}`,
			err: "missing data at now.window.url: no such key", at: "now.window.url"},
		{name: "index out of range", spec: `{"path":"rows[3].id"}`,
			err: "missing data at rows[3].id: rows[3]: index out of range (array length 3)", at: "rows[3].id"},
		{name: "negative out of range", spec: `{"path":"list[-4]"}`,
			err: "missing data at list[-4]: index out of range (array length 3)", at: "list[-4]"},
		{name: "quoted integer on an array", spec: `{"path":"list[\"0\"]"}`,
			err: `missing data at list["0"]: the parent is an array, which has no keys`, at: `list["0"]`},
		{name: "key on an array", spec: `{"path":"rows.id"}`,
			err: "missing data at rows.id: the parent is an array, which has no keys", at: "rows.id"},
		{name: "step into a string", spec: `{"path":"s.len"}`,
			err: "missing data at s.len: the parent is a string, not an object or array", at: "s.len"},
		{name: "step into null", spec: `{"path":"n.x"}`,
			err: "missing data at n.x: the parent is null, not an object or array", at: "n.x"},
		{name: "step into a number", spec: `{"path":"f[0]"}`,
			err: "missing data at f[0]: the parent is a number, not an object or array", at: "f[0]"},
		{name: "step into a boolean", doc: `{"b":true}`, spec: `{"path":"b.c"}`,
			err: "missing data at b.c: the parent is a boolean, not an object or array", at: "b.c"},
		{name: "normalised in the error", spec: `{"path":"meta['x'].y"}`,
			err: "missing data at meta.x.y: the parent is a string, not an object or array", at: "meta.x.y"},
	})
}

func TestApplyPickOmit(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "pick", spec: `{"path":"now.window","pick":["app","title"]}`, want: `{"app":"Firefox","title":"Inbox"}`},
		{name: "picking an absent key is not missing", spec: `{"path":"now.window","pick":["app","url"]}`, want: `{"app":"Firefox"}`},
		{name: "pick nothing", spec: `{"path":"now.window","pick":[]}`, want: `{}`},
		{name: "pick keys are literal", doc: `{"a.b":1,"a":{"b":2}}`, spec: `{"pick":["a.b"]}`, want: `{"a.b":1}`},
		{name: "pick on array of objects", spec: `{"path":"rows","pick":["id"]}`, want: `[{"id":1},{"id":2},{}]`},
		{name: "pick leaves non-objects", doc: `[{"a":1,"b":2},3,null,[{"a":1,"b":2}],"s"]`, spec: `{"pick":["a"]}`,
			want: `[{"a":1},3,null,[{"a":1,"b":2}],"s"]`},
		{name: "pick on a scalar", spec: `{"path":"s","pick":["a"]}`, want: `"str"`},
		{name: "pick on null", spec: `{"path":"n","pick":["a"]}`, want: `null`},
		{name: "omit", spec: `{"path":"now.window","omit":["pid"]}`, want: `{"app":"Firefox","title":"Inbox"}`},
		{name: "omit an absent key", spec: `{"path":"now.window","omit":["url"]}`, want: `{"app":"Firefox","title":"Inbox","pid":42}`},
		{name: "omit on array of objects", spec: `{"path":"rows","omit":["secret","tags"]}`,
			want: `[{"id":1,"name":"a"},{"id":2,"name":"b"},{"name":"c"}]`},
		{name: "omit leaves non-objects", doc: `[{"a":1,"b":2},3,null]`, spec: `{"omit":["a"]}`, want: `[{"b":2},3,null]`},
		{name: "omit on a scalar", spec: `{"path":"f","omit":["a"]}`, want: `1.50`},
		{name: "pick then omit", spec: `{"path":"now.window","pick":["app","title"],"omit":["title"]}`, want: `{"app":"Firefox"}`},
		{name: "pick and omit the same key", spec: `{"path":"now.window","pick":["app"],"omit":["app"]}`, want: `{}`},
	})
}

func TestApplyMap(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "map path", spec: `{"path":"list","map":{}}`, want: `[10,20,30]`},
		{name: "map each element", spec: `{"path":"rows","map":{"path":"name"}}`, want: `["a","b","c"]`},
		{name: "map pick", spec: `{"path":"rows","map":{"pick":["name"]}}`, want: `[{"name":"a"},{"name":"b"},{"name":"c"}]`},
		{name: "map on the whole array", doc: `[{"id":1},{"id":2}]`, spec: `{"map":{"path":"id"}}`, want: `[1,2]`},
		{name: "map on an object applies to it", spec: `{"path":"now","map":{"path":"window","pick":["app"]}}`, want: `{"app":"Firefox"}`},
		{name: "map on a scalar applies to it", spec: `{"path":"s","map":{"pick":["a"]}}`, want: `"str"`},
		{name: "map on null applies to it", spec: `{"path":"n","map":{"path":"x","missing":"null"}}`, want: `null`},
		{name: "map of an empty array", spec: `{"path":"groups[2].items","map":{"path":"name"}}`, want: `[]`},
		{name: "element missing: error", spec: `{"path":"rows","map":{"path":"id"}}`,
			err: "missing data at rows[2].id: no such key", at: "rows[2].id"},
		{name: "element missing: null", spec: `{"path":"rows","map":{"path":"id","missing":"null"}}`, want: `[1,2,null]`},
		{name: "element missing: undefined drops it", spec: `{"path":"rows","map":{"path":"id","missing":"undefined"}}`, want: `[1,2]`},
		{name: "element missing: empty", spec: `{"path":"rows","map":{"path":"tags","missing":"empty","map":{}}}`, want: `[["x","y"],[],[]]`},
		{name: "element missing: default", spec: `{"path":"rows","map":{"path":"id","default":0}}`, want: `[1,2,0]`},
		{name: "outer missing mode does not apply to elements", spec: `{"path":"rows","missing":"null","map":{"path":"id"}}`,
			err: "missing data at rows[2].id: no such key", at: "rows[2].id"},
		{name: "element index in a deep error", spec: `{"path":"rows","map":{"path":"tags[1]"}}`,
			err: "missing data at rows[1].tags[1]: rows[1].tags: no such key", at: "rows[1].tags[1]"},
		{name: "error path from the root", doc: `[{"id":1},{}]`, spec: `{"map":{"path":"id"}}`,
			err: "missing data at [1].id: no such key", at: "[1].id"},
		{name: "error path through an object map", spec: `{"path":"now","map":{"path":"screen"}}`,
			err: "missing data at now.screen: no such key", at: "now.screen"},
		{name: "map of map", spec: `{"path":"groups","map":{"path":"items","map":{"path":"name","missing":"null"}}}`,
			want: `[["g0i0","g0i1"],["g1i0",null],[]]`},
		{name: "map of map, undefined drops inner elements", spec: `{"path":"groups","map":{"path":"items","map":{"path":"name","missing":"undefined"}}}`,
			want: `[["g0i0","g0i1"],["g1i0"],[]]`},
		{name: "map of map error path", spec: `{"path":"groups","map":{"path":"items","map":{"path":"name"}}}`,
			err: "missing data at groups[1].items[1].name: no such key", at: "groups[1].items[1].name"},
		{name: "map of map, mid-level missing", doc: `{"g":[{"items":[{"n":1}]},{}]}`,
			spec: `{"path":"g","map":{"path":"items","missing":"undefined","map":{"path":"n"}}}`, want: `[[1]]`},
		{name: "map to undefined on a non-array omits the result", spec: `{"path":"now","map":{"path":"screen","missing":"undefined"}}`, omit: true},
	})
}

func TestApplyOrder(t *testing.T) {
	// path -> pick -> omit -> map: each stage sees the output of the one
	// before, so a later stage cannot reach what an earlier one dropped.
	runApplyCases(t, []applyCase{
		{name: "all stages", spec: `{"path":"rows","pick":["id","tags"],"omit":["id"],"map":{"path":"tags[0]","missing":"null"}}`,
			want: `["x",null,null]`},
		{name: "map runs after pick", spec: `{"path":"rows","pick":["id"],"map":{"path":"name"}}`,
			err: "missing data at rows[0].name: no such key", at: "rows[0].name"},
		{name: "map runs after omit", spec: `{"path":"rows","omit":["id"],"map":{"path":"id"}}`,
			err: "missing data at rows[0].id: no such key", at: "rows[0].id"},
		{name: "omit runs after pick", spec: `{"path":"now.window","pick":["pid","app"],"omit":["pid"]}`, want: `{"app":"Firefox"}`},
		{name: "pick runs after path", spec: `{"path":"now","pick":["window"]}`, want: `{"window":{"app":"Firefox","title":"Inbox","pid":42}}`},
	})
}

func TestApplyMissingModes(t *testing.T) {
	const gone = `"path":"now.screen"`
	runApplyCases(t, []applyCase{
		{name: "error by default", spec: `{` + gone + `}`, err: "missing data at now.screen: no such key", at: "now.screen"},
		{name: "error", spec: `{` + gone + `,"missing":"error"}`, err: "missing data at now.screen: no such key", at: "now.screen"},
		{name: "null", spec: `{` + gone + `,"missing":"null"}`, want: `null`},
		{name: "undefined", spec: `{` + gone + `,"missing":"undefined"}`, omit: true},
		{name: "empty alone is null", spec: `{` + gone + `,"missing":"empty"}`, want: `null`},
		{name: "empty with pick", spec: `{` + gone + `,"missing":"empty","pick":["a"]}`, want: `{}`},
		{name: "empty with omit", spec: `{` + gone + `,"missing":"empty","omit":["a"]}`, want: `{}`},
		{name: "empty with map", spec: `{` + gone + `,"missing":"empty","map":{"path":"a"}}`, want: `[]`},
		{name: "empty with map and pick", spec: `{` + gone + `,"missing":"empty","pick":["a"],"map":{}}`, want: `[]`},
		{name: "null is final", spec: `{` + gone + `,"missing":"null","map":{"path":"a"}}`, want: `null`},

		{name: "default with error", spec: `{` + gone + `,"default":"none"}`, want: `"none"`},
		{name: "default with null", spec: `{` + gone + `,"missing":"null","default":5}`, want: `5`},
		{name: "default with undefined", spec: `{` + gone + `,"missing":"undefined","default":[]}`, want: `[]`},
		{name: "default with empty", spec: `{` + gone + `,"missing":"empty","pick":["a"],"default":{"a":1}}`, want: `{"a":1}`},
		{name: "null default", spec: `{` + gone + `,"default":null}`, want: `null`},
		{name: "default is picked", spec: `{` + gone + `,"pick":["app"],"default":{"app":"none","secret":"x"}}`, want: `{"app":"none"}`},
		{name: "default is omitted from", spec: `{` + gone + `,"omit":["secret"],"default":{"app":"none","secret":"x"}}`, want: `{"app":"none"}`},
		{name: "default is mapped", spec: `{` + gone + `,"default":[{"id":1,"s":2}],"map":{"pick":["id"]}}`, want: `[{"id":1}]`},
		{name: "default keeps numbers exact", spec: `{` + gone + `,"default":1.0e2}`, want: `1.0e2`},
		{name: "present data ignores default", spec: `{"path":"s","default":"none"}`, want: `"str"`},
		{name: "present null ignores default", spec: `{"path":"n","default":"none"}`, want: `null`},
		{name: "no path, nothing missing", spec: `{"missing":"undefined","pick":["s"]}`, want: `{"s":"str"}`},
	})
}

func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == "" {
				tc.doc = doc
			}
			s, err := Parse(json.RawMessage(tc.spec))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tc.spec, err)
			}
			raw := []byte(tc.doc)
			r, err := s.ApplyRaw(raw)
			checkResult(t, "ApplyRaw", tc, r, err)
			if string(raw) != tc.doc {
				t.Errorf("ApplyRaw mutated its input")
			}
		})
	}
}

func checkResult(t *testing.T, fn string, tc applyCase, r Result, err error) {
	t.Helper()
	if tc.err != "" {
		var me *MissingError
		if !errors.As(err, &me) {
			t.Fatalf("%s = %v, %v; want a *MissingError", fn, jsonOf(t, r.Value), err)
		}
		if err.Error() != tc.err || me.Path != tc.at {
			t.Errorf("%s error = %q (Path %q), want %q (Path %q)", fn, err.Error(), me.Path, tc.err, tc.at)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	if r.Omit != tc.omit {
		t.Fatalf("%s Omit = %v, want %v", fn, r.Omit, tc.omit)
	}
	if tc.omit {
		if r.Value != nil {
			t.Errorf("%s: Omit with a value %s", fn, jsonOf(t, r.Value))
		}
		return
	}
	if got, want := jsonOf(t, r.Value), jsonOf(t, mustDecode(t, tc.want)); got != want {
		t.Errorf("%s = %s, want %s", fn, got, want)
	}
}

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func TestApplyRawDuplicateKeys(t *testing.T) {
	// encoding/json keeps the last of duplicate keys; ApplyRaw agrees.
	const d = `{"a":{"k":1},"a":{"k":2,"j":3}}`
	for spec, want := range map[string]string{`{"path":"a.k"}`: `2`, `{"pick":["a"]}`: `{"a":{"j":3,"k":2}}`, `{"path":"a","pick":["k"]}`: `{"k":2}`} {
		s, _ := Parse(json.RawMessage(spec))
		r, err := s.ApplyRaw([]byte(d))
		if err != nil || jsonOf(t, r.Value) != want {
			t.Errorf("%s: ApplyRaw = %s %v, want %s", spec, jsonOf(t, r.Value), err, want)
		}
	}
}

func TestApplyRawEscapedKeysAndValues(t *testing.T) {
	const d = ` { "k\u0065y" : { "v" : "line\nbreak \u00e9" , "n" : -0.5e+3 } , "\ud83d\ude00" : [ true , false , null ] } `
	cases := map[string]string{
		`{"path":"key.v"}`:         `"line\nbreak é"`,
		`{"path":"key.n"}`:         `-0.5e+3`,
		`{"path":"😀[-1]"}`:         `null`,
		`{"path":"😀[0]"}`:          `true`,
		`{"pick":["key"]}`:         `{"key":{"v":"line\nbreak é","n":-0.5e+3}}`,
		`{"path":"key","pick":[]}`: `{}`,
	}
	for spec, want := range cases {
		s, err := Parse(json.RawMessage(spec))
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.ApplyRaw([]byte(d))
		if err != nil {
			t.Fatalf("ApplyRaw %s: %v", spec, err)
		}
		if got, w := jsonOf(t, r.Value), jsonOf(t, mustDecode(t, want)); got != w {
			t.Errorf("ApplyRaw %s = %s, want %s", spec, got, w)
		}
	}
}

func TestApplyRawInvalid(t *testing.T) {
	s, _ := Parse(json.RawMessage(`{"path":"a"}`))
	for _, d := range []string{``, `{`, `{"a":1}x`, `{"a":}`, `{"a":01}`, "{\"a\":\"\x01\"}", `[1,]`} {
		if _, err := s.ApplyRaw([]byte(d)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("ApplyRaw(%q) = %v, want ErrInvalidJSON", d, err)
		}
	}
	var nilSpec *Spec
	if _, err := nilSpec.ApplyRaw([]byte(`{`)); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("nil spec: invalid JSON must still be refused, got %v", err)
	}
	r, err := nilSpec.ApplyRaw([]byte(` {"a":[1]} `))
	if err != nil || jsonOf(t, r.Value) != `{"a":[1]}` {
		t.Errorf("nil spec ApplyRaw = %v, %v", r.Value, err)
	}
}

func TestApplyNilSpec(t *testing.T) {
	var s *Spec
	r, err := s.ApplyRaw([]byte(doc))
	if err != nil || r.Omit || !reflect.DeepEqual(r.Value, mustDecode(t, doc)) {
		t.Errorf("nil spec ApplyRaw = %+v, %v", r, err)
	}
}

func TestApplyConcurrent(t *testing.T) {
	s, err := Parse(json.RawMessage(`{"path":"rows","map":{"path":"id","missing":"undefined"},"default":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(doc)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				r, err := s.ApplyRaw(raw)
				if err != nil {
					errs <- err.Error()
					return
				}
				if b, _ := json.Marshal(r.Value); !bytes.Equal(b, []byte(`[1,2]`)) {
					errs <- string(b)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent ApplyRaw: %s", e)
	}
}
