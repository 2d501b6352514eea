package activity

import (
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
