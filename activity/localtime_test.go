package activity_test

import (
	"errors"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestLocalTimesMatchRealAW asks for each recorded period of the real
// aw-server as a person says it: start and end as local times without an
// offset, and, for a period within one date, as that date with clock
// times ("2026-11-25 13:00-17:30"). The summary must place it where the
// recording says and give the real server's totals. A local time the
// autumn change repeats is read as its first instant, so dst's night
// (01:30 CEST to 02:30 CET) is an hour shorter read locally: the period
// differs and the test says so.
func TestLocalTimesMatchRealAW(t *testing.T) {
	const local = "2006-01-02T15:04:05.000"
	for _, name := range []string{"week", "dst"} {
		rec, s := realService(t, name)
		loc, err := rec.Location()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rec.Periods {
			start, end := p.Start.In(loc), p.End.In(loc)
			asks := []activity.SummaryQuery{{Start: start.Format(local), End: end.Format(local)}}
			if start.Format(time.DateOnly) == end.Format(time.DateOnly) {
				asks = append(asks, activity.SummaryQuery{Period: start.Format("2006-01-02 15:04-") + end.Format("15:04")})
			}
			for _, q := range asks {
				q.Limit = activity.MaxSummaryLimit
				sum, err := s.Summary(t.Context(), q)
				if err != nil {
					t.Fatalf("%s %s: %v", name, p.Name, err)
				}
				d := realaw.CheckSummary(sum, p, realaw.ByApp, realTolerance)
				repeated := name == "dst" && p.Name == "night"
				if repeated != (len(d.Problems) > 0) {
					t.Errorf("%s %s %+v: %v (period %s .. %s, note %q)", name, p.Name, q, d.Problems, sum.Period.Start, sum.Period.End, sum.Period.Note)
				}
				if repeated && sum.Period.Note == "" {
					t.Errorf("%s %s: a repeated local time without a note", name, p.Name)
				}
				t.Logf("%s %s %q %q %q: active %.1f s (real %.3f)", name, p.Name, q.Period, q.Start, q.End, sum.ActiveS, p.Active)
			}
		}
	}
}

// TestLocalTimeErrors: a period or a local time that cannot be placed is
// a *SpecError naming the argument, and the service keeps answering.
func TestLocalTimeErrors(t *testing.T) {
	_, s := realService(t, "week")
	for _, c := range []struct {
		q   activity.SummaryQuery
		arg string
	}{
		{activity.SummaryQuery{Start: "2026-11-25T16:00", End: "2026-11-25T14:00"}, "end"},
		{activity.SummaryQuery{Start: "2026-11-25T14:00", End: "2027-12-25T14:00"}, "end"},
		{activity.SummaryQuery{Start: "2099-11-25T14:00", End: "2099-11-25T16:00"}, "start"},
		{activity.SummaryQuery{Period: "yesterday at 14:00"}, "period"},
		{activity.SummaryQuery{Period: "2099-01-01 10:00-11:00"}, "period"},
	} {
		_, err := s.Summary(t.Context(), c.q)
		var se *activity.SpecError
		if !errors.As(err, &se) || se.Arg != c.arg {
			t.Errorf("%+v: %v, want a *SpecError on %s", c.q, err, c.arg)
		}
	}
	if _, err := s.Summary(t.Context(), activity.SummaryQuery{Period: "yesterday 14:00-16:00"}); err != nil {
		t.Errorf("after the errors: %v", err)
	}
}

// TestTimelineCursorLocalTimes: a timeline's cursor pages a period given
// with clock times or local times, repeated beside the cursor or not.
func TestTimelineCursorLocalTimes(t *testing.T) {
	_, s := realService(t, "week")
	for _, q := range []activity.TimelineQuery{
		{Period: "2026-11-25 13:00-17:30"},
		{Start: "2026-11-25T13:00", End: "2026-11-25T17:30"},
	} {
		q.Limit = 5
		first, err := s.Timeline(t.Context(), q)
		if err != nil || first.NextCursor == "" {
			t.Fatalf("%+v: %v, cursor %q", q, err, first.NextCursor)
		}
		q.Cursor = first.NextCursor
		if _, err := s.Timeline(t.Context(), q); err != nil {
			t.Errorf("%+v with its cursor: %v", q, err)
		}
		if _, err := s.Timeline(t.Context(), activity.TimelineQuery{Cursor: first.NextCursor, Period: "2026-11-25 13:00-17:00"}); err == nil {
			t.Errorf("%+v: its cursor accepted beside another period", q)
		}
	}
}

// TestDayWithTimesMatchesRealAW: the localtime recording (the real
// aw-server's answers over 14:00-16:00 and 09:05-12:30 of 27 Nov and
// 22:00-01:30 of the night before, in Etc/GMT-9), asked a day later as a
// person says it: "yesterday 14:00-16:00", "yesterday from 9:05 to 12:30"
// and "2026-11-26 22:00-01:30". Each is placed where the recording's
// period is and gives its totals, by app, title, domain and category.
func TestDayWithTimesMatchesRealAW(t *testing.T) {
	rec, s := realService(t, "localtime") // now: a day after the last period's end (28 Nov 16:00)
	asks := map[string]string{"slot": "yesterday 14:00-16:00", "morning": "yesterday from 9:05 to 12:30", "evening": "2026-11-26 22:00-01:30"}
	for _, p := range rec.Periods {
		period, ok := asks[p.Name]
		if !ok {
			t.Fatalf("recorded period %s not asked", p.Name)
		}
		for _, g := range []string{realaw.ByApp, realaw.ByTitle, realaw.ByDomain, realaw.ByCategory} {
			sum, err := s.Summary(t.Context(), activity.SummaryQuery{Period: period, GroupBy: g, Limit: activity.MaxSummaryLimit})
			if err != nil {
				t.Fatalf("%s: %v", period, err)
			}
			for _, msg := range realaw.CheckSummary(sum, p, g, realTolerance).Problems {
				t.Errorf("%q by %s: %s", period, g, msg)
			}
			if g == realaw.ByApp {
				t.Logf("%q: %s .. %s (%s %s), active %.1f s (real %.3f), afk %.1f s (real %.3f)", period, sum.Period.Start.Format(time.RFC3339),
					sum.Period.End.Format(time.RFC3339), sum.Period.Timezone, sum.Period.UTCOffset, sum.ActiveS, p.Active, sum.AFKS, p.AFK)
			}
		}
	}
}
