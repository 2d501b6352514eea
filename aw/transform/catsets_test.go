package transform

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// many is n categories named [prefix+"0"], [prefix+"1"]...
func many(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": ["%s%d"], "rule": {"type": "none"}}`, prefix, i)
	}
	return b.String()
}

// TestClassesOf: the categories an event gets from the web UI's settings:
// classes when set, else the active category sets merged as the web UI
// merges them, else the defaults; each bad setting a typed error.
func TestClassesOf(t *testing.T) {
	const (
		work     = `{"id": "work", "categories": [{"name": ["Comms"], "rule": {"type": "regex", "regex": "Slack"}}, {"name": ["Work", "Shell"], "rule": {"type": "regex", "regex": "terminal"}}]}`
		personal = `{"id": "personal", "categories": [{"name": ["Comms"], "rule": {"type": "regex", "regex": "zoom"}}, {"name": ["Dev", "Term"], "rule": {"type": "regex", "regex": "terminal"}}, {"name": ["Uncategorized"], "rule": {"type": null}}]}`
		unused   = `{"id": "unused", "categories": [{"name": ["Everything"], "rule": {"type": "regex", "regex": "."}}]}`
	)
	sets := "[" + work + "," + personal + "," + unused + "]"
	type ev struct{ app, want string }
	tests := []struct {
		name, classes, sets, active string
		events                      []ev
		wantErr                     error
	}{
		{name: "classes win over the sets", classes: `[{"name": ["Chat"], "rule": {"type": "regex", "regex": "Slack"}}]`, sets: sets, active: `["work"]`,
			events: []ev{{"Slack", "Chat"}, {"gnome-terminal", Uncategorized}}},
		{name: "one active set", sets: sets, active: `["work"]`,
			events: []ev{{"Slack", "Comms"}, {"zoom", Uncategorized}, {"gnome-terminal", "Work > Shell"}, {"vim", Uncategorized}}},
		{name: "two active sets: a name from the earlier set wins, a tie goes to the later set", sets: sets, active: `["work", "personal"]`,
			events: []ev{{"Slack", "Comms"}, {"zoom", Uncategorized}, {"gnome-terminal", "Dev > Term"}, {"anything", Uncategorized}}},
		{name: "merged in category_sets order, not active_set_ids order", sets: sets, active: `["personal", "work"]`,
			events: []ev{{"Slack", "Comms"}, {"zoom", Uncategorized}, {"gnome-terminal", "Dev > Term"}}},
		{name: "no active ids: the first set", sets: sets,
			events: []ev{{"Slack", "Comms"}, {"gnome-terminal", "Work > Shell"}}},
		{name: "unknown active ids: the first set", sets: sets, active: `["gone"]`,
			events: []ev{{"Slack", "Comms"}, {"anything", Uncategorized}}},
		{name: "active ids of the wrong shape: the first set", sets: sets, active: `[1, 2]`,
			events: []ev{{"Slack", "Comms"}}},
		{name: "the unused set counts when active", sets: sets, active: `["unused"]`,
			events: []ev{{"Slack", "Everything"}}},
		{name: "no sets: the classes", classes: `[{"name": ["Chat"], "rule": {"type": "regex", "regex": "Slack"}}]`, sets: `[]`,
			events: []ev{{"Slack", "Chat"}}},
		{name: "no sets, no classes: the defaults", sets: `null`, active: `["work"]`,
			events: []ev{{"Slack", "Comms > IM"}, {"vim", "Work > Programming"}}},
		{name: "an inactive set is not read", sets: `[` + work + `, {"id": "bad", "categories": 7}]`, active: `["work"]`,
			events: []ev{{"Slack", "Comms"}}},
		{name: "sets not a list of sets", sets: `[1]`, wantErr: ErrClassesSetting},
		{name: "sets an object", sets: `{"id": "work"}`, wantErr: ErrClassesSetting},
		{name: "an active set without categories", sets: `[{"id": "work"}]`, wantErr: ErrClassesSetting},
		{name: "a category without a name", sets: `[{"id": "work", "categories": [{"rule": {"type": "regex", "regex": "x"}}]}]`, wantErr: ErrClassesSetting},
		{name: "a regex that does not compile", sets: `[{"id": "work", "categories": [{"name": ["A"], "rule": {"type": "regex", "regex": "(?<=x)"}}]}]`, wantErr: ErrClassesSetting},
		{name: "sets too large", sets: `[{"id": "` + strings.Repeat("x", MaxClassesBytes) + `", "categories": []}]`, wantErr: ErrClassesTooLarge},
		{name: "too many categories in all", sets: `[{"id": "a", "categories": [` + many("a", MaxClasses/2) + `]}, {"id": "b", "categories": [` + many("a", MaxClasses/2) + "," + many("b", MaxClasses/2+1) + `]}]`,
			active: `["a", "b"]`, wantErr: ErrClassesTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := ClassesOf([]byte(tt.classes), []byte(tt.sets), []byte(tt.active))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || cs != nil {
					t.Fatalf("got %d classes, err %v; want no classes and %v", len(cs), err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.events {
				if got := cs.Label(cs.Categorize(strs("app", e.app, "title", ""))); got != e.want {
					t.Errorf("%s: %q, want %q", e.app, got, e.want)
				}
			}
		})
	}
}

// FuzzClassesOf: any category_sets and active_set_ids give classes or a
// typed error with none, never a panic; classes from sets never hold two
// of one name.
func FuzzClassesOf(f *testing.F) {
	f.Add([]byte(`[{"id":"a","categories":[{"name":["A"],"rule":{"type":"regex","regex":"x"}}]},{"id":"b","categories":[{"name":["A"],"rule":{"type":"none"}}]}]`), []byte(`["b","a"]`))
	f.Add([]byte(`[{"id":1,"categories":[]}]`), []byte(`null`))
	f.Add([]byte(`[{"id":"a","categories":[{"name":"A"}]}]`), []byte(`["a"]`))
	f.Add([]byte(`[]`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, sets, active []byte) {
		cs, err := ClassesOf(nil, sets, active)
		switch {
		case err == nil:
		case errors.Is(err, ErrClassesSetting), errors.Is(err, ErrClassesTooLarge):
			if cs != nil {
				t.Fatalf("classes %v with %v", cs, err)
			}
			return
		default:
			t.Fatalf("unexpected error %v", err)
		}
		if _, fromSets, _ := EffectiveClasses(sets, active); !fromSets {
			return
		}
		seen := map[string]bool{}
		for _, c := range cs {
			k := strings.Join(c.Name, "\x00") + fmt.Sprint(len(c.Name))
			if seen[k] {
				t.Fatalf("%q twice", c.Name)
			}
			seen[k] = true
		}
	})
}
