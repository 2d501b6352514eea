package activity

import (
	"context"
	"slices"
	"time"
)

// Bounds of activity_timeline's arguments.
const (
	DefaultMinBlockS     = 60
	MaxMinBlockS         = 86400
	DefaultTimelineLimit = 50
	MaxTimelineLimit     = 500
)

// TimelineQuery is an activity_timeline call.
type TimelineQuery struct {
	// Period, or Start and End: see ParseSpec; with Cursor (a previous
	// page's NextCursor), none of them or the first page's.
	Period, Start, End, Cursor string
	// MinBlockS folds shorter blocks (nil: DefaultMinBlockS).
	MinBlockS *int
	Limit     int      // blocks of a page (0: DefaultTimelineLimit)
	Progress  Progress // when set, hears how far the call is
	// Host is "" (this machine), a hostname or HostAll.
	Host string
}

// Timeline answers activity_timeline: the period's focus blocks, oldest
// first, a page at a time. A bad argument or cursor is a *SpecError.
func (s *Service) Timeline(ctx context.Context, q TimelineQuery) (*Timeline, error) {
	limit, err := checkLimit(q.Limit, DefaultTimelineLimit, MaxTimelineLimit)
	if err != nil {
		return nil, err
	}
	minBlock := DefaultMinBlockS
	if q.MinBlockS != nil {
		if *q.MinBlockS < 0 || *q.MinBlockS > MaxMinBlockS {
			return nil, specError("min_block_s", "must be between 0 and %d", MaxMinBlockS)
		}
		minBlock = *q.MinBlockS
	}
	var (
		resolve func(Calendar, time.Time) (Period, error)
		pos     time.Time
	)
	if q.Cursor != "" {
		c, err := decodeCursor(s.key[:], q.Cursor)
		if err != nil {
			return nil, err
		}
		if q.Period != "" || q.Start != "" || q.End != "" {
			// A client may repeat the first page's period beside the
			// cursor; another period is a mistake worth saying.
			spec, err := ParseSpec(q.Period, q.Start, q.End)
			if err != nil {
				return nil, err
			}
			if !c.names(spec) {
				return nil, specError("cursor", "belongs to another period: give the first page's period arguments, or none")
			}
		}
		if c.host != hostMark(q.Host) {
			return nil, specError("cursor", "belongs to another host: give the first page's host")
		}
		if q.MinBlockS != nil && *q.MinBlockS != c.minBlockS {
			return nil, specError("min_block_s", "differs from the cursor's (%d): give the same value or none", c.minBlockS)
		}
		minBlock, pos = c.minBlockS, c.pos
		resolve = func(cal Calendar, now time.Time) (Period, error) {
			end := c.end
			if c.open {
				end = now.Truncate(time.Millisecond)
			}
			if !c.start.Before(end) {
				return Period{}, errBadCursor()
			}
			return cal.span(c.label, c.start, end, c.weekStart), nil
		}
	} else {
		spec, err := ParseSpec(q.Period, q.Start, q.End)
		if err != nil {
			return nil, err
		}
		resolve = spec.resolve
	}
	pr, err := s.prepare(ctx, q.Host, true, resolve, q.Progress)
	if err != nil {
		return nil, err
	}
	if pos.IsZero() {
		pos = pr.period.Start
	}
	fl := pr.flatten()
	fl.indexEditors()
	blocks := fl.blocks(spanOf(pr.period.Span()), int64(minBlock)*int64(time.Second/time.Microsecond))
	p := us(pos)
	first := slices.IndexFunc(blocks, func(b block) bool { return b.end > p })
	tl := &Timeline{Period: pr.period, Blocks: []Block{}, Source: pr.source, Freshness: pr.fresh, Notes: pr.notes}
	if first < 0 {
		return tl, nil
	}
	page := blocks[first:min(first+limit, len(blocks))]
	loc := pr.period.Start.Location()
	for i, b := range page {
		if i == 0 && b.start < p {
			b.start = p
		}
		tl.Blocks = append(tl.Blocks, fl.render(b, loc))
	}
	if first+limit < len(blocks) {
		last := page[len(page)-1]
		tl.NextCursor = encodeCursor(s.key[:], cursor{label: pr.period.Label, start: pr.period.Start, end: pr.period.End,
			open: pr.period.End.Equal(pr.now.Truncate(time.Millisecond)), weekStart: pr.period.WeekStart != "",
			minBlockS: minBlock, pos: time.UnixMicro(last.end), host: hostMark(q.Host)})
	}
	return tl, nil
}

// Shorten leaves out of tl what a compact answer does without: the bucket
// listing and the freshness detail (see shortenSource), the folded
// counts, and the fractions of a second of the blocks' bounds (each
// bound is cut to its second, so the blocks stay contiguous, but never
// out of the period; DurationS keeps the exact length). Paging is
// unchanged: the cursor holds the exact position.
func (tl *Timeline) Shorten() {
	shortenSource(&tl.Source, &tl.Freshness)
	for i := range tl.Blocks {
		b := &tl.Blocks[i]
		b.Folded = 0
		b.Start, b.End = notBefore(b.Start.Truncate(time.Second), tl.Period.Start), notBefore(b.End.Truncate(time.Second), tl.Period.Start)
	}
}

func notBefore(t, floor time.Time) time.Time {
	if t.Before(floor) {
		return floor
	}
	return t
}

// item is a window or tab event of a unit.
type item struct {
	start, end int64
	u, i       int32
}

// flat is a period's events in one list each, oldest first.
type flat struct {
	units []*unitResult
	items []item
	tabs  []item
	away  []span64
	edits []item // editor events (editor.go)
	ed    editorIndex
}

func (pr *prepared) flatten() *flat {
	f := &flat{units: pr.units}
	n, nt := 0, 0
	for _, u := range pr.units {
		n, nt = n+len(u.events), nt+len(u.tabs)
	}
	f.items, f.tabs = make([]item, 0, n), make([]item, 0, nt)
	for k, u := range pr.units {
		for i, e := range u.events {
			f.items = append(f.items, item{e.Start, e.End(), int32(k), int32(i)})
		}
		for i, e := range u.tabs {
			f.tabs = append(f.tabs, item{e.Start, e.End(), int32(k), int32(i)})
		}
		for i, e := range u.edits {
			f.edits = append(f.edits, item{e.Start, e.End(), int32(k), int32(i)})
		}
		f.away = append(f.away, u.away...)
	}
	return f
}

func (f *flat) view(it item) view {
	u := f.units[it.u]
	return u.vs[u.views[it.i]]
}

func (f *flat) tabView(it item) tabView {
	u := f.units[it.u]
	return u.tvs[u.tviews[it.i]]
}

// awayIndex is the index of the first AFK span that ends after a.
func (f *flat) awayIndex(a int64) int {
	i, _ := slices.BinarySearchFunc(f.away, a, func(s span64, t int64) int {
		if s.end <= t {
			return -1
		}
		return 1
	})
	return i
}

// awayWithin is the AFK time within [a, b).
func (f *flat) awayWithin(a, b int64) int64 {
	var n int64
	for i := f.awayIndex(a); i < len(f.away) && f.away[i].start < b; i++ {
		n += min(b, f.away[i].end) - max(a, f.away[i].start)
	}
	return n
}

// gapKind says why [a, b) has no activity: mostly AFK, or no data.
func (f *flat) gapKind(a, b int64) string {
	if 2*f.awayWithin(a, b) >= b-a {
		return GapAFK
	}
	return GapNoData
}

// appendGaps appends [a, b), time without activity, to raw as gaps: its
// AFK time as AFK gaps, the rest as no-data gaps, so the AFK gaps hold
// exactly the AFK time. k is the index of the next item.
func (f *flat) appendGaps(raw []block, a, b int64, k int) []block {
	add := func(s, e int64, kind string) {
		if e <= s {
			return
		}
		if n := len(raw); n > 0 && raw[n-1].gap == kind && raw[n-1].end == s {
			raw[n-1].end = e
			return
		}
		raw = append(raw, block{start: s, end: e, gap: kind, lo: k, hi: k, name: e - s})
	}
	for i := f.awayIndex(a); i < len(f.away) && f.away[i].start < b; i++ {
		s := max(a, f.away[i].start)
		add(a, s, GapNoData)
		a = max(a, min(b, f.away[i].end))
		add(s, a, GapAFK)
	}
	add(a, b, GapNoData)
	return raw
}

// block is a timeline block before rendering: items [lo, hi) hold its
// events (and those folded into it); v is the app of its longest stretch,
// which lasts name.
type block struct {
	start, end int64
	gap        string
	v          view
	lo, hi     int
	folded     int
	name       int64
}

// blocks are the period's stretches in one app and its gaps, covering it
// without overlap, with blocks shorter than minBlock folded.
func (f *flat) blocks(ps span64, minBlock int64) []block {
	var raw []block
	at := ps.start
	for k := 0; k < len(f.items); {
		it := f.items[k]
		v := f.view(it)
		j, end := k+1, it.end
		for j < len(f.items) && sameFocus(f.view(f.items[j]), v) && f.items[j].start-end <= focusGap {
			end = max(end, f.items[j].end)
			j++
		}
		start := max(it.start, at)
		if start > at {
			raw = f.appendGaps(raw, at, start, k)
		}
		if end > start {
			raw = append(raw, block{start: start, end: end, v: v, lo: k, hi: j, name: end - start})
			at = end
		}
		k = j
	}
	raw = f.appendGaps(raw, at, ps.end, len(f.items))
	return fold(raw, minBlock)
}

// mergeable reports whether b continues a: the same gap, or the same app.
func mergeable(a, b block) bool {
	if a.gap != "" || b.gap != "" {
		return a.gap == b.gap
	}
	return sameFocus(a.v, b.v)
}

// fold folds the app stretches shorter than minBlock so that the time is
// kept: app blocks hold exactly the period's active time, AFK gaps its
// AFK time, no-data gaps the rest, whatever minBlock. The rules:
//   - a short stretch folds into the app block before it when that block
//     touches it, else (first of a run of activity after a gap or the
//     period's start) into the next long stretch of its run;
//   - activity never folds into a gap, nor a gap into activity: a run of
//     short stretches between two gaps is one block of its own, named by
//     its longest stretch, however short;
//   - gaps are never folded (an AFK gap next to a no-data gap stays: each
//     holds its own kind of time); neighbours of one app or kind join.
func fold(raw []block, minBlock int64) []block {
	out := make([]block, 0, len(raw))
	var pending *block // the short stretches starting a run of activity
	// join joins b to into, counting it as folded or not.
	join := func(into *block, b block, counted int) {
		into.start, into.end = min(into.start, b.start), max(into.end, b.end)
		into.lo, into.hi = min(into.lo, b.lo), max(into.hi, b.hi)
		into.folded += counted + b.folded
		if b.name > into.name {
			into.v, into.name = b.v, b.name
		}
	}
	absorb := func(into *block, b block) { join(into, b, 1) }
	push := func(b block) {
		if n := len(out); n > 0 && mergeable(out[n-1], b) {
			join(&out[n-1], b, 0)
			return
		}
		out = append(out, b)
	}
	for _, b := range raw {
		n := len(out)
		switch {
		case b.gap != "":
			if pending != nil {
				push(*pending)
				pending = nil
			}
			push(b)
		case b.end-b.start >= minBlock:
			if pending != nil {
				absorb(&b, *pending)
				pending = nil
			}
			push(b)
		case pending != nil:
			absorb(pending, b)
		case n > 0 && out[n-1].gap == "":
			absorb(&out[n-1], b)
		default:
			p := b
			pending = &p
		}
	}
	if pending != nil {
		push(*pending)
	}
	return out
}

// render shows a block: the app of its longest stretch and, of that
// app's time in the block, the title and browser domain that were shown
// together longest (never a title from one page with another's domain),
// privacy applied.
func (f *flat) render(b block, loc *time.Location) Block {
	out := Block{Start: time.UnixMicro(b.start).In(loc), End: time.UnixMicro(b.end).In(loc),
		DurationS: seconds(b.end - b.start), Folded: b.folded, Gap: b.gap}
	if b.gap != "" {
		return out
	}
	if b.v.excluded {
		out.App, out.Excluded = KeyExcluded, true
		return out
	}
	out.App = b.v.app
	type shown struct {
		title, domain string
		withheld      bool
	}
	times := map[shown]int64{}
	for k := b.lo; k < b.hi; k++ {
		it := f.items[k]
		v := f.view(it)
		if !sameFocus(v, b.v) {
			continue
		}
		rest := it.end - it.start
		f.tabsWithin(it.start, it.end, func(tv tabView, d int64) {
			if !tv.hidden && !tv.excluded && tv.domain != "" {
				times[shown{v.title, tv.domain, v.withheld}] += d
				rest -= d
			}
		})
		if rest > 0 {
			times[shown{v.title, "", v.withheld}] += rest
		}
	}
	var best shown
	n := int64(-1)
	for k, d := range times { // the most time; on a tie a title shown, then the smaller
		if d > n || d == n && (best.withheld && !k.withheld || best.withheld == k.withheld &&
			(k.title < best.title || k.title == best.title && k.domain < best.domain)) {
			best, n = k, d
		}
	}
	out.Title, out.Domain, out.Withheld = best.title, best.domain, best.withheld
	out.Project = f.project(b)
	return out
}

// tabsWithin calls fn with each tab event overlapping [a, b) and the
// length of the overlap.
func (f *flat) tabsWithin(a, b int64, fn func(tabView, int64)) {
	for i := f.tabIndex(a); i < len(f.tabs) && f.tabs[i].start < b; i++ {
		t := f.tabs[i]
		if d := min(b, t.end) - max(a, t.start); d > 0 {
			fn(f.tabView(t), d)
		}
	}
}

// tabIndex is the index of the first tab event that may reach past a.
func (f *flat) tabIndex(a int64) int {
	return firstReaching(f.tabs, a, func(t item) (int64, int64) { return t.start, t.end })
}
