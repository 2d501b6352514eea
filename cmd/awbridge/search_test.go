package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
)

// TestActivitySearch drives activity_search in the real binary over the
// hostile and private desktop (actHostileDesktop): a word that only an
// excluded app, a private window or tab, a masked secret, a URL's token or
// a title before its rule holds matches nothing and shows nowhere; what
// the answers show is found, newest first, with its domain; no string
// holds a control or invisible character; a bad query or limit is an
// InvalidArgument naming it, and the process keeps serving.
func TestActivitySearch(t *testing.T) {
	now := time.Now()
	sim := newActSim(t, actHostileDesktop(now), nil)
	b := actSession(t, actEnv(t, sim.URL(), "AWBRIDGE_EXCLUDE_APPS="+actExcludedApp, "AWBRIDGE_TITLE_RULES="+actTitleRuleIn+" => "+actTitleRuleOut))
	never := []string{actExcludedApp, "Dear diary", actPrivateHost, "Bank statement", "Incognito", actSecretKey[len("sk-ant-api03-"):][:24],
		actURLToken, "token=", actTitleRuleIn}
	for _, q := range never {
		var r activity.Search
		env := actResult(b, "activity_search", map[string]any{"query": q, "period": "last_2h"}, &r)
		if r.Count != 0 || r.TotalS != 0 || len(r.Matches) != 0 {
			t.Errorf("%q, hidden by privacy, matches: %s", q, clipLine(string(env.Result), 800))
		}
	}
	for _, c := range []struct {
		query, title, domain string
	}{
		{"shared DOC", "Shared doc - Google Chrome", "docs.example.com"},
		{actTitleRuleOut + " roadmap", actTitleRuleOut + " roadmap - LibreOffice Writer", ""},
		{"docs.example.com", "Shared doc - Google Chrome", "docs.example.com"},
	} {
		var r activity.Search
		env := actResult(b, "activity_search", map[string]any{"query": c.query, "period": "last_2h", "limit": 3}, &r)
		if r.Count != 6 || len(r.Matches) != 3 || r.TotalS < 6*70-2 || r.TotalS > 6*70+2 {
			t.Errorf("%q: %d matches (%d shown), %.1f s; want the 6 cycles' 70 s each, 3 shown: %s", c.query, r.Count, len(r.Matches), r.TotalS,
				clipLine(string(env.Result), 800))
			continue
		}
		for i, m := range r.Matches {
			if m.Title != c.title || m.Domain != c.domain || (i > 0 && !m.Start.Before(r.Matches[i-1].Start)) {
				t.Errorf("%q: match %d is %+v, want title %q, domain %q, newest first", c.query, i, m, c.title, c.domain)
			}
		}
		var v any
		_ = json.Unmarshal(env.raw, &v)
		eachString("", v, func(path, s string) {
			if i := strings.IndexFunc(s, actUnsafeRune); i >= 0 {
				t.Errorf("%q: %s holds the control or invisible character %U", c.query, path, []rune(s[i:])[0])
			}
		})
	}
	for _, c := range []struct {
		args map[string]any
		arg  string
	}{
		{map[string]any{"query": " "}, "query"},
		{map[string]any{}, "query"},
		{map[string]any{"query": strings.Repeat("x", activity.MaxSearchQuery+1)}, "query"},
		{map[string]any{"query": "x", "limit": 0}, "limit"},
		{map[string]any{"query": "x", "limit": activity.MaxSearchLimit + 1}, "limit"},
		{map[string]any{"query": "x", "period": "fortnight"}, "period"},
	} {
		env, isErr := b.tool("activity_search", c.args)
		checkRefusal(t, "activity_search "+c.arg, env, isErr, c.arg)
		b.ping()
	}
	b.close()
}
