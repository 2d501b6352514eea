package activity

import (
	"maps"
	"sync"
	"time"
)

// Estimated memory of what the store keeps, for its byte bound: an event
// is 64 bytes, its share of the decoded data (shared between events with
// the same data) about 100 more.
const (
	bytesPerEvent     = 160
	bytesPerResultEvt = 96
)

// dayKey names a bucketDay: a host's bucket (a bucket deleted and created
// again under its id is another) and a day.
type dayKey struct {
	host    string
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

// rangeKey names a bucket's stretch of whole days.
type rangeKey struct {
	bucket  string
	created int64
	span    span64
}

// maxRanges bounds the ranges kept: a few periods' runs per bucket.
const maxRanges = 256

// store keeps closed days' events (dayKey: *bucketDay) and computed units
// (unitKey: *unitResult), bounded by age and by estimated bytes, least
// recently used first out. Safe for concurrent use; a nil store keeps
// nothing.
type store struct {
	maxBytes int64
	maxAge   time.Duration

	mu      sync.Mutex
	entries map[any]*stored
	// ranges are the server's event counts of runs of complete days, as
	// last confirmed (see revalidate).
	ranges map[rangeKey]int64
	bytes  int64
	tick   int64
}

type stored struct {
	v     any
	start int64 // the day's or unit's start
	bytes int64
	used  int64
}

func newStore(maxBytes int64, maxAge time.Duration) *store {
	return &store{maxBytes: maxBytes, maxAge: maxAge, entries: map[any]*stored{}, ranges: map[rangeKey]int64{}}
}

// enabled reports whether the store keeps anything.
func (s *store) enabled() bool { return s != nil && s.maxBytes > 0 }

// keeps reports whether a day starting at start is young enough to keep.
func (s *store) keeps(start int64, now time.Time) bool {
	return s.enabled() && start >= us(now.Add(-s.maxAge))
}

// get returns the value stored under k, marked as used, or nil.
func (s *store) get(k any) any {
	if !s.enabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	if !ok {
		return nil
	}
	s.tick++
	e.used = s.tick
	return e.v
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
	if e, ok := s.entries[key]; ok {
		e.used = s.tick
		return e.v.(*bucketDay)
	}
	b := newBucketDay(key.bucket, day)
	s.entries[key] = &stored{v: b, start: day.start, used: s.tick}
	return b
}

// peekDay returns the stored bucketDay of key, or nil.
func (s *store) peekDay(key dayKey) *bucketDay {
	if !s.enabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		return e.v.(*bucketDay)
	}
	return nil
}

// unit returns a stored unit, or nil.
func (s *store) unit(key unitKey) *unitResult {
	u, _ := s.get(key).(*unitResult)
	return u
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
	for k := range s.entries {
		if k, ok := k.(unitKey); ok {
			lo, hi := k.span.start, k.span.end
			if k.before {
				lo -= margin
			}
			if k.after {
				hi += margin
			}
			if lo < day.end && day.start < hi {
				s.drop(k)
			}
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
	if e, ok := s.entries[key]; ok && e.v == b {
		nb := int64(events) * bytesPerEvent
		s.bytes += nb - e.bytes
		e.bytes = nb
	}
	s.evict(now)
}

// putUnit stores a final unit.
func (s *store) putUnit(key unitKey, u *unitResult, now time.Time) {
	if !s.keeps(key.span.start, now) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[key]; ok {
		s.drop(key)
	}
	s.tick++
	n := u.bytes()
	s.entries[key] = &stored{v: u, start: key.span.start, bytes: n, used: s.tick}
	s.bytes += n
	s.evict(now)
}

// drop removes k. Called with mu held.
func (s *store) drop(k any) {
	s.bytes -= s.entries[k].bytes
	delete(s.entries, k)
}

// evict drops what is too old, then the least recently used until within
// maxBytes. Called with mu held.
func (s *store) evict(now time.Time) {
	oldest := us(now.Add(-s.maxAge))
	for k, e := range s.entries {
		if e.start < oldest {
			s.drop(k)
		}
	}
	maps.DeleteFunc(s.ranges, func(k rangeKey, _ int64) bool { return k.span.start < oldest })
	for s.bytes > s.maxBytes && len(s.entries) > 0 {
		var lru any
		used := int64(-1)
		for k, e := range s.entries {
			if used < 0 || e.used < used {
				lru, used = k, e.used
			}
		}
		s.drop(lru)
	}
}
