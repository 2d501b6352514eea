package activity

import (
	"reflect"
	"testing"
	"time"
)

// TestSplitDaysCutInsideSessions: with ActivityWatch's day starting at
// noon, every day start cuts the activity, and each day of this_week split
// by day still equals that day asked alone of a Service keeping nothing in
// common (the open day, computed by hours, as "today"): a day's units
// never see past the day. Two events of one window 4 s apart across
// Wednesday's start are flooded into one when seen together, not by
// Wednesday alone.
func TestSplitDaysCutInsideSessions(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, fresh: true})
	postSetting(t, env, "startOfDay", `"12:00"`)
	loc := env.h.Start.Location()
	noon := time.Date(2026, 3, 25, 12, 0, 0, 0, loc)
	insert(t, env, env.h.Window.ID, ev1(noon.Add(-10*time.Second), 8, `{"app":"Zed","title":"split.go"}`),
		ev1(noon.Add(2*time.Second), 30, `{"app":"Zed","title":"split.go"}`))
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, loc)}
	s := newService(t, env, clk, ServiceOptions{})
	for _, g := range []string{GroupByApp, GroupByTitle} {
		sum, err := s.Summary(t.Context(), SummaryQuery{Period: LabelThisWeek, GroupBy: g, Split: SplitDay, IncludeAFK: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Days) != 7 || sum.Days[0].Date != "2026-03-23" || sum.Days[6].Date != "2026-03-29" {
			t.Fatalf("%d days, want 7 from 2026-03-23 (Monday, from noon) to 2026-03-29 (today)", len(sum.Days))
		}
		for i, d := range sum.Days {
			q := SummaryQuery{Start: d.Start.Format(time.RFC3339Nano), End: d.End.Format(time.RFC3339Nano), GroupBy: g, IncludeAFK: true}
			if i == len(sum.Days)-1 {
				q = SummaryQuery{Period: LabelToday, GroupBy: g, IncludeAFK: true}
			}
			one, err := newService(t, env, clk, ServiceOptions{}).Summary(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			got := Day{Date: d.Date, Start: one.Period.Start, End: one.Period.End, ActiveS: one.ActiveS, Top: one.Top, OtherS: one.OtherS}
			if !reflect.DeepEqual(d, got) {
				t.Errorf("group_by %s, day %s: split %.1f s, %v\nasked alone %.1f s, %v", g, d.Date, d.ActiveS, d.Top, got.ActiveS, got.Top)
			}
		}
	}
}
