package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/transform"
)

// TestHostileClassesFallBackToDefaults: any local program can write
// ActivityWatch's classes and category_sets settings. One beyond awbridge's bounds (a rule
// of 7 MB; 5,000 rules) is not used: the summary answers with the
// default categories and says so, and the call's allocations stay far
// below what compiling the rules cost (over 1 GiB for a 7.7 MB rule).
func TestHostileClassesFallBackToDefaults(t *testing.T) {
	rule := func(name, regex string) string {
		r, _ := json.Marshal(regex)
		return fmt.Sprintf(`{"name":[%q],"rule":{"type":"regex","regex":%s}}`, name, r)
	}
	many := make([]string, 5000)
	for i := range many {
		many[i] = rule(fmt.Sprintf("Hostile %d", i), fmt.Sprintf("(GitHub|Slack)%d?", i))
	}
	for _, c := range []struct {
		name, key, setting string
	}{
		{"a 7 MB rule", "classes", "[" + rule("Hostile", "(GitHub|"+strings.Repeat("ab|", 7<<20/3)+"c)") + "]"},
		{"5,000 rules", "classes", "[" + strings.Join(many, ",") + "]"},
		{"a 7 MB category set", "category_sets", `[{"id":"x","categories":[` + rule("Hostile", "(GitHub|"+strings.Repeat("ab|", 7<<20/3)+"c)") + "]}]"},
		{"5,000 rules in a category set", "category_sets", `[{"id":"x","categories":[` + strings.Join(many, ",") + "]}]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
			env, clk := reviewDesktop(t, at.Add(time.Hour))
			insert(t, env, "aw-watcher-afk_testhost", ev1(at, 3600, `{"status":"not-afk"}`))
			var win []string
			for i := range 60 {
				win = append(win, ev1(at.Add(time.Duration(i)*time.Minute), 60,
					fmt.Sprintf(`{"app":"Google-chrome","title":"issue %d · GitHub - Google Chrome"}`, i)))
			}
			insert(t, env, "aw-watcher-window_testhost", win...)
			postSetting(t, env, c.key, c.setting)
			s := reviewService(env, clk, ServiceOptions{})

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			sum, err := s.Summary(context.Background(), SummaryQuery{Period: "last_1h", GroupBy: GroupByApp, Limit: 10})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("the call allocated %d MiB", alloc>>20)
			} else {
				t.Logf("the call allocated %.1f MiB", float64(alloc)/(1<<20))
			}
			if len(sum.Categories) != 1 || sum.Categories[0].Key != "Work > Programming" {
				t.Errorf("categories %+v, want the default Work > Programming", sum.Categories)
			}
			want := "ActivityWatch's " + c.key + " setting could not be used: the default categories apply"
			if !strings.Contains(strings.Join(sum.Notes, "\n"), want) {
				t.Errorf("notes %q lack %q", sum.Notes, want)
			}
		})
	}
}

// TestComputeUnitCancelled: a unit whose call ended while its titles were
// categorized by many rules gives the context's error and no result (the
// context is checked inside the categorizing loop, not only between
// units).
func TestComputeUnitCancelled(t *testing.T) {
	rules := make([]string, transform.MaxClasses)
	for i := range rules {
		rules[i] = fmt.Sprintf(`{"name":["Work","P%d"],"rule":{"regex":"(proj|task)-%d\\b"}}`, i, i)
	}
	cs, err := transform.ParseClasses([]byte("[" + strings.Join(rules, ",") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	s := transform.Second
	var in transform.Input
	for i := range int64(3000) {
		in.Window = append(in.Window, ev{ID: i + 1, Start: i * s, Duration: s,
			Data: transform.Fields{}.With("app", "Code").With("title", fmt.Sprintf("file%d.go - task-%d - Code", i, i))})
	}
	in.AFK = []ev{{ID: 1, Start: 0, Duration: 3000 * s, Data: transform.Fields{}.With("status", "not-afk")}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u, err := computeUnit(ctx, []transform.Input{in}, span64{0, 3000 * s}, transform.Options{Classes: cs}, &privacyRules{})
	if !errors.Is(err, context.Canceled) || u != nil {
		t.Fatalf("unit %v, %v; want none and Canceled", u != nil, err)
	}
}

// TestHostileEvents: whatever a watcher (or anything that can POST to
// ActivityWatch) stored, a summary is sane: no error, no negative time, no
// more active time than the period holds, and the top entries with the
// rest add up to the active time.
func TestHostileEvents(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	notAFK := ev1(m(0), 3600, `{"status":"not-afk"}`)
	for _, c := range []struct {
		name   string
		window []string
		afk    []string
	}{
		{"overlapping", []string{ev1(m(0), 1800, `{"app":"Code","title":"a"}`), ev1(m(10), 1800, `{"app":"Slack","title":"b"}`)}, nil},
		{"in the future", []string{ev1(m(0), 600, `{"app":"Code","title":"a"}`), ev1(m(120), 600, `{"app":"Later","title":"b"}`)}, nil},
		{"non-string app", []string{ev1(m(0), 600, `{"app":7,"title":"a"}`), ev1(m(10), 600, `{"app":null,"title":["x"]}`),
			ev1(m(20), 600, `{"app":{"k":"v"}}`)}, nil},
		{"missing title", []string{ev1(m(0), 600, `{"app":"Code"}`)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			env, clk := reviewDesktop(t, at.Add(time.Hour))
			afk := c.afk
			if afk == nil {
				afk = []string{notAFK}
			}
			insert(t, env, "aw-watcher-afk_testhost", afk...)
			insert(t, env, "aw-watcher-window_testhost", c.window...)
			s := reviewService(env, clk, ServiceOptions{})
			for _, g := range []string{GroupByApp, GroupByTitle, GroupByCategory} {
				sum, err := s.Summary(ctx, SummaryQuery{Period: "last_1h", GroupBy: g, Limit: 100})
				if err != nil {
					t.Fatalf("%s: %v", g, err)
				}
				if sum.ActiveS < 0 || sum.ActiveS > 3600 || sum.AFKS < 0 {
					t.Errorf("%s: active %v s, away %v s in an hour", g, sum.ActiveS, sum.AFKS)
				}
				total := sum.OtherS
				for _, e := range sum.Top {
					if e.DurationS < 0 || e.Share < 0 || e.Share > 1 {
						t.Errorf("%s: entry %+v", g, e)
					}
					total += e.DurationS
				}
				if d := total - sum.ActiveS; d > 0.1*float64(len(sum.Top)+1) || d < -0.1*float64(len(sum.Top)+1) {
					t.Errorf("%s: entries add up to %v s, active is %v s", g, total, sum.ActiveS)
				}
				if f := sum.LongestFocus; f != nil && (f.DurationS < 0 || f.DurationS > 3600) {
					t.Errorf("%s: longest focus %+v", g, f)
				}
			}
			zero := 0
			tl, err := s.Timeline(ctx, TimelineQuery{Period: "last_1h", MinBlockS: &zero, Limit: MaxTimelineLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range tl.Blocks {
				if b.DurationS < 0 || !b.End.After(b.Start) {
					t.Errorf("timeline block %+v", b)
				}
			}
			h, err := s.History(ctx, HistoryQuery{Minutes: 60})
			if err != nil {
				t.Fatal(err)
			}
			for _, sw := range h.Switches {
				if sw.DurationS < 0 {
					t.Errorf("history switch %+v", sw)
				}
			}
		})
	}
}

// TestOneMalformedEventDoesNotFailThePeriod: ActivityWatch stores what a
// watcher (or any local process: its API has no authentication) posts;
// aw-core's event schema allows any number as a duration, and aw-server
// keeps data it does not validate. One such stored event (a negative
// duration, as aw-core's flood warns about; data that is not an object,
// which the simulator, like aw-server, stores) makes every
// activity call whose period contains it fail: "activitywatch: aw events:
// malformed response: event 1: duration is out of range", for today, this
// week and every last_Nd until the event leaves the period, while
// ActivityWatch's own dashboard shows the day. Expected: the summary is
// answered, the malformed event skipped (or its duration taken as 0), the
// rest of the day counted (Code's 20 minutes here), perhaps with a note.
func TestOneMalformedEventDoesNotFailThePeriod(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	for _, c := range []struct{ name, bad string }{
		{"negative duration", ev1(m(20), -300, `{"app":"Evil","title":"b"}`)},
		{"data not an object", ev1(m(20), 60, `"just a string"`)},
		// aw-server stores and serves data of any nesting; the whole
		// answer used to break the decoder's depth bound (64).
		{"data nested 70 levels", ev1(m(20), 60, strings.Repeat(`{"a":`, 70)+`1`+strings.Repeat(`}`, 70))},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			env, clk := reviewDesktop(t, at.Add(time.Hour))
			insert(t, env, "aw-watcher-afk_testhost", ev1(m(0), 3600, `{"status":"not-afk"}`))
			insert(t, env, "aw-watcher-window_testhost",
				ev1(m(0), 600, `{"app":"Code","title":"a"}`), c.bad, ev1(m(30), 600, `{"app":"Code","title":"a"}`))
			s := reviewService(env, clk, ServiceOptions{})
			for _, p := range []string{"today", "last_366d"} {
				sum, err := s.Summary(ctx, SummaryQuery{Period: p})
				if err != nil {
					t.Fatalf("one malformed stored event fails %s's summary: %v", p, err)
				}
				if got := got(sum.Top, false)["Code"]; got < 1200 {
					t.Errorf("%s: Code: %v s, want at least 1200 s", p, got)
				}
			}
		})
	}
}
