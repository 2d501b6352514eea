package transform

import (
	"cmp"
	"slices"
)

// DefaultPulsetime is flood's default gap, the one ActivityWatch's web UI
// uses (its query calls flood() without a pulsetime): 5 s.
const DefaultPulsetime = 5 * Second

// negativeGapTrim is flood's threshold under which a negative gap between
// events with different data is treated as none.
const negativeGapTrim = 100 * Millisecond

// Flood is aw_transform.flood: it sorts copies of the events by start and
// fills every gap of at most pulsetime between neighbours, extending the
// longer of the two (merging them when their data is equal); neighbours
// with equal data that overlap are merged; events left with no duration
// are dropped. evs is not changed.
func Flood(evs []Event, pulsetime int64) []Event {
	out := slices.Clone(evs)
	sortByStart(out)
	for i := 0; i+1 < len(out); i++ {
		e1, e2 := &out[i], &out[i+1]
		gap := e2.Start - e1.End()
		switch {
		case gap == 0:
		case gap < 0 && e1.Data.Equal(e2.Data):
			start, end := min(e1.Start, e2.Start), max(e1.End(), e2.End())
			e1.Start, e1.Duration = truncMS(start), end-start
			e2.Start, e2.Duration = truncMS(end), 0
		case gap <= -negativeGapTrim || gap > pulsetime:
		default:
			e2end := e2.End()
			switch {
			case e1.Duration >= e2.Duration && e1.Data.Equal(e2.Data):
				e1.Duration = e2end - e1.Start
				e2.Start, e2.Duration = truncMS(e2end), 0
			case e1.Duration >= e2.Duration:
				e1.Duration = e2.Start - e1.Start
			case e1.Data.Equal(e2.Data):
				e2.Start = e1.Start
				e2.Duration = e2end - e2.Start
				e1.Duration = 0
			default:
				e2.Start = truncMS(e1.End())
				e2.Duration = e2end - e2.Start
			}
		}
	}
	return slices.DeleteFunc(out, func(e Event) bool { return e.Duration <= 0 })
}

// intersection is timeslot's Timeslot.intersection: ok is false when the
// periods do not meet. A period inside the other (even an empty one) is
// its own intersection.
func intersection(s1, e1, s2, e2 int64) (start, end int64, ok bool) {
	switch {
	case s1 <= s2 && e2 <= e1:
		return s2, e2, true
	case s2 <= s1 && e1 <= e2:
		return s1, e1, true
	case s1 <= s2 && s2 < e1:
		return s2, e1, true
	case s1 < e2 && e2 <= e1:
		return s1, e2, true
	}
	return 0, 0, false
}

// FilterPeriodIntersect is aw_transform.filter_period_intersect: the parts
// of the events that lie within a filter event (one per filter event), as
// copies in start order. Neither list is changed.
func FilterPeriodIntersect(evs, filters []Event) []Event {
	a, b := inOrder(evs), inOrder(filters)
	out := make([]Event, 0, len(a))
	for i, j := 0, 0; i < len(a) && j < len(b); {
		e, f := a[i], b[j]
		if s, end, ok := intersection(e.Start, e.End(), f.Start, f.End()); ok {
			out = append(out, withPeriod(e, s, end))
			if e.End() <= f.End() {
				i++
			} else {
				j++
			}
			continue
		}
		switch {
		case e.End() <= f.Start:
			i++
		case f.End() <= e.Start:
			j++
		default: // unreachable for ordered periods
			i++
			j++
		}
	}
	return out
}

// PeriodUnion is aw_transform.period_union: the union of the periods of
// both lists, as events in start order with no overlaps (touching periods
// join), with empty data. aw-core clears the data in place, so an input
// event that makes up a result on its own loses its data in every other
// list that holds it too: kept[k] is the index of that input (into a then
// b) for union[k], or -1 when union[k] joins several, for a caller that
// mirrors aw-core. Neither list is changed.
func PeriodUnion(a, b []Event) (union []Event, kept []int) {
	all := append(slices.Clone(a), b...)
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(all[x].Start, all[y].Start) })
	for _, i := range order {
		e := all[i]
		if n := len(union); n > 0 && e.End() >= union[n-1].Start && union[n-1].End() >= e.Start { // no gap: join
			u := &union[n-1]
			start, end := min(e.Start, u.Start), max(e.End(), u.End())
			u.Start, u.Duration, kept[n-1] = start, end-start, -1
			continue
		}
		e.Data = Fields{}
		union, kept = append(union, e), append(kept, i)
	}
	for k := range union {
		if kept[k] < 0 {
			union[k].Start = truncMS(union[k].Start) // Duration stays end - start
		}
	}
	return union, kept
}
