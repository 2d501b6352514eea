package jsonw

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestSkipValue(t *testing.T) {
	tests := []struct {
		in   string
		want int // offset after the value at 0
	}{
		{`"abc" `, 5},
		{`"a\"b"`, 6},
		{`"a\\"b"`, 5},
		{`"open`, 5},
		{`{"a":[1,"]}"],"b":{}} ,`, 21},
		{`[[],[{}]],1`, 9},
		{`-1.5e3,`, 6},
		{`true}`, 4},
		{`null `, 4},
		{`[1,2`, 4},
		{``, 0},
	}
	for _, tt := range tests {
		if got := SkipValue([]byte(tt.in), 0); got != tt.want {
			t.Errorf("SkipValue(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestEachMemberAndElement(t *testing.T) {
	var keys, vals []string
	EachMember([]byte(`{ "a" : 1 , "b\"" :{"x":[1,2]},"a":"dup" }`), func(k, v []byte) bool {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return true
	})
	if want := []string{`"a"`, `"b\""`, `"a"`}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if want := []string{`1`, `{"x":[1,2]}`, `"dup"`}; !reflect.DeepEqual(vals, want) {
		t.Errorf("values %q, want %q", vals, want)
	}
	var els []string
	EachElement([]byte(`[ 1, "two" ,[3], {"4":4} ]`), func(i int, v []byte) bool {
		els = append(els, string(v))
		return i < 2 // stop after the third
	})
	if want := []string{`1`, `"two"`, `[3]`}; !reflect.DeepEqual(els, want) {
		t.Errorf("elements %q, want %q", els, want)
	}
	n := 0
	EachElement([]byte(`[ ]`), func(int, []byte) bool { n++; return true })
	EachMember([]byte(`{ }`), func([]byte, []byte) bool { n++; return true })
	if n != 0 {
		t.Errorf("empty array and object: %d items", n)
	}
	if got := string(TrimSpace([]byte(" \t\n[1]\r\n"))); got != "[1]" {
		t.Errorf("TrimSpace = %q", got)
	}
	if got := string(TrimSpace([]byte("\v1\f"))); got != "\v1\f" {
		t.Errorf("TrimSpace trimmed non-JSON space: %q", got)
	}
}

// FuzzScan checks the scanner against encoding/json: on any input it
// stays in bounds, and on a valid object or array it finds exactly the
// members and elements decoding finds.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x\"y"],"c":{"d":"\\"}}`, `[1,[2,[3]],{"k":"]"}]`, ` [ ] `, `{"a":1,"a":2}`, `["\`, `{"a"`, `"s"`, `12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got := SkipValue(b, 0); got < 0 || got > len(b) {
			t.Fatalf("SkipValue(%q) = %d, out of bounds", b, got)
		}
		v := TrimSpace(b)
		if len(v) == 0 {
			return
		}
		valid := json.Valid(b)
		if valid && SkipValue(v, 0) != len(v) {
			t.Fatalf("SkipValue(%q) = %d, want the whole value (%d)", v, SkipValue(v, 0), len(v))
		}
		switch v[0] {
		case '{':
			got := map[string]any{}
			EachMember(v, func(k, val []byte) bool {
				if !valid {
					return true
				}
				var key string
				var x any
				if json.Unmarshal(k, &key) != nil || json.Unmarshal(val, &x) != nil || !bytes.Equal(val, TrimSpace(val)) {
					t.Fatalf("EachMember(%s): member %s: %s is not a key and a value", v, k, val)
				}
				got[key] = x // the last duplicate wins, as in decoding
				return true
			})
			var want map[string]any
			if valid && json.Unmarshal(v, &want) == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("EachMember(%s) = %v, decoding says %v", v, got, want)
			}
		case '[':
			var got []any
			EachElement(v, func(i int, val []byte) bool {
				if !valid {
					return true
				}
				var x any
				if i != len(got) || json.Unmarshal(val, &x) != nil {
					t.Fatalf("EachElement(%s): element %d: %s", v, i, val)
				}
				got = append(got, x)
				return true
			})
			var want []any
			if valid && json.Unmarshal(v, &want) == nil && (len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Fatalf("EachElement(%s) = %v, decoding says %v", v, got, want)
			}
		}
	})
}
