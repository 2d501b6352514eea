package awsim

import (
	"errors"
	"sort"
)

// event is one stored event. ts is truncated to ms; dur may be negative (the
// server stores what it is given).
type event struct {
	id   int64
	ts   int64 // µs, UTC
	dur  int64 // µs
	data any   // a JSON value, usually *object
}

func (e *event) end() int64 { return e.ts + e.dur }

// json is the event as aw-server serialises it: id, timestamp, duration,
// data, in that order. A nil id is null (merged or synthetic events).
func (e *event) json(withID bool) *object {
	o := newObject()
	if withID {
		if e.id == 0 {
			o.set("id", nil)
		} else {
			o.set("id", int64(e.id))
		}
	}
	o.set("timestamp", isoformat(e.ts))
	o.set("duration", durSeconds(e.dur))
	o.set("data", e.data)
	return o
}

// bucket is one bucket: metadata plus its events sorted by (ts, id).
type bucket struct {
	id       string
	created  int64
	name     any
	typ      string
	client   string
	hostname string
	data     any
	events   []*event
}

// metadata is GET /api/0/buckets/<id>: no last_updated.
func (b *bucket) metadata() *object {
	return obj("id", b.id, "created", isoformat(b.created), "name", b.name, "type", b.typ,
		"client", b.client, "hostname", b.hostname, "data", b.data)
}

func (b *bucket) newest() *event {
	if len(b.events) == 0 {
		return nil
	}
	return b.events[len(b.events)-1]
}

func (b *bucket) insertSorted(e *event) {
	i := sort.Search(len(b.events), func(i int) bool {
		x := b.events[i]
		return x.ts > e.ts || (x.ts == e.ts && x.id > e.id)
	})
	b.events = append(b.events, nil)
	copy(b.events[i+1:], b.events[i:])
	b.events[i] = e
}

func (b *bucket) remove(e *event) {
	for i, x := range b.events {
		if x == e {
			b.events = append(b.events[:i], b.events[i+1:]...)
			return
		}
	}
}

// errTooMany caps the simulator's memory (a 500, like a failing database).
var errTooMany = errors.New("awsim: event limit reached")

// maxEvents bounds the events the simulator keeps across all buckets.
const maxEvents = 2_000_000

// store is aw-server's peewee storage in memory. Not safe for concurrent
// use: Server guards it with its mutex.
type store struct {
	buckets []*bucket // creation order (SQLite rowid order)
	byID    map[string]*bucket
	owner   map[int64]*bucket // event id -> bucket
	events  map[int64]*event
	maxID   int64 // largest event id present (SQLite allocates maxID+1)
}

func newStore() *store {
	return &store{byID: map[string]*bucket{}, owner: map[int64]*bucket{}, events: map[int64]*event{}}
}

func (s *store) bucket(id string) *bucket { return s.byID[id] }

// createBucket reports false when the bucket exists.
func (s *store) createBucket(b *bucket) bool {
	if _, ok := s.byID[b.id]; ok {
		return false
	}
	if b.data == nil {
		b.data = newObject()
	}
	s.buckets = append(s.buckets, b)
	s.byID[b.id] = b
	return true
}

func (s *store) deleteBucket(id string) {
	b := s.byID[id]
	if b == nil {
		return
	}
	for _, e := range b.events {
		delete(s.owner, e.id)
		delete(s.events, e.id)
	}
	delete(s.byID, id)
	for i, x := range s.buckets {
		if x == b {
			s.buckets = append(s.buckets[:i], s.buckets[i+1:]...)
			break
		}
	}
	s.recomputeMaxID()
}

func (s *store) recomputeMaxID() {
	s.maxID = 0
	for id := range s.events {
		s.maxID = max(s.maxID, id)
	}
}

// insert adds a new event with the next id (SQLite: max(rowid)+1).
func (s *store) insert(b *bucket, ts, dur int64, data any) (*event, error) {
	if len(s.events) >= maxEvents {
		return nil, errTooMany
	}
	if data == nil {
		data = newObject()
	}
	s.maxID++
	e := &event{id: s.maxID, ts: ts, dur: dur, data: data}
	s.events[e.id] = e
	s.owner[e.id] = b
	b.insertSorted(e)
	return e, nil
}

// update is peewee's save() of an event that carries an id: an UPDATE of
// that row (which may move it to bucket b), or nothing when no row has it.
func (s *store) update(b *bucket, id, ts, dur int64, data any) {
	e := s.events[id]
	if e == nil {
		return
	}
	if data == nil {
		data = newObject()
	}
	s.owner[id].remove(e)
	e.ts, e.dur, e.data = ts, dur, data
	s.owner[id] = b
	b.insertSorted(e)
}

func (s *store) deleteEvent(b *bucket, id int64) int {
	e := s.events[id]
	if e == nil || s.owner[id] != b {
		return 0
	}
	b.remove(e)
	delete(s.events, id)
	delete(s.owner, id)
	if id == s.maxID {
		s.recomputeMaxID()
	}
	return 1
}

// eventByID returns a copy of the event, or nil.
func (s *store) eventByID(b *bucket, id int64) *event {
	e := s.events[id]
	if e == nil || s.owner[id] != b {
		return nil
	}
	c := *e
	return &c
}

// timeRange is an optional [start, end] filter, already normalised to UTC µs.
type timeRange struct {
	hasStart, hasEnd bool
	start, end       int64
}

// overlaps is peewee's _where_range: start-24h <= ts, start <= ts+dur,
// ts <= end.
func (r timeRange) overlaps(e *event) bool {
	if r.hasStart && (e.ts < r.start-24*3600*usPerSecond || e.end() < r.start) {
		return false
	}
	if r.hasEnd && e.ts > r.end {
		return false
	}
	return true
}

// check fails like the datetime arithmetic of _where_range would.
func (r timeRange) check() error {
	if r.hasStart {
		if _, err := addUS(r.start, -24*3600*usPerSecond); err != nil {
			return err
		}
	}
	return nil
}

// getEvents is Bucket.get(limit, start, end): newest first, clipped to the
// range. The caller has applied the ms rounding of start and end.
func (s *store) getEvents(b *bucket, limit int64, r timeRange) ([]*event, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if limit == 0 {
		return []*event{}, nil
	}
	out := []*event{}
	for i := len(b.events) - 1; i >= 0; i-- {
		e := b.events[i]
		if !r.overlaps(e) {
			continue
		}
		c := *e
		if r.hasStart && c.ts < r.start {
			end := c.end()
			c.ts = r.start
			c.dur = end - c.ts
		}
		if r.hasEnd && c.end() > r.end {
			c.dur = r.end - c.ts
		}
		out = append(out, &c)
		if limit > 0 && int64(len(out)) >= limit {
			break
		}
	}
	return out, nil
}

// count is get_eventcount: overlapping events, no clipping, no rounding.
func (s *store) count(b *bucket, r timeRange) (int, error) {
	if err := r.check(); err != nil {
		return 0, err
	}
	n := 0
	for _, e := range b.events {
		if r.overlaps(e) {
			n++
		}
	}
	return n, nil
}

// roundRange applies Bucket.get's rounding: start floored to ms, end
// floored to ms plus 1 ms.
func roundRange(r timeRange) (timeRange, error) {
	if r.hasStart {
		r.start = truncMS(r.start)
	}
	if r.hasEnd {
		end, err := addUS(truncMS(r.end), usPerMilli)
		if err != nil {
			return r, err
		}
		r.end = end
	}
	return r, nil
}

// heartbeat is ServerAPI.heartbeat: merge hb into the newest event when the
// data is identical and last.ts <= hb.ts <= last.ts+last.dur+pulsetime
// (duration becomes max(old, hb.ts-last.ts+hb.dur)), else insert it. The
// returned event is a copy. pulsetime is only converted (and may only fail)
// when a merge is considered, as in aw-server.
func (s *store) heartbeat(b *bucket, ts, dur int64, data any, pulsetime float64) (*event, error) {
	if last := b.newest(); last != nil && pyEqual(last.data, data) {
		pt, err := durFromSeconds(pulsetime)
		if err != nil {
			return nil, err
		}
		windowEnd, err := addUS(last.end(), pt)
		if err != nil {
			return nil, err
		}
		if last.ts <= ts && ts <= windowEnd {
			if nd := ts - last.ts + dur; nd > last.dur {
				last.dur = nd
			}
			c := *last
			return &c, nil
		}
	}
	e, err := s.insert(b, ts, dur, data)
	if err != nil {
		return nil, err
	}
	c := *e
	return &c, nil
}
