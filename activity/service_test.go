package activity

import (
	"context"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
)

// clock is a settable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// newService is a Service over env's simulator at the clock's time, with
// o's settings.
func newService(t testing.TB, env *simEnv, clk *clock, o ServiceOptions) *Service {
	t.Helper()
	o.AW, o.Source, o.Now = env.client, env.src, clk.now
	if o.Zone == nil {
		o.Zone = func() Zone { return Zone{Name: "Europe/Berlin", Loc: env.h.Start.Location()} }
	}
	return NewService(o)
}

type queryEvent struct {
	Timestamp time.Time      `json:"timestamp"`
	Duration  float64        `json:"duration"`
	Data      map[string]any `json:"data"`
}

type queryResult struct {
	Events   []queryEvent `json:"events"`
	Browser  []queryEvent `json:"browser_events"`
	Duration float64      `json:"duration"`
}

// runQuery is the web UI's canonical query over p (the default
// categories), computed by package transform from the events the simulator
// answers for p, as one whole period: the summary's days, units and store
// must add up to it. The canonical query itself is held to aw-server by the
// recorded oracle (TestSummaryMatchesRealAW).
func runQuery(t *testing.T, env *simEnv, p Period) queryResult {
	t.Helper()
	var d transform.Decoder
	read := func(id string) []transform.Event {
		evs, err := env.client.Events(t.Context(), id, aw.EventQuery{Start: p.Start, End: p.End})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]transform.Event, len(evs))
		for i, e := range evs {
			out[i] = d.Event(e)
		}
		return out
	}
	in := transform.Input{Window: read(env.h.Window.ID), AFK: read(env.h.AFK.ID)}
	for _, bb := range transform.BrowserBuckets([]string{env.h.Chrome.ID, env.h.Firefox.ID}) {
		in.Browsers = append(in.Browsers, transform.Browser{Name: bb.Browser, Events: read(bb.BucketID)})
	}
	r, err := transform.CanonicalContext(t.Context(), in, transform.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var q queryResult
	for _, e := range r.Events {
		app, _ := e.Data.Str("app")
		title, _ := e.Data.Str("title")
		q.Events = append(q.Events, queryEvent{Duration: float64(e.Duration) / 1e6,
			Data: map[string]any{"app": app, "title": title, "$category": []any{r.Classes.Label(e.Data.Class())}}})
		q.Duration += float64(e.Duration) / 1e6
	}
	for _, e := range r.Browser {
		inc, _ := e.Data.Bool("incognito")
		dom, _ := e.Data.Str("$domain")
		q.Browser = append(q.Browser, queryEvent{Duration: float64(e.Duration) / 1e6, Data: map[string]any{"incognito": inc, "$domain": dom}})
	}
	return q
}

// expected are the rankings a summary must show for the query's events,
// privacy applied per event as the summary applies it.
type expected struct {
	active                     float64
	apps, titles, cats, domain map[string]float64
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func expect(q queryResult, pr *privacyRules) expected {
	x := expected{active: q.Duration, apps: map[string]float64{}, titles: map[string]float64{}, cats: map[string]float64{}, domain: map[string]float64{}}
	for _, e := range q.Events {
		v := pr.window(str(e.Data, "app"), str(e.Data, "title"))
		title := v.title // an excluded app's is "", its app "excluded"
		if v.withheld {
			title = KeyWithheld
		}
		x.apps[v.app] += e.Duration
		x.titles[v.app+" | "+title] += e.Duration
		cat := KeyExcluded
		if !v.excluded {
			var name []string
			for _, n := range e.Data["$category"].([]any) {
				name = append(name, n.(string))
			}
			cat = transform.CategoryName(name)
		}
		x.cats[cat] += e.Duration
	}
	for _, e := range q.Browser {
		if inc, _ := e.Data["incognito"].(bool); inc {
			continue
		}
		x.domain[str(e.Data, "$domain")] += e.Duration
	}
	return x
}

// got lists a summary's ranking by key ("app | title" for titles).
func got(es []Entry, titles bool) map[string]float64 {
	m := map[string]float64{}
	for _, e := range es {
		k := e.Key
		switch {
		case titles && e.Excluded:
			k = KeyExcluded + " | "
		case titles:
			k = e.App + " | " + e.Key
		}
		m[k] += e.DurationS
	}
	return m
}

// within compares rankings entry by entry, within one second.
func within(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k, v := range want {
		if v >= 0.05 {
			keys[k] = true
		}
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	bad := 0
	for _, k := range ks {
		if d := math.Abs(got[k] - want[k]); d > 1 {
			bad++
			if bad <= 10 {
				t.Errorf("%s %q: %.1f s, ActivityWatch's query %.1f s", what, k, got[k], want[k])
			}
		}
	}
	if bad > 10 {
		t.Errorf("%s: %d entries differ", what, bad)
	}
}

// checkSummary compares every ranking of the summaries of p with the
// query's.
func checkSummary(t *testing.T, env *simEnv, s *Service, period, start, end string) {
	t.Helper()
	ctx := context.Background()
	all := map[string]*Summary{}
	for _, g := range []string{GroupByApp, GroupByTitle, GroupByDomain, GroupByCategory} {
		sum, err := s.Summary(ctx, SummaryQuery{Period: period, Start: start, End: end, GroupBy: g, Limit: MaxSummaryLimit})
		if err != nil {
			t.Fatal(err)
		}
		all[g] = sum
	}
	p := all[GroupByApp].Period
	x := expect(runQuery(t, env, p), s.pr)
	if math.Abs(all[GroupByApp].ActiveS-x.active) > 1 {
		t.Errorf("%s: active %.1f s, ActivityWatch's query %.1f s", period, all[GroupByApp].ActiveS, x.active)
	}
	within(t, period+" apps", got(all[GroupByApp].Top, false), x.apps)
	within(t, period+" titles", got(all[GroupByTitle].Top, true), x.titles)
	within(t, period+" categories", got(all[GroupByCategory].Top, false), x.cats)
	within(t, period+" domains", got(all[GroupByDomain].Top, false), x.domain)
	if x.active > 0 && len(all[GroupByApp].Top) == 0 {
		t.Errorf("%s: no entries", period)
	}
}

// TestSummaryMatchesCanonicalQuery computes the web UI's canonical query
// over each whole period (runQuery) and compares
// every entry of every ranking (apps, titles, categories, domains) and
// the active time with the summary's, within one second: over a week cut
// into days and hours, across the spring daylight-saving change.
func TestSummaryMatchesCanonicalQuery(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: env.now}
	s := newService(t, env, clk, ServiceOptions{})
	for _, c := range []struct{ period, start, end string }{
		{"this_week", "", ""},
		{"today", "", ""}, // the spring-forward day, still open: hour units
		{"yesterday", "", ""},
		{"last_7d", "", ""},
		{"", "2026-03-25T10:17:00+01:00", "2026-03-27T15:45:30.5+01:00"},
	} {
		t.Run(c.period+c.start, func(t *testing.T) { checkSummary(t, env, s, c.period, c.start, c.end) })
	}
	// Warm: the same answers from the store.
	checkSummary(t, env, s, "this_week", "", "")
}

// TestSummaryDaylightSavingDays: a whole 23-hour day (spring) and a
// whole 25-hour day (autumn) match the query.
func TestSummaryDaylightSavingDays(t *testing.T) {
	loc := env0Loc(t)
	for _, c := range []struct {
		name  string
		start time.Time
		day   time.Time // a day after the change, for "yesterday"
		hours float64
	}{
		{"spring", time.Date(2026, 3, 23, 0, 0, 0, 0, loc), time.Date(2026, 3, 29, 10, 0, 0, 0, loc), 23},
		{"autumn", time.Date(2026, 10, 19, 0, 0, 0, 0, loc), time.Date(2026, 10, 25, 10, 0, 0, 0, loc), 25},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newSimEnv(t, envOptions{week: activitytest.WeekOptions{WindowEvents: 4000, Start: c.start}})
			clk := &clock{t: c.day}
			s := newService(t, env, clk, ServiceOptions{})
			sum, err := s.Summary(context.Background(), SummaryQuery{Period: "yesterday"})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Period.DurationS != c.hours*3600 {
				t.Errorf("yesterday lasts %v s, want %v h", sum.Period.DurationS, c.hours)
			}
			if sum.ActiveS == 0 {
				t.Errorf("no activity on the day of the change")
			}
			checkSummary(t, env, s, "yesterday", "", "")
			checkSummary(t, env, s, "last_week", "", "")
		})
	}
}

func env0Loc(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// postSetting stores an ActivityWatch setting as the web UI does.
func postSetting(t *testing.T, env *simEnv, key, value string) {
	t.Helper()
	resp, err := http.Post(env.srv.URL+"/api/0/settings/"+key, "application/json", strings.NewReader(value))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", key, resp.Status)
	}
}

// TestSummaryDaysCutInsideSessions: with ActivityWatch's day starting at
// noon, every day boundary (and every hour of the open day) cuts the
// activity; the units, computed with the time around them and cut,
// still add up to the query's totals over the whole period.
func TestSummaryDaysCutInsideSessions(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, fresh: true})
	postSetting(t, env, "startOfDay", `"12:00"`)
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	for _, p := range []string{"this_week", "yesterday", "today", "last_3d"} {
		t.Run(p, func(t *testing.T) { checkSummary(t, env, s, p, "", "") })
	}
}
