package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{
		"", "a", "a.b", "rows[0].id", "rows[-1]", "rows.0", `["key.with.dots"]`, `['x']`, `['it\'s']`,
		`["\u00e9\ud83d\ude00\ud800"]`, `["<a b>"]`, `[""]`, `["0"]`, "a.007", "a.-0", "a[0][1]",
		"a..b", "a[", `["a`, "\xff", "é.ü", `["\/\b\f\n\r\t"]`, "a[99999999999999999999]",
	} {
		f.Add(s)
	}
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
		// Normal form may be longer than the input (quoting).
		back, err := ParsePath(printed)
		if len(printed) > maxPathBytes {
			return
		}
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

		// The decoded path (what map applies to each element) is the
		// reference for the raw one.
		r, err := Result{Value: v}, error(nil)
		if !s.IsIdentity() {
			r, err = finish(s.apply(v))
		}
		if !reflect.DeepEqual(v, before) {
			t.Fatalf("apply mutated its input")
		}
		checkFuzzResult(t, "apply", r, err, mayOmit, mayFail)
		r2, err2 := s.ApplyRaw([]byte(docJSON))
		checkFuzzResult(t, "ApplyRaw", r2, err2, mayOmit, mayFail)
		if errString(err) != errString(err2) || r.Omit != r2.Omit || jsonOf(t, r.Value) != jsonOf(t, r2.Value) {
			t.Fatalf("apply and ApplyRaw disagree on %q with %s:\n%s %v %v\n%s %v %v",
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
		if _, perr := ParsePath(me.Path); perr != nil && !strings.Contains(perr.Error(), "than") { // map levels may exceed the limits
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

// FuzzParseSpec: the output spec parser never panics; a refusal is a
// *SpecError whose field and text are bounded and valid UTF-8; what it
// accepts is a JSON object (or nothing) that an independent reading finds
// well-formed at every level (known keys once each, path parsing, pick
// and omit lists of strings within the limits, missing one of the modes,
// map nesting within the limit); and layout does not matter: the
// compacted and the indented spec parse to the same spec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, ` { "path" : "rows[0].id" } `, `{"path":"now.window","pick":["app","title"],"missing":"null"}`,
		`{"path":"rows","map":{"path":"id","missing":"undefined","default":{"k":[1,2]}}}`, `{"path":null,"pick":null,"omit":null,"map":null,"missing":null,"default":null}`,
		`{"Path":"a"}`, `{"path":"a","path":"b"}`, `{"pick":["a","a",""]}`, `{"pick":[1]}`, `{"missing":"never"}`, `{"missing":1}`,
		`{"map":{"map":{"map":{"map":{"map":{"map":{"map":{"map":{"map":{}}}}}}}}}}`, `{"default":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		`{"path":"a"}x`, `{"path":"a"`, `[]`, `"path"`, `{"path":"\ud800"}`, `{"` + strings.Repeat("k", 100) + `":1}`, "{\"\xff\":1}",
		`{"omit":["` + strings.Repeat("x", 257) + `"]}`, `{"path":"a..b"}`, `{"default":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %T is not a *SpecError: %v", err, err)
			}
			if msg := err.Error(); len(se.Field) > 4*maxMapDepth+80 || len(msg) > 512 || !utf8.ValidString(msg) {
				t.Fatalf("error field %q, text %q", se.Field, msg)
			}
			if again, err2 := Parse(raw); again != nil || err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("second parse: %v, first %v", err2, err)
			}
			return
		}
		trimmed := bytes.TrimSpace(raw)
		if s == nil {
			if len(trimmed) != 0 && string(trimmed) != "null" {
				t.Fatalf("nil spec from %q", raw)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		checkSpecLevel(t, trimmed, 0)
		var compact, indented bytes.Buffer
		json.Compact(&compact, raw)
		json.Indent(&indented, raw, "\t", "  ")
		for _, form := range [][]byte{compact.Bytes(), indented.Bytes()} {
			s2, err := Parse(form)
			if err != nil || !sameSpec(s, s2) {
				t.Fatalf("%q parses, but its layout %q gives %v", raw, form, err)
			}
		}
	})
}

// checkSpecLevel reads one level of an accepted spec with encoding/json.
func checkSpecLevel(t *testing.T, raw []byte, depth int) {
	t.Helper()
	if depth > maxMapDepth {
		t.Fatalf("map nests %d deep", depth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		t.Fatalf("level %d is not an object: %q", depth, raw)
	}
	seen := map[string]bool{}
	for dec.More() {
		k, _ := dec.Token()
		key := k.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if specKey(key) < 0 || seen[key] {
			t.Fatalf("level %d: key %q accepted (seen %v)", depth, key, seen[key])
		}
		seen[key] = true
		if string(v) == "null" && key != "default" {
			continue
		}
		switch key {
		case "path":
			var p string
			if err := json.Unmarshal(v, &p); err != nil {
				t.Fatalf("path %s accepted", v)
			}
			if _, err := ParsePath(p); err != nil {
				t.Fatalf("path %q accepted: %v", p, err)
			}
		case "pick", "omit":
			var keys []string
			if err := json.Unmarshal(v, &keys); err != nil || len(keys) > maxKeys {
				t.Fatalf("%s %s accepted", key, v)
			}
			for _, k := range keys {
				if len(k) > maxKeyBytes {
					t.Fatalf("%s key of %d bytes accepted", key, len(k))
				}
			}
		case "missing":
			var m string
			if json.Unmarshal(v, &m) != nil || (m != "error" && m != "null" && m != "undefined" && m != "empty") {
				t.Fatalf("missing %s accepted", v)
			}
		case "map":
			checkSpecLevel(t, v, depth+1)
		case "default":
			if len(v) > maxDefaultBytes {
				t.Fatalf("default of %d bytes accepted", len(v))
			}
		}
	}
}

// sameSpec compares two parsed specs field by field.
func sameSpec(a, b *Spec) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.path.Equal(b.path) && reflect.DeepEqual(a.pick, b.pick) && reflect.DeepEqual(a.omit, b.omit) &&
		a.missing == b.missing && a.hasDef == b.hasDef && reflect.DeepEqual(a.def, b.def) && a.mayOmit == b.mayOmit && sameSpec(a.sub, b.sub)
}
