package awsim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
)

// event is one stored event. ts is truncated to ms; dur may be negative (the
// server stores what it is given).
type event struct {
	id   int64
	ts   int64 // µs, UTC
	dur  int64 // µs
	data json.RawMessage
}

func (e *event) end() int64 { return e.ts + e.dur }

// eventJSON is an event as aw-server serialises it.
type eventJSON struct {
	ID        int64           `json:"id"`
	Timestamp string          `json:"timestamp"`
	Duration  float64         `json:"duration"`
	Data      json.RawMessage `json:"data"`
}

func (e event) json() eventJSON {
	return eventJSON{e.id, isoformat(e.ts), float64(e.dur) / float64(usPerSecond), e.data}
}

// bucket is one bucket: metadata plus its events sorted by (ts, id).
type bucket struct {
	id, typ, client, hostname string
	created                   int64
	events                    []*event
}

// bucketJSON is GET /api/0/buckets/<id>; the list adds last_updated.
type bucketJSON struct {
	ID          string          `json:"id"`
	Created     string          `json:"created"`
	Name        *string         `json:"name"`
	Type        string          `json:"type"`
	Client      string          `json:"client"`
	Hostname    string          `json:"hostname"`
	Data        json.RawMessage `json:"data"`
	LastUpdated string          `json:"last_updated,omitempty"`
}

func (b *bucket) metadata() bucketJSON {
	return bucketJSON{ID: b.id, Created: isoformat(b.created), Type: b.typ, Client: b.client, Hostname: b.hostname, Data: json.RawMessage("{}")}
}

func (b *bucket) newest() *event {
	if n := len(b.events); n > 0 {
		return b.events[n-1]
	}
	return nil
}

// maxEvents bounds the events the simulator keeps across all buckets; past
// it an insert fails (a 500, like a failing database).
const maxEvents = 2_000_000

var errTooMany = errors.New("awsim: event limit reached")

// store is aw-server's storage in memory. Not safe for concurrent use:
// Server guards it with its mutex.
type store struct {
	buckets []*bucket // creation order
	events  int       // across buckets
	lastID  int64
}

func (s *store) bucket(id string) *bucket {
	for _, b := range s.buckets {
		if b.id == id {
			return b
		}
	}
	return nil
}

// createBucket reports false when the bucket exists.
func (s *store) createBucket(b *bucket) bool {
	if s.bucket(b.id) != nil {
		return false
	}
	s.buckets = append(s.buckets, b)
	return true
}

func (s *store) deleteBucket(b *bucket) {
	s.events -= len(b.events)
	s.buckets = slices.DeleteFunc(s.buckets, func(x *bucket) bool { return x == b })
}

// insert adds a new event with the next id.
func (s *store) insert(b *bucket, ts, dur int64, data json.RawMessage) (*event, error) {
	if s.events >= maxEvents {
		return nil, errTooMany
	}
	s.lastID++
	s.events++
	e := &event{id: s.lastID, ts: ts, dur: dur, data: data}
	i, _ := slices.BinarySearchFunc(b.events, e, func(x, e *event) int {
		return cmp.Or(cmp.Compare(x.ts, e.ts), cmp.Compare(x.id, e.id))
	})
	b.events = slices.Insert(b.events, i, e)
	return e, nil
}

// timeRange is an optional [start, end] filter in UTC µs.
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
	return !r.hasEnd || e.ts <= r.end
}

// rounded applies Bucket.get's rounding: start floored to ms, end floored
// to ms plus 1 ms.
func (r timeRange) rounded() timeRange {
	r.start, r.end = truncMS(r.start), truncMS(r.end)+usPerMilli
	return r
}

// get is Bucket.get(limit, start, end): newest first, clipped to the
// (rounded) range.
func (b *bucket) get(limit int, r timeRange) []eventJSON {
	out := []eventJSON{}
	for i := len(b.events) - 1; i >= 0 && limit != 0; i-- {
		c := *b.events[i]
		if !r.overlaps(&c) {
			continue
		}
		if r.hasStart && c.ts < r.start {
			c.ts, c.dur = r.start, c.end()-r.start
		}
		if r.hasEnd && c.end() > r.end {
			c.dur = r.end - c.ts
		}
		out = append(out, c.json())
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out
}

// count is get_eventcount: overlapping events, no clipping, no rounding.
func (b *bucket) count(r timeRange) int {
	n := 0
	for _, e := range b.events {
		if r.overlaps(e) {
			n++
		}
	}
	return n
}

// sameData is Python's == on two JSON values (key order does not matter).
func sameData(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// heartbeat is ServerAPI.heartbeat: merge into the newest event when the
// data is identical and last.ts <= ts <= last.ts+last.dur+pulsetime
// (duration becomes max(old, ts-last.ts+dur)), else insert. It returns a
// copy of the event.
func (s *store) heartbeat(b *bucket, ts, dur int64, data json.RawMessage, pulsetime int64) (event, error) {
	if last := b.newest(); last != nil && sameData(last.data, data) && last.ts <= ts && ts <= last.end()+pulsetime {
		last.dur = max(last.dur, ts-last.ts+dur)
		return *last, nil
	}
	e, err := s.insert(b, ts, dur, data)
	if err != nil {
		return event{}, err
	}
	return *e, nil
}
