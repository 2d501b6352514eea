package activity

import (
	"fmt"
	"time"
)

// A summary split by day (activity_summary's split "day", the timesheet):
// the period's days as ActivityWatch's start of day cuts them, each with
// its active time and its top entries. Each day is computed on its own, as
// the same day asked alone is (no unit's margins reach into the day before
// or after), so each equals that day asked alone, and the period's totals
// are its days' together.

// SplitDay is the one value of SummaryQuery.Split.
const SplitDay = "day"

// maxSplitEntries bounds the day entries of a split answer (days times
// limit): a year of days at the default limit.
const maxSplitEntries = 4000

// Day is one day of a summary split by day: the part of the day within
// the period.
type Day struct {
	// Date is the day's date (YYYY-MM-DD) in the period's time zone: the
	// date on which it starts at the start of day.
	Date  string    `json:"date"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// ActiveS, EditorS, Top and OtherS are as the Summary's, for the day.
	ActiveS float64 `json:"active_s"`
	EditorS float64 `json:"editor_s,omitempty"`
	Top     []Entry `json:"top"`
	OtherS  float64 `json:"other_s,omitempty"`
}

// splitResolve checks a split argument and returns how the period is
// resolved for it: as spec is, or, split by day, computed day by day and
// refused before anything is read when its days would hold more than
// maxSplitEntries entries.
func splitResolve(split string, spec Spec, limit int) (func(Calendar, time.Time) (Period, error), error) {
	switch split {
	case "":
		return spec.resolve, nil
	case SplitDay:
	default:
		return nil, specError("split", "unknown split %s (expected day)", quote(split))
	}
	return func(c Calendar, now time.Time) (Period, error) {
		p, err := spec.resolve(c, now)
		if err != nil {
			return Period{}, err
		}
		if n := len(p.Days()); n*limit > maxSplitEntries {
			return Period{}, specError("limit", "split by day, %d days of %d entries are more than %d: ask a limit of at most %d, or a shorter period",
				n, limit, maxSplitEntries, maxSplitEntries/n)
		}
		p.byDay = true
		return p, nil
	}, nil
}

// days renders each day of a period prepared day by day, oldest first:
// the summary of the day's units alone.
func (pr *prepared) days(groupBy string, limit int, includeAFK bool) []Day {
	spans := pr.period.Days()
	out := make([]Day, 0, len(spans))
	units := pr.units
	for _, d := range spans {
		n := 0
		for n < len(units) && units[n].span.start < us(d.End) {
			n++
		}
		day := &prepared{period: Period{Start: d.Start, End: d.End}, now: pr.now, units: units[:n]}
		units = units[n:]
		s := day.summary(groupBy, limit, includeAFK)
		dt := pr.period.Calendar.dateOf(d.Start)
		out = append(out, Day{Date: fmt.Sprintf("%04d-%02d-%02d", dt.y, dt.m, dt.d), Start: d.Start, End: d.End,
			ActiveS: s.ActiveS, EditorS: s.EditorS, Top: s.Top, OtherS: s.OtherS})
	}
	return out
}
