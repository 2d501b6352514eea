package activity_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestSplitMatchesRealAW asks activity_summary split by day over recorded
// periods of several days: each day equals what the real aw-server
// answered for that day alone (testdata/realaw/split holds every day of
// the week recording, and the partial first and last days of last_7d;
// privacy, editor and hosts one day each), at the largest limit and the
// default one (other_s then holds the rest), and equals the same day asked
// alone of another Service (nothing kept in common), exactly. The
// period's active time is its days' together, and what the real aw-server
// answered for the whole period. The person's privacy filters, the editor
// groupings and other hosts (one, and all joined) are split alike.
func TestSplitMatchesRealAW(t *testing.T) {
	days := []string{"sat", "sun", "mon", "tue", "wed", "thu", "fri"}
	all := []string{realaw.ByApp, realaw.ByTitle, realaw.ByDomain, realaw.ByCategory}
	for _, tc := range []struct {
		rec, period, host string
		days              []string // the recorded answer of each day ("": none)
		groups            []string
	}{
		{rec: "split", period: "week", days: days, groups: all},
		{rec: "split", period: "last_7d", days: append(append([]string{"last_7d_first"}, days[:6]...), "last_7d_last"), groups: all},
		{rec: "privacy", period: "week", days: []string{"", "", "", "day", "", "", ""}, groups: all},
		{rec: "editor", period: "week", days: []string{"", "", "", "day", "", "", ""},
			groups: []string{activity.GroupByProject, activity.GroupByLanguage, activity.GroupByFile, realaw.ByApp}},
		{rec: "hosts", period: "week", host: "laptop-2", days: []string{"", "", "", "", "", "day", ""}, groups: all},
		{rec: "hosts", period: "week", host: realaw.AllHosts, days: []string{"", "", "", "", "", "day", ""},
			groups: []string{realaw.ByApp, realaw.ByCategory}},
	} {
		t.Run(tc.rec+"/"+tc.period+"/"+cmpHost(tc.host), func(t *testing.T) {
			rec, s := realService(t, tc.rec)
			_, alone := realService(t, tc.rec)
			answers := recordedFor(rec, tc.host)
			whole := answers[tc.period]
			for _, g := range tc.groups {
				for _, limit := range []int{activity.MaxSummaryLimit, activity.DefaultSummaryLimit} {
					sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: whole.Start.Format(time.RFC3339Nano),
						End: whole.End.Format(time.RFC3339Nano), GroupBy: g, Limit: limit, Host: tc.host, Split: activity.SplitDay})
					if err != nil {
						t.Fatal(err)
					}
					if len(sum.Days) != len(tc.days) {
						t.Fatalf("group_by %s: %d days, want %d", g, len(sum.Days), len(tc.days))
					}
					var active float64
					for i, d := range sum.Days {
						active += d.ActiveS
						if name := tc.days[i]; name != "" {
							for _, msg := range realaw.CheckDay(d, answers[name], g, limit, realTolerance).Problems {
								t.Errorf("group_by %s, limit %d: %s", g, limit, msg)
							}
						}
						one, err := alone.Summary(t.Context(), activity.SummaryQuery{Start: d.Start.Format(time.RFC3339Nano),
							End: d.End.Format(time.RFC3339Nano), GroupBy: g, Limit: limit, Host: tc.host})
						if err != nil {
							t.Fatal(err)
						}
						if got := (activity.Day{Date: d.Date, Start: one.Period.Start, End: one.Period.End,
							ActiveS: one.ActiveS, EditorS: one.EditorS, Top: one.Top, OtherS: one.OtherS}); !reflect.DeepEqual(d, got) {
							t.Errorf("group_by %s, limit %d: day %s split:\n%+v\nasked alone:\n%+v", g, limit, d.Date, d, got)
						}
					}
					if math.Abs(active-sum.ActiveS) > 0.05*float64(len(sum.Days)) {
						t.Errorf("group_by %s: the days hold %.1f s, the period %.1f s", g, active, sum.ActiveS)
					}
					if math.Abs(sum.ActiveS-whole.Active) > realTolerance {
						t.Errorf("group_by %s: active %.1f s, the real aw-server %.3f s for the %s", g, sum.ActiveS, whole.Active, tc.period)
					}
				}
			}
		})
	}
}

// recordedFor are a recording's answers for host by period name; for
// "all", the hosts' answers less what earlier hosts cover (realaw.Union).
func recordedFor(rec *realaw.Recording, host string) map[string]realaw.Answer {
	out := map[string]realaw.Answer{}
	byName := map[string][]realaw.Answer{}
	for _, a := range rec.Periods {
		byName[a.Name] = append(byName[a.Name], a)
		if a.Host == host {
			out[a.Name] = a
		}
	}
	if host != realaw.AllHosts {
		return out
	}
	for name, as := range byName {
		var (
			hosts   []realaw.Answer
			covered realaw.Answer
		)
		for _, a := range as {
			switch a.Host {
			case realaw.AllHosts:
			case realaw.CoveredHosts:
				covered = a
			default:
				hosts = append(hosts, a)
			}
		}
		out[name] = realaw.Union(hosts, covered)
	}
	return out
}

// TestSplitOpenDay: this_week split by day on the recorded Friday at
// noon: Monday to Thursday equal the real aw-server's recorded days, and
// today, still open (computed by hours), what it answered from 04:00 to
// noon; each equals the day asked alone of another Service (today as
// "today").
func TestSplitOpenDay(t *testing.T) {
	rec, err := realaw.Load("split")
	if err != nil {
		t.Fatal(err)
	}
	answers := recordedFor(rec, "")
	now := answers["last_7d_last"].End
	_, s := realServiceAt(t, "split", now)
	_, alone := realServiceAt(t, "split", now)
	sum, err := s.Summary(t.Context(), activity.SummaryQuery{Period: activity.LabelThisWeek, Split: activity.SplitDay, GroupBy: realaw.ByTitle})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mon", "tue", "wed", "thu", "last_7d_last"}
	if len(sum.Days) != len(want) {
		t.Fatalf("%d days, want %d", len(sum.Days), len(want))
	}
	for i, d := range sum.Days {
		for _, msg := range realaw.CheckDay(d, answers[want[i]], realaw.ByTitle, activity.DefaultSummaryLimit, realTolerance).Problems {
			t.Error(msg)
		}
		q := activity.SummaryQuery{Start: d.Start.Format(time.RFC3339Nano), End: d.End.Format(time.RFC3339Nano), GroupBy: realaw.ByTitle}
		if i == len(sum.Days)-1 {
			q = activity.SummaryQuery{Period: activity.LabelToday, GroupBy: realaw.ByTitle}
		}
		one, err := alone.Summary(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if d.ActiveS != one.ActiveS || d.OtherS != one.OtherS || !reflect.DeepEqual(d.Top, one.Top) || !d.End.Equal(one.Period.End) {
			t.Errorf("day %s: split %.1f s %v, asked alone %.1f s %v", d.Date, d.ActiveS, d.Top, one.ActiveS, one.Top)
		}
	}
	if got := sum.Days[len(sum.Days)-1].Date; got != "2026-11-27" {
		t.Errorf("today's date %s, want 2026-11-27", got)
	}
}

// TestSplitArguments: a split other than "day" is refused naming split;
// a split whose days would hold too many entries is refused naming limit
// before anything is read, saying what limit would do.
func TestSplitArguments(t *testing.T) {
	_, s := realService(t, "split")
	for _, tc := range []struct {
		q         activity.SummaryQuery
		arg, want string
	}{
		{activity.SummaryQuery{Period: "last_7d", Split: "week"}, "split", `unknown split "week"`},
		{activity.SummaryQuery{Period: "last_7d", Split: "Day"}, "split", `unknown split "Day"`},
		{activity.SummaryQuery{Period: "last_366d", Split: activity.SplitDay, Limit: 11}, "limit", "ask a limit of at most 10"},
		{activity.SummaryQuery{Period: "last_60d", Split: activity.SplitDay, Limit: 100}, "limit", "60 days of 100 entries"},
	} {
		_, err := s.Summary(t.Context(), tc.q)
		se, ok := err.(*activity.SpecError)
		if !ok || se.Arg != tc.arg || !strings.Contains(se.Problem, tc.want) {
			t.Errorf("%+v: %v, want a SpecError on %s saying %q", tc.q, err, tc.arg, tc.want)
		}
	}
}
