package realaw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckRanking: the checker finds each way a ranking can disagree
// with the recording, and passes one that agrees.
func TestCheckRanking(t *testing.T) {
	want := map[string]float64{"a": 100, "b": 50, "c": 20, "d": 5}
	for _, c := range []struct {
		name   string
		got    []Entry
		otherS float64
		limit  int
		find   string // "" when it must pass
	}{
		{"agrees", []Entry{{"a", 100.04}, {"b", 49.96}}, 25, 2, ""},
		{"all, no other_s", []Entry{{"a", 100}, {"b", 50}, {"c", 20}, {"d", 5}}, -1, 10, ""},
		{"off by more than tol", []Entry{{"a", 101.2}, {"b", 50}}, 25, 2, `"a": 101.2 s, recorded 100.000 s`},
		{"unknown key", []Entry{{"a", 100}, {"x", 50}}, 25, 2, `"x": 50.0 s, not in the recording`},
		{"wrong cut", []Entry{{"a", 100}, {"c", 20}}, 55, 2, `"b" (recorded 50.000 s) left out`},
		{"short", []Entry{{"a", 100}}, 75, 2, "1 entries, want 2"},
		{"twice", []Entry{{"a", 100}, {"a", 100}}, 75, 2, `"a" shown twice`},
		{"order", []Entry{{"b", 50}, {"a", 100}}, 25, 2, `ranked below`},
		{"other_s", []Entry{{"a", 100}, {"b", 50}}, 20, 2, "other_s 20.0 s, recorded 25.000 s"},
	} {
		d := CheckRanking(c.got, c.otherS, want, 0, c.limit, 1)
		text := strings.Join(d.Problems, "\n")
		switch {
		case c.find == "" && text != "":
			t.Errorf("%s: %s", c.name, text)
		case c.find != "" && !strings.Contains(text, c.find):
			t.Errorf("%s: problems %q, want one holding %q", c.name, text, c.find)
		}
	}
}

// TestWebUIClasses: each recording's classes are what the web UI derives
// from its recorded settings (the defaults for an empty one, the active
// category sets merged for catsets), and the sets are used only when
// stored.
func TestWebUIClasses(t *testing.T) {
	for _, name := range []string{"week", "dst", "catsets"} {
		rec, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := WebUIClasses(rec.Settings)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, rec.Classes); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("%s: %s, recorded %s", name, got, rec.Classes)
		}
	}
	for _, c := range []struct{ settings, want string }{
		{`{"classes": [{"name": ["A"], "rule": {"type": "regex", "regex": "a"}}, {"name": ["B"], "rule": {"type": null}}]}`,
			`[[["A"],{"regex":"a","type":"regex"}]]`},
		{`{"classes": [], "category_sets": []}`, `[]`},
		{`{"category_sets": [{"id": "x", "categories": [{"name": ["X"], "rule": {"type": "none"}}]}, {"id": "y", "categories": []}], "active_set_ids": ["gone"]}`,
			`[[["X"],{"type":"none"}]]`},
	} {
		got, err := WebUIClasses([]byte(c.settings))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.settings, got, err, c.want)
		}
	}
}
