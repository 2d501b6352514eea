package activity

import (
	"context"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw/transform"
)

// ev is an event as the computation holds it: times in microseconds since
// the epoch, data decoded.
type ev = transform.Event[transform.Fields]

// us is t in microseconds since the epoch.
func us(t time.Time) int64 { return t.UnixMicro() }

// span64 is a half-open stretch of time [start, end) in microseconds.
type span64 struct{ start, end int64 }

func spanOf(s Span) span64 { return span64{us(s.Start), us(s.End)} }

// Estimated memory of what the store keeps, for its byte bound: an event
// is 64 bytes, its share of the decoded data (shared between events with
// the same data) about 100 more.
const (
	bytesPerEvent     = 160
	bytesPerResultEvt = 96
)

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
	// of to read (see piece.unread), in time order: left out.
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

// clip64 keeps the part of e within [lo, hi) (see clip).
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

// dayKey names a bucketDay: a bucket (a bucket deleted and created again
// under its id is another) and a day.
type dayKey struct {
	bucket  string
	created int64
	start   int64
}

// unitKey names a computed unit: the buckets and settings it was computed
// with, its span, and whether the computation saw the time around it.
type unitKey struct {
	inputs        string // bucket ids and settings fingerprint
	span          span64
	before, after bool
}

// store keeps closed days' events and computed units, bounded by age and
// by estimated bytes, least recently used first out. Safe for concurrent
// use.
type store struct {
	maxBytes int64
	maxAge   time.Duration

	mu    sync.Mutex
	days  map[dayKey]*storedDay
	units map[unitKey]*storedUnit
	// ranges are the server's event counts of runs of complete days, as
	// last confirmed (see revalidate).
	ranges map[rangeKey]int64
	bytes  int64
	tick   int64
}

// rangeKey names a bucket's stretch of whole days.
type rangeKey struct {
	bucket  string
	created int64
	span    span64
}

// maxRanges bounds the ranges kept: a few periods' runs per bucket.
const maxRanges = 256

type storedDay struct {
	b     *bucketDay
	bytes int64
	used  int64
}

type storedUnit struct {
	u     *unitResult
	bytes int64
	used  int64
}

func newStore(maxBytes int64, maxAge time.Duration) *store {
	return &store{maxBytes: maxBytes, maxAge: maxAge, days: map[dayKey]*storedDay{}, units: map[unitKey]*storedUnit{},
		ranges: map[rangeKey]int64{}}
}

// enabled reports whether the store keeps anything.
func (s *store) enabled() bool { return s != nil && s.maxBytes > 0 }

// keeps reports whether a day starting at start is young enough to keep.
func (s *store) keeps(start int64, now time.Time) bool {
	return s.enabled() && start >= us(now.Add(-s.maxAge))
}

// day returns the stored bucketDay of key, creating (and storing) an
// empty one when there is none and the day is kept.
func (s *store) day(key dayKey, day span64, now time.Time) *bucketDay {
	if !s.keeps(day.start, now) {
		return newBucketDay(key.bucket, day)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick++
	if d, ok := s.days[key]; ok {
		d.used = s.tick
		return d.b
	}
	b := newBucketDay(key.bucket, day)
	s.days[key] = &storedDay{b: b, used: s.tick}
	return b
}

// peekDay returns the stored bucketDay of key, or nil.
func (s *store) peekDay(key dayKey) *bucketDay {
	if !s.enabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.days[key]; ok {
		return d.b
	}
	return nil
}

// rangeCount returns the count last confirmed for k.
func (s *store) rangeCount(k rangeKey) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.ranges[k]
	return n, ok
}

// setRangeCount records the count confirmed for k.
func (s *store) setRangeCount(k rangeKey, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ranges) >= maxRanges {
		clear(s.ranges)
	}
	s.ranges[k] = n
}

// dropUnits drops the units whose computation saw any of day (their span
// and margins): a day whose events changed.
func (s *store) dropUnits(day span64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, u := range s.units {
		lo, hi := k.span.start, k.span.end
		if k.before {
			lo -= margin
		}
		if k.after {
			hi += margin
		}
		if lo < day.end && day.start < hi {
			s.bytes -= u.bytes
			delete(s.units, k)
		}
	}
}

// resize records b's new size (after a read) and evicts what exceeds the
// bounds.
func (s *store) resize(key dayKey, b *bucketDay, events int, now time.Time) {
	if !s.keeps(b.day.start, now) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.days[key]; ok && d.b == b {
		nb := int64(events) * bytesPerEvent
		s.bytes += nb - d.bytes
		d.bytes = nb
	}
	s.evict(now)
}

// unit returns a stored unit.
func (s *store) unit(key unitKey) *unitResult {
	if !s.enabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.units[key]
	if !ok {
		return nil
	}
	s.tick++
	u.used = s.tick
	return u.u
}

// putUnit stores a final unit.
func (s *store) putUnit(key unitKey, u *unitResult, now time.Time) {
	if !s.keeps(key.span.start, now) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.units[key]; ok {
		s.bytes -= old.bytes
	}
	s.tick++
	n := u.bytes()
	s.units[key] = &storedUnit{u: u, bytes: n, used: s.tick}
	s.bytes += n
	s.evict(now)
}

// evict drops what is too old, then the least recently used until within
// maxBytes. Called with mu held.
func (s *store) evict(now time.Time) {
	oldest := us(now.Add(-s.maxAge))
	for k, d := range s.days {
		if k.start < oldest {
			s.bytes -= d.bytes
			delete(s.days, k)
		}
	}
	for k, u := range s.units {
		if k.span.start < oldest {
			s.bytes -= u.bytes
			delete(s.units, k)
		}
	}
	for k := range s.ranges {
		if k.span.start < oldest {
			delete(s.ranges, k)
		}
	}
	for s.bytes > s.maxBytes {
		var (
			lru            int64 = -1
			dk             dayKey
			uk             unitKey
			isDay, isFound bool
		)
		for k, d := range s.days {
			if !isFound || d.used < lru {
				lru, dk, isDay, isFound = d.used, k, true, true
			}
		}
		for k, u := range s.units {
			if !isFound || u.used < lru {
				lru, uk, isDay, isFound = u.used, k, false, true
			}
		}
		if !isFound {
			return
		}
		if isDay {
			s.bytes -= s.days[dk].bytes
			delete(s.days, dk)
		} else {
			s.bytes -= s.units[uk].bytes
			delete(s.units, uk)
		}
	}
}

// size is the estimated bytes held (for tests).
func (s *store) size() (bytes int64, days, units int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, len(s.days), len(s.units)
}
