package jsonw

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	tests := []struct {
		in           string
		depth, items int
	}{
		{`1`, 0, 0},
		{`"a,[{"`, 0, 0},
		{`[]`, 1, 0},
		{`{}`, 1, 0},
		{`[1]`, 1, 1},
		{`[1, 2 ,3]`, 1, 3},
		{`{"a":1,"b":[true,{"c":"x\",]"}]}`, 3, 5},
		{`[[],[[]], {} ]`, 3, 4},
		{` { "a" : [ ] } `, 2, 1},
	}
	for _, tt := range tests {
		d, n := Shape([]byte(tt.in), 64)
		if d != tt.depth || n != tt.items {
			t.Errorf("Shape(%s) = %d, %d; want %d, %d", tt.in, d, n, tt.depth, tt.items)
		}
	}
	deep := strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20)
	if d, _ := Shape([]byte(deep), 64); d != 65 {
		t.Errorf("a million-deep array: depth %d, want it cut at 65", d)
	}
}

// countJSON counts depth and items by decoding, as a reference.
func countJSON(v any, level int) (depth, items int) {
	switch x := v.(type) {
	case []any:
		depth = level + 1
		for _, c := range x {
			d, n := countJSON(c, level+1)
			depth, items = max(depth, d), items+n+1
		}
	case map[string]any:
		depth = level + 1
		for _, c := range x {
			d, n := countJSON(c, level+1)
			depth, items = max(depth, d), items+n+1
		}
	}
	return depth, items
}

func FuzzShape(f *testing.F) {
	for _, s := range []string{`1`, `[1,[2,{"a":"]"}]]`, `{"a":{"b":[]},"c":"\\\""}`, `[`, `"\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, n := Shape(b, 64)
		if d > 65 || n > len(b) {
			t.Fatalf("Shape(%q) = %d, %d: out of bounds", b, d, n)
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		if !json.Valid(b) || dec.Decode(&v) != nil || d > 64 {
			return
		}
		// On valid JSON without objects the figures are exact; with
		// objects, decoding keeps only the last of duplicate keys (and
		// what is nested in the others), so Shape may count more.
		wd, wn := countJSON(v, 0)
		if strings.Contains(string(b), ":") {
			if d < wd || n < wn {
				t.Fatalf("Shape(%s) = %d, %d; decoding says at least %d, %d", b, d, n, wd, wn)
			}
		} else if d != wd || n != wn {
			t.Fatalf("Shape(%s) = %d, %d; decoding says %d, %d", b, d, n, wd, wn)
		}
	})
}
