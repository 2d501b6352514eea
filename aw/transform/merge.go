package transform

import "regexp"

// MergeByKey is aw_transform.merge_events_by_keys: one event per group,
// in the order groups first appear, starting when the group's first event
// starts and lasting the sum of its events' durations, without an ID.
// key(i) is the group of evs[i] (aw-core: the tuple of the event's values
// under the merge keys, leaving out keys it lacks); data builds a group's
// data from its first event's (aw-core: those values only). evs is not
// changed.
func MergeByKey[D any, K comparable](evs []Event[D], key func(i int) K, data func(first D) D) []Event[D] {
	var out []Event[D]
	groups := make(map[K]int)
	for i, e := range evs {
		k := key(i)
		if g, ok := groups[k]; ok {
			out[g].Duration += e.Duration
			continue
		}
		groups[k] = len(out)
		out = append(out, Event[D]{Start: e.Start, Duration: e.Duration, Data: data(e.Data)})
	}
	return out
}

// Chunk is one result of ChunkByKey: the run evs[From:To] as one event
// from the run's first start lasting the sum of its durations.
type Chunk struct {
	From, To        int
	Start, Duration int64
}

// ChunkByKey is aw_transform.chunk_events_by_key: runs of neighbouring
// events whose values under the key are equal (same(i, j) compares evs[i]
// and evs[j]) become chunks. It stops at the first event without the key
// (has(i) false). As in aw-core, the gap tested against pulsetime is
// measured from the end of the last event of the whole list, so in
// practice runs join on equal values alone.
func ChunkByKey[D any](evs []Event[D], has func(i int) bool, same func(i, j int) bool, pulsetime int64) []Chunk {
	var out []Chunk
	for i, e := range evs {
		if !has(i) {
			break
		}
		if n := len(out); n > 0 {
			c := &out[n-1]
			if same(c.From, i) && e.Start-evs[len(evs)-1].End() < pulsetime {
				c.To = i + 1
				c.Duration += e.Duration
				continue
			}
		}
		out = append(out, Chunk{From: i, To: i + 1, Start: e.Start, Duration: e.Duration})
	}
	return out
}

// FilterRegex is aw_transform.filter_keyvals_regex: the events whose data
// holds a string under key in which re finds a match. Events without the
// key, or with something other than a string under it (aw-core fails on
// those), are left out. evs is not changed.
func FilterRegex[D Strings](evs []Event[D], key string, re *regexp.Regexp) []Event[D] {
	var out []Event[D]
	for _, e := range evs {
		if s, ok := e.Data.Str(key); ok && re.MatchString(s) {
			out = append(out, e)
		}
	}
	return out
}
