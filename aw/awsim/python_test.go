package awsim

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPythonReference checks the Go ports against what CPython answered
// (testdata/python_reference.json, written by gen_python_reference.py):
// iso8601.parse_date, float repr, json.dumps and repr of strings, difflib's
// close matches (flask-restx's 404 help), int() and float().
func TestPythonReference(t *testing.T) {
	b, err := os.ReadFile("testdata/python_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		ISO []struct {
			In  string `json:"in"`
			OK  bool   `json:"ok"`
			US  int64  `json:"us"`
			Off int    `json:"off"`
			ISO string `json:"iso"`
		} `json:"iso"`
		Floats []struct {
			Hex  string `json:"hex"`
			Repr string `json:"repr"`
		} `json:"floats"`
		Strings []struct {
			S     string `json:"s"`
			Dumps string `json:"dumps"`
			Repr  string `json:"repr"`
		} `json:"strings"`
		Paths []struct {
			Path string `json:"path"`
			Help string `json:"help"`
		} `json:"paths"`
		Ints []struct {
			S  string `json:"s"`
			OK bool   `json:"ok"`
			V  int64  `json:"v"`
		} `json:"ints"`
		PyFloats []struct {
			S    string `json:"s"`
			OK   bool   `json:"ok"`
			Repr string `json:"repr"`
		} `json:"pyfloats"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.ISO) < 500 || len(ref.Floats) < 300 || len(ref.Paths) < 100 {
		t.Fatalf("reference too small: %d iso, %d floats, %d paths", len(ref.ISO), len(ref.Floats), len(ref.Paths))
	}
	valid := 0
	for _, c := range ref.ISO {
		p, err := parseISO(c.In)
		switch {
		case c.OK && err != nil:
			t.Errorf("parseISO(%q): %v, Python parsed it", c.In, err)
		case !c.OK && err == nil:
			t.Errorf("parseISO(%q) = %+v, Python refused it", c.In, p)
		case c.OK && (p.us != c.US || p.offMin != c.Off):
			t.Errorf("parseISO(%q) = %d %+d min, Python %d %+d min", c.In, p.us, p.offMin, c.US, c.Off)
		case c.OK:
			valid++
			if got := isoformatOffset(p.us, p.offMin); got != c.ISO {
				t.Errorf("isoformat of %q = %s, Python %s", c.In, got, c.ISO)
			}
		}
	}
	if valid < 50 {
		t.Errorf("only %d valid timestamps in the reference", valid)
	}
	for _, c := range ref.Floats {
		f, err := strconv.ParseFloat(c.Hex, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendPyFloat(nil, f)); got != c.Repr {
			t.Errorf("repr(%s) = %s, Python %s", c.Hex, got, c.Repr)
		}
	}
	for _, c := range ref.Strings {
		if got := string(appendPyString(nil, c.S)); got != c.Dumps {
			t.Errorf("json.dumps(%q) = %s, Python %s", c.S, got, c.Dumps)
		}
		if got := pyRepr(c.S); got != c.Repr {
			t.Errorf("repr(%q) = %s, Python %s", c.S, got, c.Repr)
		}
	}
	for _, c := range ref.Paths {
		got := helpOn404("", c.Path)
		want := ""
		if c.Help != "" {
			want = "You have requested this URI [" + c.Path + "] but did you mean " + c.Help + " ?"
		}
		if got != want {
			t.Errorf("404 help for %q:\n got %q\nwant %q", c.Path, got, want)
		}
	}
	for _, c := range ref.Ints {
		v, err := pyInt(c.S)
		if (err == nil) != c.OK || v != c.V {
			t.Errorf("int(%q) = %d, %v; Python ok=%v %d", c.S, v, err, c.OK, c.V)
		}
	}
	for _, c := range ref.PyFloats {
		v, err := pyFloat(c.S)
		if (err == nil) != c.OK {
			t.Errorf("float(%q): err %v; Python ok=%v", c.S, err, c.OK)
			continue
		}
		if err == nil && string(appendRepr(nil, v)) != c.Repr {
			t.Errorf("float(%q) = %s, Python %s", c.S, appendRepr(nil, v), c.Repr)
		}
	}
}

func TestIsoformat(t *testing.T) {
	base := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC).UnixMicro()
	for _, c := range []struct {
		us   int64
		off  int
		want string
	}{
		{base, 0, "2026-11-22T01:00:00+00:00"},                 // no fraction when zero
		{base + 123000, 0, "2026-11-22T01:00:00.123000+00:00"}, // ms shown as six digits
		{base + 500000, 0, "2026-11-22T01:00:00.500000+00:00"}, // not .5
		{base + 1, 0, "2026-11-22T01:00:00.000001+00:00"},      // µs kept (bucket created)
		{base, 120, "2026-11-22T03:00:00+02:00"},               // an offset
		{base, -330, "2026-11-21T19:30:00-05:30"},              // negative with minutes
		{minUS, 0, "0001-01-01T00:00:00+00:00"},                // year padded to 4
		{maxUS, 0, "9999-12-31T23:59:59.999999+00:00"},         // the last instant
		{time.Date(1969, 12, 31, 23, 59, 59, 999000000, time.UTC).UnixMicro(), 0, "1969-12-31T23:59:59.999000+00:00"},
	} {
		if got := isoformatOffset(c.us, c.off); got != c.want {
			t.Errorf("isoformat(%d, %d) = %s, want %s", c.us, c.off, got, c.want)
		}
	}
	if truncMS(base+999999) != base+999000 || truncMS(-1) != -1000 {
		t.Errorf("truncMS does not floor to ms: %d %d", truncMS(base+999999), truncMS(-1))
	}
}

func TestDurations(t *testing.T) {
	for _, c := range []struct {
		in   float64
		us   int64
		repr string
	}{
		{88, 88_000_000, "88.0"},
		{180.001, 180_001_000, "180.001"},
		{0.25, 250_000, "0.25"},
		{1.5, 1_500_000, "1.5"},
		{0.0000005, 0, "0.0"},       // half-even: 0.5 µs rounds to 0
		{0.0000015, 2, "2e-06"},     // 1.5 µs rounds to 2
		{-0.25, -250_000, "-0.25"},  // negative durations are stored as given
		{1e9, 1e15, "1000000000.0"}, // large but fine
		{1e-7, 0, "0.0"},            // below resolution
		{1325, 1_325_000_000, "1325.0"},
		{2.0000005, 2_000_001, "2.000001"}, // values as CPython computes them
		{1234.5678915, 1_234_567_892, "1234.567892"},
		{0.0000025, 2, "2e-06"},
		{-0.0000015, -2, "-2e-06"},
	} {
		us, err := durFromSeconds(c.in)
		if err != nil || us != c.us {
			t.Errorf("timedelta(seconds=%v) = %d µs, %v; want %d", c.in, us, err, c.us)
		}
		if got := string(appendPyFloat(nil, durSeconds(us))); got != c.repr {
			t.Errorf("total_seconds of %d µs = %s, want %s", us, got, c.repr)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300} {
		if _, err := durFromSeconds(bad); err == nil {
			t.Errorf("timedelta(seconds=%v) accepted", bad)
		}
	}
	if d, err := durFromJSON(true); err != nil || d != usPerSecond {
		t.Errorf("duration true = %d, %v (Python: timedelta(seconds=True) is 1 s)", d, err)
	}
	if _, err := durFromJSON("5"); err == nil {
		t.Error("a string duration was accepted (Python raises TypeError)")
	}
}

func TestDecodeJSON(t *testing.T) {
	v, err := decodeJSON([]byte(` {"b": 1, "a": [NaN, Infinity, -Infinity, 1.0, 12345678901234567890123], "b": 2} `))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*object)
	if strings.Join(o.keys, ",") != "b,a" {
		t.Errorf("keys %v: a duplicate key keeps its first position", o.keys)
	}
	if b, _ := o.get("b"); pyRepr(b) != "2" {
		t.Errorf("duplicate key value %v, want the last one", pyRepr(b))
	}
	if got := string(appendJSON(nil, o, styleRestx)); got != `{"b": 2, "a": [NaN, Infinity, -Infinity, 1.0, 12345678901234567890123]}` {
		t.Errorf("re-encoded as %s", got)
	}
	if got := string(appendJSON(nil, o, styleJsonify)); got != `{"a":[NaN,Infinity,-Infinity,1.0,12345678901234567890123],"b":2}` {
		t.Errorf("jsonify: %s", got)
	}
	// A lone surrogate survives the round trip, as in Python.
	v, err = decodeJSON([]byte(`"\ud800x\ud83d\ude00"`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(appendJSON(nil, v, styleRestx)); got != `"\ud800x\ud83d\ude00"` {
		t.Errorf("surrogates: %s", got)
	}
	if v, err := decodeJSON([]byte("\xef\xbb\xbf[]")); err != nil || len(v.([]any)) != 0 {
		t.Errorf("a UTF-8 BOM is skipped by json.loads(bytes): %v %v", v, err)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `"a` + "\x01" + `"`, `01`, `1 2`, `'a'`, `nan`, `"\x"`, "\xff", `{1: 2}`, `-`, `1.`, `.5`} {
		if _, err := decodeJSON([]byte(bad)); err == nil {
			t.Errorf("decodeJSON(%q) accepted", bad)
		}
	}
	if _, err := decodeJSON([]byte(strings.Repeat("[", 2000) + strings.Repeat("]", 2000))); !errors.Is(err, errJSONDepth) {
		t.Errorf("deep nesting: %v, want errJSONDepth (a 500, like RecursionError)", err)
	}
	if _, err := decodeJSON([]byte(strings.Repeat("9", 4301))); err == nil {
		t.Error("an int of 4301 digits was accepted (Python 3.11 refuses it)")
	}
}

func TestPyEqual(t *testing.T) {
	one := big.NewInt(1)
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{one, 1.0, true},
		{true, one, true},
		{true, 1.0, true},
		{false, big.NewInt(0), true},
		{math.NaN(), math.NaN(), false},
		{"a", "a", true},
		{"a", "b", false},
		{nil, nil, true},
		{nil, false, false},
		{obj("a", one, "b", "x"), obj("b", "x", "a", 1.0), true}, // order does not matter
		{obj("a", one), obj("a", one, "b", nil), false},
		{[]any{one, "x"}, []any{1.0, "x"}, true},
		{[]any{one}, []any{one, one}, false},
		{obj("a", []any{}), obj("a", newObject()), false},
	} {
		if got := pyEqual(c.a, c.b); got != c.want {
			t.Errorf("%s == %s: %v, want %v", pyRepr(c.a), pyRepr(c.b), got, c.want)
		}
	}
}

func TestQueryArgs(t *testing.T) {
	q := parseQueryArgs("start=2026-11-22T01%3A05%3A21%2B00%3A00&limit=2&limit=3&a+b=c+d&&bad=%zz%4&flag&e=%C3%A9&x=%ff")
	for k, want := range map[string]string{
		"start": "2026-11-22T01:05:21+00:00",
		"limit": "2", // the first value wins
		"a b":   "c d",
		"bad":   "%zz%4", // invalid escapes stay literal
		"flag":  "",      // a key without "=" is present and empty
		"e":     "é",
		"x":     "\uFFFD",
	} {
		if got, ok := q.get(k); !ok || got != want {
			t.Errorf("arg %q = %q (present %v), want %q", k, got, ok, want)
		}
	}
	if _, ok := q.get("missing"); ok {
		t.Error("a missing arg is present")
	}
}
