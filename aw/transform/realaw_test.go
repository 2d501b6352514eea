package transform_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestDefaultClassesAreTheRecordedOnes checks awbridge's default
// categories (used when ActivityWatch's classes setting is unset) against
// the ones the recordings of the real aw-server were categorized with
// (testdata/realaw: written from aw-webui's defaultCategories, as the web
// UI passes them to categorize()): same names, order, patterns and case
// rules.
func TestDefaultClassesAreTheRecordedOnes(t *testing.T) {
	for _, name := range []string{"week", "dst"} {
		rec, err := realaw.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		type class struct {
			Name []string
			Rule struct {
				Type       string `json:"type"`
				Regex      string `json:"regex"`
				IgnoreCase bool   `json:"ignore_case"`
			}
		}
		var pairs [][2]json.RawMessage
		if err := json.Unmarshal(rec.Classes, &pairs); err != nil {
			t.Fatal(err)
		}
		var recorded []class
		for _, p := range pairs {
			var c class
			if json.Unmarshal(p[0], &c.Name) != nil || json.Unmarshal(p[1], &c.Rule) != nil {
				t.Fatalf("%s: a class that is not [name, rule]: %s", name, p)
			}
			recorded = append(recorded, c)
		}
		def := transform.DefaultClasses()
		if len(def) != len(recorded) {
			t.Fatalf("%s: %d default classes, the recording has %d", name, len(def), len(recorded))
		}
		for i, c := range def {
			r := recorded[i]
			if !slices.Equal(c.Name, r.Name) || c.Rule.Regex != r.Rule.Regex || c.Rule.IgnoreCase != r.Rule.IgnoreCase ||
				c.Rule.SelectKeys != nil || (r.Rule.Regex == "") != (r.Rule.Type == "none") {
				t.Errorf("%s: class %d is %v %q (ignore case %v), the recording's %v %s %q (ignore case %v)",
					name, i, c.Name, c.Rule.Regex, c.Rule.IgnoreCase, r.Name, r.Rule.Type, r.Rule.Regex, r.Rule.IgnoreCase)
			}
		}
	}
}
