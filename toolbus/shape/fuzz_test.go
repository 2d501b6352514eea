package shape

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{
		"", "a", "a.b", "rows[0].id", "rows[-1]", "rows.0", `["key.with.dots"]`, `['x']`, `['it\'s']`,
		`["\u00e9\ud83d\ude00\ud800"]`, `["<a b>"]`, `[""]`, `["0"]`, "a.007", "a.-0", "a[0][1]",
		"a..b", "a[", `["a`, "\xff", "é.ü", `["\/\b\f\n\r\t"]`, "a[99999999999999999999]",
	} {
		f.Add(s)
	}
	roomy := Limits{MaxPathBytes: 1 << 20, MaxPathSegments: 1 << 10}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(s) {
				t.Fatalf("ParsePath(%q) = %v, want a *PathError inside the input", s, err)
			}
			return
		}
		printed := p.String()
		// Normal form may be longer than the input (quoting), so reparse
		// with room to spare.
		back, err := roomy.ParsePath(printed)
		if err != nil {
			t.Fatalf("ParsePath(%q).String() = %q, which does not parse: %v", s, printed, err)
		}
		if !back.Equal(p) {
			t.Fatalf("ParsePath(%q) = %+v, but its String %q parses to %+v", s, p.segs, printed, back.segs)
		}
		if again := back.String(); again != printed {
			t.Fatalf("String is not a normal form: %q then %q", printed, again)
		}
	})
}

func FuzzApply(f *testing.F) {
	specs := []string{
		`{"path":"rows","map":{"path":"id","missing":"undefined"}}`,
		`{"path":"now.window","pick":["app","title"]}`,
		`{"path":"rows[-1]","omit":["secret"],"missing":"null"}`,
		`{"path":"x","missing":"empty","map":{}}`,
		`{"path":"groups","map":{"path":"items","map":{"path":"name","default":"?"}}}`,
		`{"path":"a.b","default":{"k":1},"pick":["k"]}`,
		`{"map":{"map":{"missing":"undefined","path":"[0]"}}}`,
		`{"path":"meta[\"key.with.dots\"]"}`,
		`{"pick":[],"omit":["a"],"missing":"undefined"}`,
		`{"path":"rows","pick":["id"]}`,
	}
	docs := []string{
		doc, `[]`, `{}`, `null`, `"s"`, `1.5e3`, `[{"id":1},{},3,null]`, `{"a":{"b":null}}`,
		`{"a":1,"a":{"b":2}}`, `{"rows":[[1],[2,3]]}`, `{"k\u0065y":"\ud800"}`, "{\"\xff\":1}",
	}
	for i, s := range specs {
		f.Add(s, docs[i%len(docs)])
	}
	for i, d := range docs {
		f.Add(specs[i%len(specs)], d)
	}
	f.Fuzz(func(t *testing.T, specJSON, docJSON string) {
		s, err := Parse(json.RawMessage(specJSON))
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %v is not a *SpecError", err)
			}
			return
		}
		v, err := decodeJSON([]byte(docJSON))
		if err != nil {
			if _, rerr := s.ApplyRaw([]byte(docJSON)); !errors.Is(rerr, ErrInvalidJSON) {
				t.Fatalf("ApplyRaw(%q) = %v; encoding/json refuses it (%v), so want ErrInvalidJSON", docJSON, rerr, err)
			}
			return
		}
		before, _ := decodeJSON([]byte(docJSON))
		mayOmit, mayFail := false, false
		if s != nil {
			mayOmit, mayFail = specTraits(t, specJSON)
		}

		r, err := s.Apply(v)
		if !reflect.DeepEqual(v, before) {
			t.Fatalf("Apply mutated its input")
		}
		checkFuzzResult(t, "Apply", r, err, mayOmit, mayFail)
		r2, err2 := s.ApplyRaw([]byte(docJSON))
		checkFuzzResult(t, "ApplyRaw", r2, err2, mayOmit, mayFail)
		if errString(err) != errString(err2) || r.Omit != r2.Omit || jsonOf(t, r.Value) != jsonOf(t, r2.Value) {
			t.Fatalf("Apply and ApplyRaw disagree on %q with %s:\n%s %v %v\n%s %v %v",
				docJSON, specJSON, jsonOf(t, r.Value), r.Omit, err, jsonOf(t, r2.Value), r2.Omit, err2)
		}
	})
}

func checkFuzzResult(t *testing.T, fn string, r Result, err error, mayOmit, mayFail bool) {
	t.Helper()
	if err != nil {
		var me *MissingError
		if !errors.As(err, &me) {
			t.Fatalf("%s error %v is not a *MissingError", fn, err)
		}
		if !mayFail {
			t.Fatalf("%s failed with %v, but no spec level has missing \"error\" without a default", fn, err)
		}
		if _, perr := (Limits{MaxPathBytes: 1 << 20, MaxPathSegments: 1 << 10}).ParsePath(me.Path); perr != nil {
			t.Fatalf("%s: MissingError.Path %q does not parse: %v", fn, me.Path, perr)
		}
		return
	}
	if r.Omit && (!mayOmit || r.Value != nil) {
		t.Fatalf("%s: Omit (value %v) from a spec without missing \"undefined\"", fn, r.Value)
	}
	if _, err := json.Marshal(r.Value); err != nil {
		t.Fatalf("%s: result does not marshal: %v", fn, err)
	}
}

// specTraits reads a spec that parsed, independently of the parser: can
// it answer Omit (some level has missing "undefined"), and can it fail
// (some level has missing "error", explicit or by default, and no
// default).
func specTraits(t *testing.T, specJSON string) (mayOmit, mayFail bool) {
	t.Helper()
	var spec any
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		t.Fatalf("spec parsed but does not decode: %v", err)
	}
	for level, ok := spec.(map[string]any); ok; level, ok = level["map"].(map[string]any) {
		_, hasDefault := level["default"]
		missing, _ := level["missing"].(string)
		if missing == "undefined" {
			mayOmit = true
		}
		if !hasDefault && (missing == "" || missing == "error") {
			mayFail = true
		}
	}
	return mayOmit, mayFail
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
