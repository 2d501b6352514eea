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
// ActivityWatch's classes setting. One beyond awbridge's bounds (a rule
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
		name, setting string
	}{
		{"a 7 MB rule", "[" + rule("Hostile", "(GitHub|"+strings.Repeat("ab|", 7<<20/3)+"c)") + "]"},
		{"5,000 rules", "[" + strings.Join(many, ",") + "]"},
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
			postSetting(t, env, "classes", c.setting)
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
			want := "ActivityWatch's classes setting could not be used: the default categories apply"
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
	u, err := computeUnit(ctx, in, span64{0, 3000 * s}, transform.Options{Classes: cs}, &privacyRules{})
	if !errors.Is(err, context.Canceled) || u != nil {
		t.Fatalf("unit %v, %v; want none and Canceled", u != nil, err)
	}
}
