package shape

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParsePathNormalForm(t *testing.T) {
	tests := []struct {
		in, want string
		segs     int
	}{
		{"", "", 0},
		{"a", "a", 1},
		{"a.b", "a.b", 2},
		{"rows[0].id", "rows[0].id", 3},
		{"rows.0.id", "rows[0].id", 3},
		{"rows[-1]", "rows[-1]", 2},
		{"rows.-1", "rows[-1]", 2},
		{"[0]", "[0]", 1},
		{"[3][-2]", "[3][-2]", 2},
		{"a[0][1].b", "a[0][1].b", 4},
		{`["key.with.dots"]`, `["key.with.dots"]`, 1},
		{`['x']`, "x", 1},
		{`a['x'].y`, "a.x.y", 3},
		{`['it\'s']`, `["it's"]`, 1},
		{`['say "hi"']`, `["say \"hi\""]`, 1},
		{`["a\"b"]`, `["a\"b"]`, 1},
		{`["a\\b"]`, `["a\\b"]`, 1},
		{`["\u00e9t\u00E9"]`, "été", 1},
		{"été.ü", "été.ü", 2},
		{`["\ud83d\ude00"]`, "😀", 1},
		{`["\ud800"]`, "\ufffd", 1},
		{`["\ud800\u0041"]`, "\ufffdA", 1},
		{`["\/\b\f\n\r\t"]`, `["/\b\f\n\r\t"]`, 1},
		{`[""]`, `[""]`, 1},
		{`["0"]`, `["0"]`, 1},
		{`["-1"]`, `["-1"]`, 1},
		{"a.007", "a.007", 2},
		{"a.-0", "a.-0", 2},
		{"a.1e3", "a.1e3", 2},
		{`["<&>"]`, "<&>", 1},
		{`["<a b>"]`, `["<a b>"]`, 1},
		{`["a b"]`, `["a b"]`, 1},
		{"$.a-b_c:d", "$.a-b_c:d", 2},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.in)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tt.in, err)
			continue
		}
		if got := p.String(); got != tt.want {
			t.Errorf("ParsePath(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		if len(p.segs) != tt.segs {
			t.Errorf("ParsePath(%q) has %d segments, want %d", tt.in, len(p.segs), tt.segs)
		}
		back, err := ParsePath(p.String())
		if err != nil || !back.Equal(p) {
			t.Errorf("ParsePath(%q) does not round-trip through %q: %v", tt.in, p.String(), err)
		}
	}
}

func TestParsePathSegmentKinds(t *testing.T) {
	// Integer segments are indexes on arrays and keys on objects; quoted
	// segments are keys only.
	tests := []struct {
		in    string
		num   bool
		index int
		key   string
	}{
		{"0", true, 0, "0"},
		{"[0]", true, 0, "0"},
		{"[-1]", true, -1, "-1"},
		{"12", true, 12, "12"},
		{`["12"]`, false, 0, "12"},
		{"012", false, 0, "012"},
		{"99999999999999999999", false, 0, "99999999999999999999"},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.in)
		if err != nil {
			t.Fatalf("ParsePath(%q): %v", tt.in, err)
		}
		want := segment{key: tt.key, index: tt.index, num: tt.num}
		if got := p.segs[0]; got != want {
			t.Errorf("ParsePath(%q) = %+v, want %+v", tt.in, got, want)
		}
	}
	a, _ := ParsePath("rows.0")
	b, _ := ParsePath("rows[0]")
	c, _ := ParsePath(`rows["0"]`)
	if !a.Equal(b) || a.Equal(c) {
		t.Errorf("rows.0 and rows[0] must be equal and differ from rows[\"0\"]")
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{".", 0, "starts with '.'"},
		{".a", 0, "starts with '.'"},
		{"a.", 2, "ends with '.'"},
		{"a..b", 2, "empty segment"},
		{"a.[0]", 2, "empty segment"},
		{"a[", 1, "unclosed '['"},
		{"a[0", 1, "unclosed '['"},
		{"a[x]", 2, "integer index"},
		{"a[01]", 2, "integer index"},
		{"a[-0]", 2, "integer index"},
		{"a[ 0]", 2, "integer index"},
		{"a[99999999999999999999]", 2, "integer index"},
		{"a[0]b", 4, "expected '.' or '['"},
		{"a]", 1, "unexpected ']'"},
		{`a"b`, 1, `unexpected '"'`},
		{"a b", 1, "unexpected ' '"},
		{"a\x01", 1, "unexpected"},
		{"a\\b", 1, "unexpected"},
		{"\xff", 0, "invalid UTF-8"},
		{"a.\xc3", 2, "invalid UTF-8"},
		{`["abc`, 1, "unclosed quote"},
		{`['abc"]`, 1, "unclosed quote"},
		{`["a"`, 4, "expected ']'"},
		{`["a"x]`, 4, "expected ']'"},
		{`["a\x"]`, 3, `unknown escape \x`},
		{`["a\u12"]`, 3, "four hex digits"},
		{`["a\`, 3, "unfinished escape"},
		{"[\"a\nb\"]", 3, "control character"},
	}
	for _, tt := range tests {
		_, err := ParsePath(tt.in)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePath(%q) = %v, want a *PathError", tt.in, err)
			continue
		}
		if pe.Offset != tt.offset || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("ParsePath(%q) = offset %d %q, want offset %d containing %q", tt.in, pe.Offset, pe.Msg, tt.offset, tt.msg)
		}
	}
}

func TestParsePathLimits(t *testing.T) {
	long := strings.Repeat("a", 1024)
	if _, err := ParsePath(long); err != nil {
		t.Errorf("a 1024-byte path must parse: %v", err)
	}
	if _, err := ParsePath(long + "a"); err == nil || !strings.Contains(err.Error(), "longer than 1024 bytes") {
		t.Errorf("a 1025-byte path: got %v", err)
	}
	segs64 := strings.TrimSuffix(strings.Repeat("a.", 64), ".")
	if _, err := ParsePath(segs64); err != nil {
		t.Errorf("64 segments must parse: %v", err)
	}
	if _, err := ParsePath(segs64 + "[0]"); err == nil || !strings.Contains(err.Error(), "more than 64 segments") {
		t.Errorf("65 segments: got %v", err)
	}
}

// String prints p in normal form (as MissingError.Path does): bare keys
// joined by dots, integer segments as [n], every other key quoted as
// ["..."]. The result parses back to an equal Path.
func (p Path) String() string { return string(appendSegments(nil, p.segs)) }

// Equal reports whether p and q are the same path.
func (p Path) Equal(q Path) bool { return slices.Equal(p.segs, q.segs) }
