package transform

import (
	"cmp"
	"slices"
)

// Units.
const (
	Microsecond int64 = 1
	Millisecond       = 1000 * Microsecond
	Second            = 1000 * Millisecond
)

// Event is one ActivityWatch event: a period and its data.
type Event struct {
	// ID is the server's id of a stored event; 0 for events a transform
	// made (merged, chunked), which aw-server writes as null.
	ID int64
	// Start is in microseconds since the Unix epoch (UTC). Starts a
	// transform computes are truncated to whole milliseconds, as aw-core's
	// Event does with every timestamp it is given.
	Start int64
	// Duration is in microseconds. Stored events may have a negative one.
	Duration int64
	Data     Fields
}

// End is Start + Duration.
func (e Event) End() int64 { return e.Start + e.Duration }

// truncMS floors a timestamp to whole milliseconds (aw-core's Event keeps
// milliseconds only; Python's microsecond field is never negative, so this
// is a floor before the epoch too).
func truncMS(us int64) int64 {
	m := us % Millisecond
	if m < 0 {
		m += Millisecond
	}
	return us - m
}

// withPeriod is aw-core's _replace_event_period: a copy of e over
// [start, end) (Fields is immutable: the copy shares it).
func withPeriod(e Event, start, end int64) Event {
	e.Start = truncMS(start)
	e.Duration = end - start
	return e
}

// inOrder returns evs when it is in start order, else a sorted copy
// (sort_by_timestamp; Python's sort is stable).
func inOrder(evs []Event) []Event {
	if slices.IsSortedFunc(evs, byStart) {
		return evs
	}
	out := slices.Clone(evs)
	sortByStart(out)
	return out
}

// sortByStart sorts evs by start in place, stably, quickly when they are
// already in order or in reverse order (aw-server sends newest first).
func sortByStart(evs []Event) {
	if slices.IsSortedFunc(evs, byStart) {
		return
	}
	desc := true
	for i := 1; i < len(evs) && desc; i++ {
		desc = evs[i].Start <= evs[i-1].Start
	}
	if !desc {
		slices.SortStableFunc(evs, byStart)
		return
	}
	slices.Reverse(evs)
	for i := 0; i < len(evs); { // equal starts back in their first order
		j := i + 1
		for j < len(evs) && evs[j].Start == evs[i].Start {
			j++
		}
		slices.Reverse(evs[i:j])
		i = j
	}
}

// joinByStart returns the events of a and b in start order, a's first on
// equal starts.
func joinByStart(a, b []Event) []Event {
	out := append(slices.Clone(a), b...)
	slices.SortStableFunc(out, byStart)
	return out
}

func byStart(a, b Event) int { return cmp.Compare(a.Start, b.Start) }

// Filter returns the events keep accepts, in order (filter_keyvals and
// exclude_keyvals, with Fields.In as keep). evs is not changed.
func Filter(evs []Event, keep func(Fields) bool) []Event {
	var out []Event
	for _, e := range evs {
		if keep(e.Data) {
			out = append(out, e)
		}
	}
	return out
}
