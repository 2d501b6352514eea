package transform

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"testing"
)

// webUISetting is a classes setting as the web UI writes it (cleanCategory:
// no ids, "none" rules without a regex).
const webUISetting = `[
 {"name": ["Work"], "rule": {"type": "regex", "regex": "Google Docs|libreoffice"}, "data": {"color": "#0F0", "score": 10}},
 {"name": ["Work", "Programming"], "rule": {"type": "regex", "regex": "GitHub|vim", "ignore_case": true}},
 {"name": ["Media"], "rule": {"type": "none"}, "data": {"color": "#F33"}},
 {"name": ["Media", "Video"], "rule": {"type": "regex", "regex": "YouTube"}},
 {"name": ["Uncategorized"], "rule": {"type": null}, "data": {"color": "#CCC"}},
 {"name": ["Keys"], "rule": {"type": "regex", "regex": "^zz$", "select_keys": ["title", 5]}}
]`

func TestParseClasses(t *testing.T) {
	cs, err := ParseClasses([]byte(webUISetting))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for i := range cs {
		labels = append(labels, cs.Label(i))
	}
	want := []string{"Work", "Work > Programming", "Media", "Media > Video", "Keys"}
	if !slices.Equal(labels, want) {
		t.Fatalf("classes %q, want %q", labels, want)
	}
	for _, c := range []struct {
		data Fields
		want string
	}{
		{strs("app", "Firefox", "title", "ActivityWatch/aw-core · github"), "Work > Programming"}, // ignore_case
		{strs("app", "Firefox", "title", "YouTube - Firefox"), "Media > Video"},
		{strs("app", "LibreOffice", "title", "x"), Uncategorized}, // case matters without ignore_case
		{strs("app", "zz"), Uncategorized},                        // select_keys: only title
		{strs("app", "a", "title", "zz"), "Keys"},
	} {
		if got := cs.Label(cs.Categorize(c.data)); got != c.want {
			t.Errorf("%v: %q, want %q", c.data, got, c.want)
		}
	}

	for _, unset := range []string{"", "null", " null\n"} {
		cs, err := ParseClasses([]byte(unset))
		if err != nil || len(cs) != len(DefaultClasses()) {
			t.Errorf("setting %q: %d classes, %v; want the defaults", unset, len(cs), err)
		}
	}
	for _, bad := range []string{`{"name": ["x"]}`, `"classes"`, `[`, `5`,
		`[{"name": ["Bad"], "rule": {"type": "regex", "regex": "(?<=x)y"}}]`,
		`[{"name": "not a list", "rule": {"type": "regex", "regex": "x"}}]`,
		`[{"name": ["No rule"]}]`, `[{"name": ["x"], "rule": {"regex": 5}}]`} {
		if cs, err := ParseClasses([]byte(bad)); !errors.Is(err, ErrClassesSetting) || cs != nil {
			t.Errorf("setting %q: %v, %v; want ErrClassesSetting", bad, cs, err)
		}
	}
	if cs, err := ParseClasses([]byte(`[]`)); err != nil || cs == nil || len(cs) != 0 {
		t.Errorf("an empty setting: %v, %v; want no classes (all Uncategorized)", cs, err)
	}
}

func TestDefaultClasses(t *testing.T) {
	cs := DefaultClasses()
	for _, c := range []struct {
		app, title, want string
	}{
		{"Code", "main.go - awbridge - Visual Studio Code", Uncategorized},
		{"Code", "aw-server - Visual Studio Code", "Work > Programming > ActivityWatch"},
		{"Google-chrome", "Issues · ActivityWatch/aw-server · GitHub", "Work > Programming > ActivityWatch"},
		{"Google-chrome", "Pull requests · GitHub", "Work > Programming"},
		{"Slack", "Slack | #dev", "Comms > IM"},
		{"Firefox", "Inbox - Gmail", "Comms > Email"},
		{"Firefox", "REDDIT", "Media > Social Media"},
		{"vlc", "x", Uncategorized},
		{"VLC", "x", "Media > Video"},
	} {
		if got := cs.Label(cs.Categorize(strs("app", c.app, "title", c.title))); got != c.want {
			t.Errorf("%s / %s: %q, want %q", c.app, c.title, got, c.want)
		}
	}
	for i, c := range cs {
		if c.Rule.Regex != "" && c.Rule.re == nil {
			t.Errorf("default class %d does not compile", i)
		}
	}
}

// settingOf writes classes back as a setting.
func settingOf(cs Classes) []byte {
	type rule struct {
		Type       string   `json:"type"`
		Regex      string   `json:"regex,omitempty"`
		IgnoreCase bool     `json:"ignore_case,omitempty"`
		SelectKeys []string `json:"select_keys,omitempty"`
	}
	type entry struct {
		Name []string `json:"name"`
		Rule rule     `json:"rule"`
	}
	out := []entry{}
	for _, c := range cs {
		out = append(out, entry{c.Name, rule{"regex", c.Rule.Regex, c.Rule.IgnoreCase, c.Rule.SelectKeys}})
	}
	b, _ := json.Marshal(out)
	return b
}

func FuzzParseClasses(f *testing.F) {
	f.Add([]byte(webUISetting))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"name":[],"rule":{"regex":"","ignore_case":1,"select_keys":[]}}]`))
	f.Add([]byte(`[{"name":["a"],"rule":{"type":null}},{"name":["b"],"rule":{"regex":["x"]}}]`))
	f.Add([]byte(`[{"name":["a"],"rule":{"regex":"(?<=x)"}}]`))
	f.Fuzz(func(t *testing.T, setting []byte) {
		cs, err := ParseClasses(setting)
		switch {
		case err == nil:
		case errors.Is(err, ErrClassesSetting):
			if cs != nil {
				t.Fatalf("classes %v with %v", cs, err)
			}
			return
		default:
			t.Fatalf("unexpected error %v", err)
		}
		for _, c := range cs {
			if c.Name == nil {
				t.Fatal("a class without a name list")
			}
			c.Rule.Match(strs("app", "a", "title", "b"))
		}
		// Writing the classes back and reading them again gives the same
		// classes.
		again, err := ParseClasses(settingOf(cs))
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if len(again) != len(cs) {
			t.Fatalf("re-read %d classes, had %d", len(again), len(cs))
		}
		for i := range cs {
			a, b := cs[i], again[i]
			if !slices.Equal(a.Name, b.Name) || a.Rule.Regex != b.Rule.Regex || a.Rule.IgnoreCase != b.Rule.IgnoreCase ||
				len(a.Rule.SelectKeys) != len(b.Rule.SelectKeys) || (a.Rule.re == nil) != (b.Rule.re == nil) {
				t.Fatalf("class %d: %+v re-read as %+v", i, a, b)
			}
		}
	})
}

// TestRuleWords checks the fast path of rules made of words against the
// regex itself.
func TestRuleWords(t *testing.T) {
	values := []string{"", "GitHub", "github", "x GITHUB y", "Stack Overflow — q", "stack overflow", "aw-server", "AW-QT", "Kate", "kate",
		"\u212aate", "\u017fpotify", "Spotify", "SPOTIFY premium", "a|b", "Gmail — Inbox", "vimrc", "ré", "RÉ"}
	for _, c := range []struct {
		pattern string
		fold    bool
		words   bool
	}{
		{"GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite", false, true},
		{"GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite", true, true},
		{"ActivityWatch|aw-", true, true},
		{"Spotify|Deezer", true, true},
		{"ré", false, true},
		{"ré", true, false},
		{"a||b", false, false},
		{"^vim", false, false},
	} {
		r, err := NewRule(c.pattern, c.fold, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (r.lit != nil) != c.words {
			t.Errorf("%q (fold %v): words %v, want %v", c.pattern, c.fold, r.lit != nil, c.words)
		}
		for _, v := range values {
			if got, want := r.matchString(v), r.re.MatchString(v); got != want {
				t.Errorf("%q (fold %v) on %q: %v, the regex says %v", c.pattern, c.fold, v, got, want)
			}
		}
	}
}

// FuzzRuleWords compares a rule's fast word search with its regex.
func FuzzRuleWords(f *testing.F) {
	f.Add("GitHub|Stack Overflow|vim", false, "x stack overflow GitHub")
	f.Add("ActivityWatch|aw-", true, "AW-server \u212a")
	f.Fuzz(func(t *testing.T, pattern string, fold bool, value string) {
		r, err := NewRule(pattern, fold, nil)
		if err != nil || r.lit == nil {
			return
		}
		if got, want := r.matchString(value), r.re.MatchString(value); got != want {
			t.Fatalf("%q (fold %v) on %q: %v, the regex says %v", pattern, fold, value, got, want)
		}
	})
}

func TestBrowserBuckets(t *testing.T) {
	got := BrowserBuckets([]string{"aw-watcher-web-firefox_h", "aw-watcher-web-chrome_h", "aw-watcher-web-chrome-2_h", "aw-watcher-web-arc_h", "aw-watcher-web_h"})
	want := []BrowserBucket{{"chrome", "aw-watcher-web-chrome_h"}, {"firefox", "aw-watcher-web-firefox_h"}, {"arc", "aw-watcher-web-arc_h"}}
	if !slices.Equal(got, want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	// The web UI's patterns as aw-core receives them.
	for _, c := range []struct {
		browser, app string
		want         bool
	}{
		{"chrome", "Google-chrome", true}, {"chrome", "chromium-browser", true}, {"chrome", "com.google.Chrome", false},
		{"firefox", "org.mozilla.firefox", true}, {"firefox", "Firefox.exe", true}, {"edge", "msedge.exe", true},
		{"arc", "Arc", true}, {"arc", "Arc.exe", false},
	} {
		_, pattern, ok := BrowserApps(c.browser)
		if got := ok && regexp.MustCompile(pattern).MatchString(c.app); got != c.want {
			t.Errorf("%s pattern on %q: %v, want %v", c.browser, c.app, got, c.want)
		}
	}
}
