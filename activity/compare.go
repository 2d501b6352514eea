package activity

import (
	"time"
)

// ComparePrevious is the compare argument of activity_summary: the previous
// period of the same kind.
const ComparePrevious = "previous"

// Previous is the period a summary is compared with (compare
// "previous"): its bounds and active time (of the same category, when
// one is drilled into).
type Previous struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	ActiveS float64   `json:"active_s"`
}

// previousOf resolves the period before p, of the same kind as spec:
// today's is yesterday, yesterday's the day before, this_week's
// last_week, last_week's the week before, last_N's the N hours or days
// before p's start, a day with times's the same times on the date before,
// and a range's the range of p's length that ends at p's start. Each is
// what asking for it alone answers, on p's calendar.
func previousOf(spec Spec, p Period) (Period, error) {
	c, at := p.Calendar, p.Start // a moment within p: a label resolved there is the period before p
	if spec.day != nil {
		// p.Start is on the day's date (a skipped time is moved on
		// within it); "today" resolved at p.Start would be p's own date
		// or, before the day's start, the day before.
		y, m, d := p.Start.Date()
		dc := *spec.day
		dc.day, dc.date = "", date{y, m, d}.add(-1)
		return c.Resolve(Spec{label: spec.label, day: &dc}, p.End)
	}
	switch spec.String() {
	case LabelToday:
		spec, at = Spec{label: LabelYesterday}, p.End
	case LabelThisWeek:
		spec, at = Spec{label: LabelLastWeek}, p.End
	case LabelCustom:
		spec, at = Spec{label: LabelCustom, start: p.Start.Add(-p.End.Sub(p.Start)), end: p.Start}, p.End
	}
	return c.Resolve(spec, at)
}

// checkCompare checks the compare argument.
func checkCompare(compare string) error {
	if compare != "" && compare != ComparePrevious {
		return specError("compare", "unknown comparison %s (expected previous)", quote(compare))
	}
	return nil
}

// compare sets sum's Previous and each top entry's PreviousS from prev,
// the previous period prepared (and drilled) as sum's was.
func (sum *Summary) compare(prev *prepared, includeAFK bool) {
	t := prev.total()
	sum.Previous = &Previous{Start: prev.period.Start, End: prev.period.End, ActiveS: seconds(t.active)}
	group := t.group(sum.GroupBy, includeAFK)
	for i, r := range sum.ranked {
		v := seconds(group[r.k])
		sum.Top[i].PreviousS = &v
	}
}

// halves reports the first of two reads as the first half of fn's
// progress (i 0), the second as the second half (i 1), so that progress
// only grows.
func halves(fn Progress, i int) Progress {
	if fn == nil {
		return nil
	}
	return func(done, total float64, msg string) {
		if total > 0 {
			fn(float64(i)*50+done/total*50, 100, msg)
		}
	}
}
