package activity

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/upstream"
)

// Reading, stitching and keeping a day's events, in one place: a call's
// period is read by days (loadInto), each bucket's day from what the
// store keeps of it (a bucketDay), reading only what it lacks (ensure:
// the part before what it holds, and the newest minutes again) through
// one read (readSpan), whose answer is decoded once, clipped to the span
// read and stitched to what was held where a read's boundary cut an
// event.

// ev is an event as the computation holds it: times in microseconds since
// the epoch, data decoded.
type ev = transform.Event

// us is t in microseconds since the epoch.
func us(t time.Time) int64 { return t.UnixMicro() }

// span64 is a half-open stretch of time [start, end) in microseconds.
type span64 struct{ start, end int64 }

func spanOf(s Span) span64 { return span64{us(s.Start), us(s.End)} }

// bucketDay is one bucket's events of one calendar day as far as they were
// read: the covered stretch [from, to) of the day, oldest first, clipped
// to it, an event cut at a read's boundary joined again.
type bucketDay struct {
	// held has a token while a call reads the day: a call waiting for
	// it can give up when its ctx ends (a read may wait for the heavy
	// read in flight of another call).
	held   chan struct{}
	bucket string
	day    span64
	// covered, events and readAt change only while held.
	covered bool
	from    int64
	to      int64
	events  []ev
	// readAt is when [.., to) was last read: data older than readAt -
	// Reread is taken as final.
	readAt int64
	// holes are the stretches whose events ActivityWatch holds too many
	// of to read (see readSpan), in time order: left out.
	holes []span64
	// checkedAt is when the server last confirmed a complete day (see
	// revalidate); count, when counted, is the server's count of the
	// day's events then.
	checkedAt int64
	count     int64
	counted   bool
}

// forget drops what b read (the server's copy changed): the next read
// reads it whole. Called with b held.
func (b *bucketDay) forget() {
	b.covered, b.from, b.to, b.events, b.readAt = false, 0, 0, nil, 0
}

// newBucketDay returns an empty bucketDay of bucket's day.
func newBucketDay(bucket string, day span64) *bucketDay {
	return &bucketDay{held: make(chan struct{}, 1), bucket: bucket, day: day}
}

// hold waits to read the day, until ctx ends; release ends the hold.
func (b *bucketDay) hold(ctx context.Context) error {
	select {
	case b.held <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bucketDay) release() { <-b.held }

// trusted is how far the events read are final: to, or less where the
// last read is too recent to exclude events arriving late or the newest
// one growing.
func (b *bucketDay) trusted(reread int64) int64 {
	return max(b.from, min(b.to, b.readAt-reread))
}

// complete reports whether the whole day is read and final.
func (b *bucketDay) complete(reread int64) bool {
	return b.covered && b.from <= b.day.start && b.trusted(reread) >= b.day.end
}

// overlapLookback is how far back from an event the ones that overlap it
// are looked for: a watcher's events rarely overlap, and then only their
// neighbours.
const overlapLookback = 64

// clip64 keeps the part of e within [lo, hi): false when none is. An
// event without duration is kept when it starts within; one left whole
// keeps its duration exactly as served.
func clip64(e ev, lo, hi int64) (ev, bool) {
	start, end := e.Start, e.End()
	if e.Duration == 0 {
		return e, start >= lo && start < hi
	}
	if end <= lo || start >= hi {
		return e, false
	}
	if start < lo || end > hi {
		start, end = max(start, lo), min(end, hi)
		e.Start, e.Duration = start, end-start
	}
	return e, true
}

// stitchTolerance is how close to a read's boundary an event must end and
// the next begin to be taken for one event the boundary cut (durations are
// float seconds; the server rounds the range's end up by 1 ms).
const stitchTolerance = time.Millisecond

// stitch appends b to a, joining a's last event and b's first when they
// are the two parts of one stored event cut at boundary (the same id,
// meeting there).
func stitch(a, b []ev, boundary int64) []ev {
	if len(a) > 0 && len(b) > 0 {
		l, r := &a[len(a)-1], b[0]
		near := func(t int64) bool {
			return t-boundary > -stitchTolerance.Microseconds() && t-boundary < stitchTolerance.Microseconds()
		}
		if l.ID != 0 && l.ID == r.ID && near(l.End()) && near(r.Start) {
			l.Duration = r.End() - l.Start
			b = b[1:]
		}
	}
	return append(a, b...)
}

// truncateAt drops the events starting at or after cut and cuts the ones
// reaching past it.
func truncateAt(evs []ev, cut int64) []ev {
	n := len(evs)
	for n > 0 && evs[n-1].Start >= cut {
		n--
	}
	evs = evs[:n]
	for i := n - 1; i >= 0 && i >= n-overlapLookback; i-- {
		if e := &evs[i]; e.End() > cut {
			e.Duration = cut - e.Start
		}
	}
	return evs
}

func newPeriodEvents(in inputs, days []dayPlan, b *budget) *periodEvents {
	ld := &periodEvents{days: days, reads: make([][]dayRead, len(in.targets)), failed: make([]error, len(in.targets)), budget: b}
	for t := range ld.reads {
		ld.reads[t] = make([]dayRead, len(days))
	}
	return ld
}

// periodEvents is what one call read of each target's days within the
// period, [target][day], until the day is let go (release).
type periodEvents struct {
	days   []dayPlan
	reads  [][]dayRead
	failed []error // per target: its first read failing
	budget *budget // counts the events held
}

// dayRead is one target's day as read.
type dayRead struct {
	events []ev     // oldest first, nil once let go
	count  int      // how many events were read
	end    int64    // the newest one's end (0: none)
	holes  []span64 // stretches left out (too many events)
}

// release lets day d's events go: every unit reading them is computed.
func (ld *periodEvents) release(d int) {
	for t := range ld.reads {
		ld.budget.refund(len(ld.reads[t][d].events))
		ld.reads[t][d].events = nil
	}
}

// loadInto reads every target's events of every day into ld, only what
// the store lacks, at most Parallel reads at once, the newest day first,
// and calls onDay (when set) as each day is complete, telling whether one
// of its reads failed (ctx is cancelled once the call has failed). The
// first failure of a window or AFK bucket cancels the reads left (no
// answer without it) and fails the call with an *nowframe.UnreadableError; a web
// bucket's failure only marks it (ld.failed). Else it returns ctx's error
// (some days were never read).
func (s *Service) loadInto(ctx context.Context, ld *periodEvents, in inputs, now time.Time, prog *progress, onDay func(d int, failed bool)) error {
	days, targets := ld.days, in.targets
	read := func(ctx context.Context, t, d int) error {
		tg := targets[t]
		evs, holes, err := s.loadDay(ctx, ld.budget, tg.day(days[d].full.start), days[d], now)
		if err != nil {
			return &ReadError{Role: tg.role, Day: days[d].date, Err: err}
		}
		// Each (target, day) has its own slot.
		ld.reads[t][d] = dayRead{evs, len(evs), newestEnd(evs), holes}
		return ld.budget.charge(len(evs))
	}
	type job struct{ t, d int }
	reads := make([]int, len(days)) // reads done per day
	failedDay := make([]bool, len(days))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	queue := make(chan job)
	for range min(s.opts.parallel, len(targets)*len(days)) {
		wg.Go(func() {
			for j := range queue {
				err := read(ctx, j.t, j.d)
				mu.Lock()
				if err != nil && ld.failed[j.t] == nil && ctx.Err() == nil {
					// Once ctx is done, failures are its consequence.
					ld.failed[j.t] = err
					if targets[j.t].role != RoleWeb {
						cancel()
					}
				}
				failedDay[j.d] = failedDay[j.d] || err != nil
				reads[j.d]++
				done, failed := reads[j.d] == len(targets), failedDay[j.d]
				mu.Unlock()
				if done {
					prog.step(1, "reading ActivityWatch's events by day")
					if onDay != nil && ctx.Err() == nil {
						onDay(j.d, failed)
					}
				}
			}
		})
	}
feed:
	for d := len(days) - 1; d >= 0; d-- {
		for t := range targets {
			select {
			case queue <- job{t, d}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(queue)
	wg.Wait()

	var (
		failed   []string
		failures []error
	)
	for t, tg := range targets {
		if ld.failed[t] != nil && tg.role != RoleWeb {
			failed = append(failed, tg.id)
			failures = append(failures, ld.failed[t])
		}
	}
	if len(failed) > 0 {
		return &nowframe.UnreadableError{Buckets: failed, Err: upstream.Join(failures...)}
	}
	return parent.Err()
}

// loadDay returns one bucket's events of one day within the period,
// reading what the store lacks.
func (s *Service) loadDay(ctx context.Context, b *budget, key dayKey, d dayPlan, now time.Time) ([]ev, []span64, error) {
	bd := s.store.day(key, d.full, now)
	if err := bd.hold(ctx); err != nil {
		return nil, nil, err
	}
	read, err := s.ensure(ctx, b, bd, d.need, now)
	var (
		evs   []ev
		holes []span64
	)
	if err == nil {
		if d.need == d.full && bd.complete(reread.Microseconds()) {
			evs = bd.events // final: never changed again
		} else {
			evs = sliceEvents(bd.events, d.need.start, d.need.end)
		}
		holes = clipSpans(bd.holes, d.need)
	}
	n := len(bd.events)
	bd.release()
	if read {
		s.store.resize(key, bd, n, now)
	}
	return evs, holes, err
}

// clipSpans returns the parts of spans within sp, in a new slice.
func clipSpans(spans []span64, sp span64) []span64 {
	var out []span64
	for _, h := range spans {
		if c := (span64{max(h.start, sp.start), min(h.end, sp.end)}); c.start < c.end {
			out = append(out, c)
		}
	}
	return out
}

// newestStart is the start of the newest of evs (in time order but for
// overlaps, which are looked for a little way back).
func newestStart(evs []ev) int64 {
	start := evs[len(evs)-1].Start
	for _, e := range evs[max(0, len(evs)-overlapLookback):] {
		start = max(start, e.Start)
	}
	return start
}

// ensure reads what bd lacks of need: the part before what it holds, and
// the part after what is final (re-reading the last Reread of it, joined
// again at the cut). Called with bd held.
func (s *Service) ensure(ctx context.Context, b *budget, bd *bucketDay, need span64, now time.Time) (read bool, err error) {
	reread := reread.Microseconds()
	nowUS := us(now)
	if !bd.covered {
		evs, holes, err := s.read(ctx, b, bd.bucket, need)
		if err != nil {
			return false, err
		}
		bd.covered, bd.from, bd.to, bd.events, bd.readAt, bd.holes = true, need.start, need.end, evs, nowUS, holes
		return true, nil
	}
	if need.start < bd.from {
		evs, holes, err := s.read(ctx, b, bd.bucket, span64{need.start, bd.from})
		if err != nil {
			return false, err
		}
		bd.events = stitch(evs, bd.events, bd.from)
		bd.from, bd.holes, read = need.start, append(holes, bd.holes...), true
	}
	if trusted := bd.trusted(reread); need.end > trusted {
		cut := trusted - trusted%int64(time.Millisecond/time.Microsecond)
		if n := len(bd.events); n > 0 {
			// A watcher may store an event dated back before the cut (the
			// AFK watcher's "afk" comes once its timeout has passed, from
			// the last input on): read again from the newest event's start,
			// which such an event can only follow.
			cut = min(cut, newestStart(bd.events))
		}
		cut = max(cut, bd.from)
		end := max(need.end, bd.to)
		evs, holes, err := s.read(ctx, b, bd.bucket, span64{cut, end})
		if err != nil {
			return read, err
		}
		bd.events = stitch(truncateAt(bd.events, cut), evs, cut)
		bd.holes = append(clipSpans(bd.holes, span64{bd.from, cut}), holes...)
		bd.to, bd.readAt, read = end, nowUS, true
	}
	return read, nil
}

// read reads one bucket's events within sp, decoded, oldest first, and
// the stretches left out because ActivityWatch holds too many events
// there; the caller counts what it keeps against the call's budget.
func (s *Service) read(ctx context.Context, b *budget, bucket string, sp span64) ([]ev, []span64, error) {
	var dec transform.Decoder // one per read: events repeating data share it
	evs, holes, err := s.readSpan(ctx, b, &dec, bucket, sp)
	b.refund(len(evs))
	return evs, holes, err
}

// readSpan reads one bucket's events within sp in one call through the
// source, decoded, oldest first, clipped to sp. An answer over the
// client's body limit halves sp (down to minSplit) and reads each half,
// the halves joined again where the cut split an event; a span still too
// large at minSplit is left out, returned as a hole. The events returned
// are charged to bg (the caller refunds them);
// running out of it fails the read.
func (s *Service) readSpan(ctx context.Context, bg *budget, dec *transform.Decoder, id string, sp span64) ([]ev, []span64, error) {
	var (
		got              []aw.Event
		tooLarge, unread bool
	)
	long := sp.end - sp.start
	if long > heavySpan.Microseconds() {
		select {
		case s.heavy <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	err := s.opts.Source.Do(ctx, func(ctx context.Context) error {
		evs, err := s.opts.AW.Events(ctx, id, aw.EventQuery{Start: time.UnixMicro(sp.start), End: time.UnixMicro(sp.end), SkipMalformed: true})
		if aw.KindOf(err) == aw.TooLarge {
			// The server answered; our limit refused it. Not a failure:
			// halve the span, or leave it out once it is minSplit short
			// (anything can store that many events in so short a time).
			tooLarge, unread = long >= 2*minSplit.Microseconds(), long < 2*minSplit.Microseconds()
			return nil
		}
		got = evs
		return err
	})
	if long > heavySpan.Microseconds() {
		<-s.heavy // released before the halves are read
	}
	switch {
	case err != nil:
		return nil, nil, err
	case unread:
		return nil, []span64{sp}, nil
	case !tooLarge:
		if err := bg.charge(len(got)); err != nil {
			bg.refund(len(got))
			return nil, nil, err
		}
		evs := make([]ev, 0, len(got))
		for i := len(got) - 1; i >= 0; i-- { // served newest first
			if e, ok := clip64(dec.Event(got[i]), sp.start, sp.end); ok {
				evs = append(evs, e)
			}
		}
		bg.refund(len(got) - len(evs))
		return evs, nil, nil
	}
	mid := sp.start + long/2
	mid -= mid % int64(time.Millisecond/time.Microsecond)
	a, ha, err := s.readSpan(ctx, bg, dec, id, span64{sp.start, mid})
	if err != nil {
		return nil, nil, err
	}
	b, hb, err := s.readSpan(ctx, bg, dec, id, span64{mid, sp.end})
	if err != nil {
		bg.refund(len(a))
		return nil, nil, err
	}
	n := len(a) + len(b)
	a = stitch(a, b, mid)
	bg.refund(n - len(a))
	return a, append(ha, hb...), nil
}

// sliceEvents returns the events of evs (by start) within [from, to),
// clipped, in a new slice.
func sliceEvents(evs []ev, from, to int64) []ev {
	var out []ev
	for _, e := range evs[firstReaching(evs, from, func(e ev) (int64, int64) { return e.Start, e.End() }):] {
		if e.Start >= to {
			break
		}
		if c, ok := clip64(e, from, to); ok {
			out = append(out, c)
		}
	}
	return out
}

// firstReaching is the index of the first of xs (in order of start but
// for overlaps, which reach back at most overlapLookback) that may end
// after a; span gives an x's start and end.
func firstReaching[T any](xs []T, a int64, span func(T) (int64, int64)) int {
	i, _ := slices.BinarySearchFunc(xs, a, func(x T, t int64) int {
		start, _ := span(x)
		return cmp.Compare(start, t)
	})
	first := i
	for k := i - 1; k >= 0 && k >= i-overlapLookback; k-- {
		if _, end := span(xs[k]); end > a {
			first = k
		}
	}
	return first
}

// gather is one target's events over [from, to), joined across days.
func (ld *periodEvents) gather(t int, from, to int64) []ev {
	var out []ev
	for d, dp := range ld.days {
		if dp.need.end <= from || dp.need.start >= to {
			continue
		}
		part := ld.reads[t][d].events
		if dp.need.start < from || dp.need.end > to {
			part = sliceEvents(part, from, to)
		}
		out = stitch(out, part, dp.need.start)
	}
	return out
}

// newestEnd is the end of the newest of evs (0 when there are none).
func newestEnd(evs []ev) int64 {
	var end int64
	for _, e := range evs[max(0, len(evs)-overlapLookback):] {
		end = max(end, e.End())
	}
	return end
}
