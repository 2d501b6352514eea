package transform

import (
	"context"
	"slices"
)

// UnionNoOverlap is what aw_transform.union_no_overlap means to do: the
// events of a and the parts of b's events that no event of a covers, in
// start order; a has precedence, so no time is counted twice. Both lists
// are in start order (as flood leaves them). aw-core's (and
// aw-server-rust's) own loop moves past an event of a once it has cut one
// event of b, so the further events of b it covers are kept whole and
// counted twice; this one cuts every event of b by every event of a.
// Neither list is changed.
func UnionNoOverlap(a, b []Event) []Event {
	var cover []span // a's time, joined
	for _, e := range a {
		if n := len(cover); n > 0 && e.Start <= cover[n-1].end {
			cover[n-1].end = max(cover[n-1].end, e.End())
			continue
		}
		cover = append(cover, span{e.Start, e.End()})
	}
	rest := make([]Event, 0, len(b))
	for _, e := range b {
		s, end := e.Start, e.End()
		j, _ := slices.BinarySearchFunc(cover, s, func(c span, t int64) int {
			if c.end <= t {
				return -1
			}
			return 1
		})
		if e.Duration == 0 {
			if j == len(cover) || cover[j].start > s {
				rest = append(rest, e)
			}
			continue
		}
		for ; j < len(cover) && cover[j].start < end && s < end; j++ {
			if cover[j].start > s {
				rest = append(rest, piece(e, s, cover[j].start))
			}
			s = max(s, cover[j].end)
		}
		if s < end {
			rest = append(rest, piece(e, s, end))
		}
	}
	out := append(slices.Clone(a), rest...)
	slices.SortStableFunc(out, byStart) // a's first where two start together
	return out
}

// span is a stretch of time [start, end) in microseconds.
type span struct{ start, end int64 }

// piece is e's part within [start, end).
func piece(e Event, start, end int64) Event {
	e.Start, e.Duration = start, end-start
	return e
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
