package activity_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// answerOf is the recorded answer of a period by name.
func answerOf(t *testing.T, rec *realaw.Recording, name string) realaw.Answer {
	t.Helper()
	for _, a := range rec.Periods {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no recorded period %q", name)
	return realaw.Answer{}
}

// TestCompareMatchesRealAW asks activity_summary with compare "previous"
// for each kind of period, the clock at Thursday 26 November 12:00 of the
// compare recording: the period and its previous one (today's is the
// whole of yesterday, this_week's last_week, last_2d's the two days
// before, a span's the span of its length just before) each equal what
// the real aw-server answered for it, and the previous one equals that
// period asked alone.
func TestCompareMatchesRealAW(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.FixedZone("-10", -10*3600))
	rec, s := realServiceAt(t, "compare", now)
	afternoon := answerOf(t, rec, "afternoon")
	for _, c := range []struct {
		period, start, end string
		cur, prev          string
		alone              activity.SummaryQuery // the previous period asked alone
	}{
		{period: "today", cur: "today", prev: "yesterday", alone: activity.SummaryQuery{Period: "yesterday"}},
		{period: "yesterday", cur: "yesterday", prev: "day_before"},
		{period: "this_week", cur: "this_week", prev: "last_week", alone: activity.SummaryQuery{Period: "last_week"}},
		{period: "last_2d", cur: "last_2d", prev: "last_2d_before"},
		{period: "last_3h", cur: "last_3h", prev: "last_3h_before"},
		{start: afternoon.Start.Format(time.RFC3339), end: afternoon.End.Format(time.RFC3339), cur: "afternoon", prev: "afternoon_before"},
	} {
		cur, prev := answerOf(t, rec, c.cur), answerOf(t, rec, c.prev)
		if c.alone.Period == "" {
			c.alone = activity.SummaryQuery{Start: prev.Start.Format(time.RFC3339), End: prev.End.Format(time.RFC3339)}
		}
		for _, g := range []string{realaw.ByApp, realaw.ByTitle, realaw.ByCategory} {
			t.Run(c.cur+"/"+g, func(t *testing.T) {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Period: c.period, Start: c.start, End: c.end,
					GroupBy: g, Limit: activity.MaxSummaryLimit, Compare: activity.ComparePrevious})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range []realaw.Diff{realaw.CheckSummary(sum, cur, g, realTolerance), realaw.CheckPrevious(sum, prev, g, realTolerance)} {
					for _, msg := range d.Problems {
						t.Error(msg)
					}
				}
				q := c.alone
				q.GroupBy, q.Limit = g, activity.MaxSummaryLimit
				alone, err := s.Summary(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if !alone.Period.Start.Equal(sum.Previous.Start) || !alone.Period.End.Equal(sum.Previous.End) || alone.ActiveS != sum.Previous.ActiveS {
					t.Errorf("previous %s .. %s active %.1f s; asked alone %s .. %s active %.1f s", sum.Previous.Start, sum.Previous.End,
						sum.Previous.ActiveS, alone.Period.Start, alone.Period.End, alone.ActiveS)
				}
				byKey := map[[2]string]float64{}
				for _, e := range alone.Top {
					byKey[[2]string{e.App, e.Key}] = e.DurationS
				}
				for _, e := range sum.Top {
					w, ok := byKey[[2]string{e.App, e.Key}]
					switch {
					case e.PreviousS == nil:
						t.Fatalf("%s %q has no previous_s", e.App, e.Key)
					case !ok && alone.OtherS > 0: // beyond the limit asked alone: no more than its last entry
						if last := alone.Top[len(alone.Top)-1].DurationS; *e.PreviousS > last {
							t.Errorf("%s %q: previous_s %.1f, not in the top %d asked alone (the last %.1f s)", e.App, e.Key, *e.PreviousS, len(alone.Top), last)
						}
					case *e.PreviousS != w:
						t.Errorf("%s %q: previous_s %.1f, asked alone %.1f s", e.App, e.Key, *e.PreviousS, w)
					}
				}
				t.Logf("active %.1f s against %.1f s before", sum.ActiveS, sum.Previous.ActiveS)
			})
		}
	}
}

// TestCategoryDrillMatchesRealAW drills into categories of every period
// of the week recording: the time kept equals the category's recorded
// total with its subcategories, the categories beside it are its own
// subcategories, and grouped by title (Uncategorized: what to categorize)
// each title has its recorded time and the titles and other_s add up to
// the category's time.
func TestCategoryDrillMatchesRealAW(t *testing.T) {
	rec, s := realService(t, "week")
	for _, p := range rec.Periods {
		for _, name := range []string{"Work", "Work > Programming", "Media", "Comms > IM", "Uncategorized"} {
			t.Run(p.Name+"/"+name, func(t *testing.T) {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: p.Start.Format(time.RFC3339), End: p.End.Format(time.RFC3339),
					GroupBy: activity.GroupByTitle, Limit: 20, Category: name})
				if err != nil {
					t.Fatal(err)
				}
				want := p.CategoryTotal(name)
				if want == 0 || math.Abs(sum.ActiveS-want) > realTolerance {
					t.Errorf("active_s %.1f, the real aw-server's %q with its subcategories %.3f s", sum.ActiveS, name, want)
				}
				for _, c := range sum.Categories {
					if c.Key != name && !strings.HasPrefix(c.Key, name+" > ") {
						t.Errorf("category %q beside a drill into %q", c.Key, name)
					}
				}
				titles, parts := p.TitleTotals(), sum.OtherS
				for _, e := range sum.Top {
					parts += e.DurationS
					if w, ok := titles[realaw.TitleKey(e)]; !ok || math.Abs(e.DurationS-w) > realTolerance {
						t.Errorf("%s %q: %.1f s, recorded %.3f s", e.App, e.Key, e.DurationS, w)
					}
				}
				if d := parts - sum.ActiveS; math.Abs(d) > 0.05*float64(len(sum.Top)+1) {
					t.Errorf("the titles and other_s add up to %.1f s, active_s is %.1f s", parts, sum.ActiveS)
				}
				if len(sum.TopDomains) != 0 || sum.LongestFocus == nil {
					t.Errorf("top_domains %v, longest_focus %v: want none, and the category's longest stretch", sum.TopDomains, sum.LongestFocus)
				}
			})
		}
	}
}

// TestOtherSAddsUp: every summary's top entries and other_s add up to
// its whole (active time; with include_afk, active and AFK time; editor
// time for editor groupings), at a limit that cuts the ranking, and
// other_s is in the answer even when nothing was cut.
func TestOtherSAddsUp(t *testing.T) {
	for _, c := range []struct {
		rec, group string
		afk        bool
	}{
		{"week", activity.GroupByApp, false}, {"week", activity.GroupByTitle, false}, {"week", activity.GroupByCategory, false},
		{"week", activity.GroupByApp, true}, {"editor", activity.GroupByProject, false}, {"editor", activity.GroupByFile, false},
	} {
		rec, s := realService(t, c.rec)
		p := rec.Periods[0]
		t.Run(c.rec+"/"+c.group, func(t *testing.T) {
			for _, limit := range []int{2, activity.MaxSummaryLimit} {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: p.Start.Format(time.RFC3339), End: p.End.Format(time.RFC3339),
					GroupBy: c.group, Limit: limit, IncludeAFK: c.afk})
				if err != nil {
					t.Fatal(err)
				}
				whole := sum.ActiveS
				switch {
				case sum.EditorS > 0:
					whole = sum.EditorS
				case c.afk:
					whole += sum.AFKS
				}
				parts := sum.OtherS
				for _, e := range sum.Top {
					parts += e.DurationS
				}
				if math.Abs(parts-whole) > 0.05*float64(len(sum.Top)+1) {
					t.Errorf("limit %d: %d entries and other_s %.1f add up to %.1f s, the whole is %.1f s", limit, len(sum.Top), sum.OtherS, parts, whole)
				}
				if limit == 2 && sum.OtherS == 0 {
					t.Errorf("limit 2: other_s 0 with %d entries", len(sum.Top))
				}
				if b, err := json.Marshal(sum); err != nil || !strings.Contains(string(b), `"other_s":`) {
					t.Errorf("limit %d: the answer has no other_s (%v)", limit, err)
				}
			}
		})
	}
}

// TestCompareAndCategoryArguments: each bad compare or category argument
// is a *SpecError naming it, an unknown category naming a few that exist.
func TestCompareAndCategoryArguments(t *testing.T) {
	_, s := realService(t, "week")
	for _, c := range []struct {
		name string
		q    activity.SummaryQuery
		arg  string
		says string
	}{
		{"unknown compare", activity.SummaryQuery{Compare: "next"}, "compare", `"next"`},
		{"unknown category", activity.SummaryQuery{Category: "Work > Meetings"}, "category", `"Comms", "Media", "Uncategorized", "Work"`},
		{"a category's lower case", activity.SummaryQuery{Category: "work"}, "category", "some that exist"},
		{"a category with domains", activity.SummaryQuery{Category: "Work", GroupBy: activity.GroupByDomain}, "category", "group_by"},
		{"a category with an AFK entry", activity.SummaryQuery{Category: "Work", IncludeAFK: true}, "category", "include_afk"},
		{"a long category", activity.SummaryQuery{Category: strings.Repeat("Work > ", 200)}, "category", "unknown category"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Summary(t.Context(), c.q)
			var se *activity.SpecError
			if !errors.As(err, &se) || se.Arg != c.arg || !strings.Contains(se.Error(), c.says) || len(se.Error()) > 300 {
				t.Fatalf("err %v, want a *SpecError on %s saying %s", err, c.arg, c.says)
			}
		})
	}
}
