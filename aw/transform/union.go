package transform

import (
	"context"
	"slices"
)

// UnionNoOverlap is aw_transform.union_no_overlap: the events of a and the
// parts of b's events that no event of a covers, in start order; a has
// precedence. Both lists are in start order (as flood leaves them); an
// event of b an event of a cuts is split around it. Neither list is
// changed.
func UnionNoOverlap(a, b []Event) []Event {
	b = slices.Clone(b)
	out := make([]Event, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		e1, e2 := a[i], b[j]
		if !overlaps(e1.Start, e1.End(), e2.Start, e2.End()) {
			if e1.Start <= e2.Start {
				out, i = append(out, e1), i+1
			} else {
				out, j = append(out, e2), j+1
			}
			continue
		}
		if e1.Start <= e2.Start {
			out, i = append(out, e1), i+1
			// What of e2 lasts beyond e1 is compared with a's next.
			if _, rest, ok := splitAt(e2, e1.End()); ok {
				b[j] = rest
			} else {
				j++
			}
			continue
		}
		head, rest, ok := splitAt(e2, e1.Start)
		out, j = append(out, head), j+1
		if ok {
			b = slices.Insert(b, j, rest)
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// overlaps is timeslot's Timeslot.overlaps of [s1, e1) and [s2, e2): one
// starts or ends within the other, or the first lies within the second.
func overlaps(s1, e1, s2, e2 int64) bool {
	return s1 <= s2 && s2 < e1 || s1 < e2 && e2 <= e1 || s2 <= s1 && e1 <= e2
}

// splitAt is union_no_overlap's _split_event: e cut at t into the part
// before and the part after, ok when t lies strictly within e; else e
// itself.
func splitAt(e Event, t int64) (head, rest Event, ok bool) {
	if e.Start >= t || t >= e.End() {
		return e, Event{}, false
	}
	head, rest = e, e
	head.Duration = t - e.Start
	rest.Start, rest.Duration = t, e.End()-t
	return head, rest, true
}

// CanonicalHosts is ActivityWatch's web UI's multi-device query
// (canonicalMultideviceEvents of aw-webui's queries.ts) on events already
// fetched: each host's canonical events (CanonicalContext), then joined in
// the order of ins (the first host has precedence) with UnionNoOverlap, so
// that a minute two devices both report counts once: the window events,
// the active time and (which the web UI leaves out) the browser tabs. A
// host with NoAFK set counts its window events as active.
func CanonicalHosts(ctx context.Context, ins []Input, opt Options) (Result, error) {
	var all Result
	for _, in := range ins {
		r, err := CanonicalContext(ctx, in, opt)
		if err != nil {
			return Result{}, err
		}
		all.Events = UnionNoOverlap(all.Events, r.Events)
		all.NotAFK = UnionNoOverlap(all.NotAFK, r.NotAFK)
		all.Browser = UnionNoOverlap(all.Browser, r.Browser)
		all.Classes = r.Classes
	}
	return all, nil
}
