package activity

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// searchSummary is a search's matches in short: app, title, domain,
// project and seconds, newest first.
func searchSummary(r *Search) []string {
	var out []string
	for _, m := range r.Matches {
		out = append(out, strings.Join([]string{m.Start.UTC().Format("15:04"), m.App, m.Title, m.Domain, m.Project,
			time.Duration(m.DurationS * float64(time.Second)).String()}, "|"))
	}
	return out
}

// TestSearchPrivateDesktop: over the private desktop (privateDesktop),
// the words all match, in any case, anywhere in the app, the title or the
// tab's domain as answers show them (title and URL rules applied), newest
// first, apart where another app came between; a word only an excluded
// app, a password manager, a private window or tab, a vault, a raw title
// before its rule or a URL's path or query holds matches nothing.
func TestSearchPrivateDesktop(t *testing.T) {
	env, clk := privateDesktop(t)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc, Privacy: privacySettings(t)})
	for _, c := range []struct {
		query  string
		want   []string
		totalS float64
	}{
		{"awbridge", []string{"09:50|Code|customer-[client].go — awbridge|||10m0s", "09:00|Code|main.go — awbridge|||10m0s"}, 1200},
		{"AWBRIDGE Main.GO code", []string{"09:00|Code|main.go — awbridge|||10m0s"}, 600},
		{"[client]", []string{"09:50|Code|customer-[client].go — awbridge|||10m0s"}, 600},
		{"mail.example.org", []string{"09:30|Google-chrome|Mail - Google Chrome|mail.example.org||10m0s"}, 600},
		{"org mail chrome", []string{"09:30|Google-chrome|Mail - Google Chrome|mail.example.org||10m0s"}, 600},
		{"awbridge mail", nil, 0}, // every word, in one stretch
		// Not the private window's time, nor the vault's, though their app matches.
		{"google-chrome", []string{"09:30|Google-chrome|Mail - Google Chrome|mail.example.org||10m0s"}, 600},
	} {
		r, err := s.Search(t.Context(), SearchQuery{Query: c.query})
		if err != nil {
			t.Fatal(err)
		}
		if got := searchSummary(r); strings.Join(got, "\n") != strings.Join(c.want, "\n") || r.TotalS != c.totalS || r.Count != len(c.want) {
			t.Errorf("%q: %q, total %v s, count %d; want %q, %v s", c.query, got, r.TotalS, r.Count, c.want, c.totalS)
		}
		if r.Period.Label != "last_30d" {
			t.Errorf("%q: period %s, want the default last_30d", c.query, r.Period.Label)
		}
	}
	for _, q := range []string{"secret", "merger", "excluded", "bank", "incognito", "keepass", "kdbx", "vault", "bitwarden",
		"acme", "mail.example.com", "inbox", "token", "abc123", "withheld"} {
		r, err := s.Search(t.Context(), SearchQuery{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(r); r.Count != 0 || r.TotalS != 0 || len(r.Matches) != 0 || !strings.Contains(string(b), "nothing matched") {
			t.Errorf("%q matches what privacy hides, or its answer lacks the note that nothing matched: %s", q, b)
		}
	}
	r, err := s.Search(t.Context(), SearchQuery{Query: "awbridge", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 1 || r.Count != 2 || r.TotalS != 1200 || r.Matches[0].Start.UTC().Hour() != 9 || r.Matches[0].Start.UTC().Minute() != 50 {
		t.Errorf("limit 1: %q, count %d, total %v; want the newest match, the count and total of both", searchSummary(r), r.Count, r.TotalS)
	}
}

// TestSearchEditor: the editor's project and file paths match on the
// editor's app's time only (not while another app has focus, not under an
// excluded app), the match naming the project as summaries do.
func TestSearchEditor(t *testing.T) {
	s, _ := editorDesktop(t)
	for _, c := range []struct {
		query  string
		want   []string
		totalS float64
	}{
		{"src/billing-api", []string{"09:00|Code|main.go - billing-api||src/billing-api|20m0s"}, 1200},
		{"billing-api main.go", []string{"09:30|Code|main.go - billing-api||old/billing-api|20m0s", "09:00|Code|main.go - billing-api||src/billing-api|20m0s"}, 2400},
		{"portal", nil, 0},   // the editor wrote while Chrome had focus
		{"index.ts", nil, 0}, // its file
		{"merger", nil, 0},   // under an excluded app
		{"deal.kt", nil, 0},
	} {
		r, err := s.Search(t.Context(), SearchQuery{Query: c.query, Period: "last_2h"})
		if err != nil {
			t.Fatal(err)
		}
		if got := searchSummary(r); strings.Join(got, "\n") != strings.Join(c.want, "\n") || r.TotalS != c.totalS {
			t.Errorf("%q: %q, total %v s; want %q, %v s", c.query, got, r.TotalS, c.want, c.totalS)
		}
	}
}

// TestSearchPrivacyFilters: the person's privacy filters apply first: a
// dropped window never matches, and a redacted title matches only its
// replacement, never the words it replaced. A private window never
// matches, by its title or its app.
func TestSearchPrivacyFilters(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := desktopEnv(t, at, [2]string{"aw-watcher-window_testhost", aw.TypeWindow}, [2]string{"aw-watcher-afk_testhost", aw.TypeAFK})
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	insert(t, env, "aw-watcher-afk_testhost", ev1(m(0), 3600, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(m(0), 600, `{"app":"Google-chrome","title":"ACME-1234 payroll export - Jira"}`),
		ev1(m(10), 600, `{"app":"Slack","title":"#hr-private | ACME-1234"}`),
		ev1(m(20), 600, `{"app":"Code","title":"ACME-1234 fix - awbridge"}`),
		ev1(m(30), 600, `{"app":"Firefox","title":"ACME-1234 — Mozilla Firefox Private Browsing"}`))
	postSetting(t, env, "privacy_filters", `[{"enabled":true,"field":"title","pattern":"payroll","action":"redact","replacement":"[hidden]"},`+
		`{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"#hr-","action":"drop"}]`)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc})
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"acme-1234", []string{"09:20|Code|ACME-1234 fix - awbridge|||10m0s"}},
		{"payroll", nil},
		{"slack", nil},
		{"firefox", nil}, // a private window, its app's name or not
		{"[hidden]", []string{"09:00|Google-chrome|[hidden]|||10m0s"}},
	} {
		r, err := s.Search(t.Context(), SearchQuery{Query: c.query, Period: "today"})
		if err != nil {
			t.Fatal(err)
		}
		if got := searchSummary(r); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%q: %q; want %q", c.query, got, c.want)
		}
	}
}

// TestSearchBadArguments: an empty, too long or too wordy query and a bad
// limit or period are *SpecErrors naming the argument.
func TestSearchBadArguments(t *testing.T) {
	env, clk := privateDesktop(t)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc})
	for _, c := range []struct {
		q   SearchQuery
		arg string
	}{
		{SearchQuery{Query: "  "}, "query"},
		{SearchQuery{Query: strings.Repeat("x", MaxSearchQuery+1)}, "query"},
		{SearchQuery{Query: "a b c d e f g h i j k l m n o p q"}, "query"}, // 17 words
		{SearchQuery{Query: "x", Limit: MaxSearchLimit + 1}, "limit"},
		{SearchQuery{Query: "x", Period: "fortnight"}, "period"},
	} {
		_, err := s.Search(t.Context(), c.q)
		var se *SpecError
		if !errors.As(err, &se) || se.Arg != c.arg {
			t.Errorf("%+v: %v, want a SpecError on %s", c.q, err, c.arg)
		}
	}
}
