package activity

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// editorDesktop is an hour with two editors: VS Code in billing-api
// (two events 3 s apart, which flooding joins), then in a project a title
// rule rewrites while Chrome has focus, then in another billing-api; a
// second editor writes while an excluded app has focus.
func editorDesktop(t *testing.T) (*Service, *clock) {
	t.Helper()
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := desktopEnv(t, at, [2]string{"aw-watcher-window_testhost", aw.TypeWindow}, [2]string{"aw-watcher-afk_testhost", aw.TypeAFK},
		[2]string{"aw-watcher-vscode_testhost", editorType}, [2]string{"aw-watcher-jetbrains_testhost", editorType})
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	ed := func(project, file, lang string) string {
		return fmt.Sprintf(`{"project":%q,"file":%q,"language":%q}`, project, project+"/"+file, lang)
	}
	insert(t, env, "aw-watcher-afk_testhost", ev1(m(-30), 1800, `{"status":"afk"}`), ev1(m(0), 3600, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(m(0), 1200, `{"app":"Code","title":"main.go - billing-api"}`),
		ev1(m(20), 600, `{"app":"Google-chrome","title":"Docs - Google Chrome"}`),
		ev1(m(30), 1200, `{"app":"Code","title":"main.go - billing-api"}`),
		ev1(m(50), 600, `{"app":"Secret App","title":"plans"}`))
	insert(t, env, "aw-watcher-vscode_testhost",
		ev1(m(0), 597, ed("/home/me/src/billing-api", "main.go", "go")),
		ev1(m(10), 600, ed("/home/me/src/billing-api", "main.go", "go")),
		ev1(m(20), 300, ed(`C:\work\acme-portal`, "index.ts", "typescript")),
		ev1(m(30), 1200, ed("/home/me/old/billing-api", "main.go", "go")))
	insert(t, env, "aw-watcher-jetbrains_testhost", ev1(m(50), 600, ed("/home/me/merger-plans", "deal.kt", "kotlin")))
	return NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc, Privacy: privacySettings(t)}), clk
}

// TestEditorGroups: group_by project, language and file sum both
// editors' flooded time (not cut by the window's app), name projects and
// files by their folder's name or enough of the path to tell two apart,
// pass paths through the title rules, and show the editor of an excluded
// app as excluded, its paths nowhere; include_afk adds no AFK entry (editor
// time is not cut by it).
func TestEditorGroups(t *testing.T) {
	s, _ := editorDesktop(t)
	var all []string
	for _, c := range []struct {
		group string
		want  map[string]float64
	}{
		{GroupByProject, map[string]float64{"src/billing-api": 1200, "old/billing-api": 1200, "[client]-portal": 300, KeyExcluded: 600}},
		{GroupByLanguage, map[string]float64{"go": 2400, "typescript": 300, KeyExcluded: 600}},
		{GroupByFile, map[string]float64{"src/billing-api/main.go go": 1200, "old/billing-api/main.go go": 1200, "index.ts typescript": 300, KeyExcluded + " ": 600}},
	} {
		sum, err := s.Summary(t.Context(), SummaryQuery{Period: "last_2h", GroupBy: c.group, IncludeAFK: true})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(sum)
		all = append(all, string(b))
		got := map[string]float64{}
		for _, e := range sum.Top {
			k := e.Key
			if c.group == GroupByFile {
				k += " " + e.Language
			}
			got[k] += e.DurationS
		}
		if !maps.Equal(got, c.want) || sum.EditorS != 3300 || sum.ActiveS != 3600 {
			t.Errorf("%s: %v, editor_s %v, active_s %v; want %v, 3300, 3600", c.group, got, sum.EditorS, sum.ActiveS, c.want)
		}
	}
	zero := 0
	tl, err := s.Timeline(t.Context(), TimelineQuery{Period: "last_2h", MinBlockS: &zero})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tl)
	all = append(all, string(b))
	var projects []string
	for _, b := range tl.Blocks {
		if b.Gap == "" {
			projects = append(projects, b.App+":"+b.Project)
		}
	}
	// Chrome's block is not the editor's, though VS Code wrote then.
	if want := "Code:src/billing-api Google-chrome: Code:old/billing-api excluded:"; strings.Join(projects, " ") != want {
		t.Errorf("timeline blocks %v, want %s", projects, want)
	}
	for _, secret := range []string{"merger", "deal.kt", "kotlin", "acme"} {
		if text := strings.Join(all, "\n"); strings.Contains(text, secret) {
			t.Errorf("%q appears in an answer", secret)
		}
	}
}

// TestNoEditorWatcher: without an editor bucket, a grouping by editor
// time is an error on group_by that names the watcher, not zero time.
func TestNoEditorWatcher(t *testing.T) {
	env, clk := privateDesktop(t)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc})
	for _, g := range []string{GroupByProject, GroupByLanguage, GroupByFile} {
		_, err := s.Summary(t.Context(), SummaryQuery{Period: "today", GroupBy: g})
		var se *SpecError
		if !errors.As(err, &se) || se.Arg != "group_by" || !strings.Contains(se.Problem, "aw-watcher-vscode") {
			t.Errorf("%s: %v, want a SpecError on group_by naming an editor watcher", g, err)
		}
	}
}

func TestShortNames(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  map[string]string
	}{
		{[]string{"/home/me/src/awbridge", "/home/me/src/infra/"}, map[string]string{"/home/me/src/awbridge": "awbridge", "/home/me/src/infra/": "infra"}},
		{[]string{"/a/src/api", "/b/src/api", "/b/old/api"}, map[string]string{"/a/src/api": "a/src/api", "/b/src/api": "b/src/api", "/b/old/api": "old/api"}},
		{[]string{`C:\work\api`, "/home/me/api"}, map[string]string{`C:\work\api`: "work/api", "/home/me/api": "me/api"}},
		{[]string{"/x/api", "/y/x/api", ""}, map[string]string{"/x/api": "/x/api", "/y/x/api": "y/x/api", "": noneKey}},
		{[]string{"/api", "api"}, map[string]string{"/api": "/api", "api": "api"}},
		{[]string{"/1/a/a/a/a/a/a/a/a/a", "/2/a/a/a/a/a/a/a/a/a"}, map[string]string{"/1/a/a/a/a/a/a/a/a/a": "/1/a/a/a/a/a/a/a/a/a", "/2/a/a/a/a/a/a/a/a/a": "/2/a/a/a/a/a/a/a/a/a"}},
	} {
		if got := shortNames(c.paths); !maps.Equal(got, c.want) {
			t.Errorf("shortNames(%q) = %v, want %v", c.paths, got, c.want)
		}
	}
}

// TestEditorHostilePaths: an editor's data is any local program's text:
// escapes and invisible characters are removed, a long path is bounded,
// a value that is not a string is shown as its JSON text (the web UI
// groups it apart too), and thousands of paths
// sharing a deep suffix are named quickly.
func TestEditorHostilePaths(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := desktopEnv(t, at, [2]string{"aw-watcher-window_testhost", aw.TypeWindow}, [2]string{"aw-watcher-afk_testhost", aw.TypeAFK},
		[2]string{"aw-watcher-vscode_testhost", editorType})
	insert(t, env, "aw-watcher-afk_testhost", ev1(at, 3600, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost", ev1(at, 3600, `{"app":"Code","title":"x"}`))
	deep := strings.Repeat("/a", 40)
	var evs []string
	for i := range 3000 {
		evs = append(evs, ev1(at.Add(time.Duration(i)*time.Second), 1, fmt.Sprintf(`{"project":"/p%d%s"}`, i, deep)))
	}
	evs = append(evs, ev1(at.Add(time.Hour-3*time.Minute), 60, `{"project":"/home/me/\u001b[2Jevil\u200b-proj"}`),
		ev1(at.Add(time.Hour-2*time.Minute), 60, `{"project":42}`),
		ev1(at.Add(time.Hour-time.Minute), 60, `{"project":"/`+strings.Repeat("long", 5000)+`"}`))
	insert(t, env, "aw-watcher-vscode_testhost", evs...)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc})
	start := time.Now()
	sum, err := s.Summary(t.Context(), SummaryQuery{Period: "last_2h", GroupBy: GroupByProject, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("3,000 deep paths took %s", d)
	}
	keys := map[string]bool{}
	for _, e := range sum.Top {
		keys[e.Key] = true
		if strings.ContainsAny(e.Key, "\x1b\u200b") || len([]rune(e.Key)) > 300 {
			t.Errorf("project %q (%d runes) shown", e.Key, len([]rune(e.Key)))
		}
	}
	if !keys["evil-proj"] || !keys["42"] {
		t.Errorf("projects %v, want evil-proj and 42", keys)
	}
}
