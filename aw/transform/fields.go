package transform

import (
	"math"
	"slices"

	"github.com/awbridge/awbridge/aw"
	"github.com/tidwall/gjson"
)

// Field is one key of an event's data: a string value decoded, or (JSON)
// any other value's JSON text ("true", "7", "null", "[1]").
type Field struct {
	Key, Value string
	JSON       bool
}

// Fields is an event's data as the bridge holds it: its keys in the
// server's order, string values decoded, other values kept as their JSON
// text. A Fields is immutable: the transforms share it between copies of
// an event and With returns a new one. Equal compares JSON texts of
// non-string values as text, so 1 and 1.0 differ here while Python finds
// them equal. CanonicalContext also records in it the category it gives a
// window event (Class).
type Fields struct {
	kv    []Field
	class int32 // index into the Classes used + 1; 0: none
}

// Len is the number of keys.
func (f Fields) Len() int { return len(f.kv) }

// Get returns the field under key.
func (f Fields) Get(key string) (Field, bool) {
	for _, x := range f.kv {
		if x.Key == key {
			return x, true
		}
	}
	return Field{}, false
}

// Str returns the value under key when it is a string.
func (f Fields) Str(key string) (string, bool) {
	x, ok := f.Get(key)
	return x.Value, ok && !x.JSON
}

// Bool returns the value under key when it is true or false.
func (f Fields) Bool(key string) (value, ok bool) {
	x, found := f.Get(key)
	if !found || !x.JSON || (x.Value != "true" && x.Value != "false") {
		return false, false
	}
	return x.Value == "true", true
}

// anyString reports whether match accepts one of the string values, in
// order.
func (f Fields) anyString(match func(string) bool) bool {
	return slices.ContainsFunc(f.kv, func(x Field) bool { return !x.JSON && match(x.Value) })
}

// In reports whether the value under key is a string equal to one of vals
// (filter_keyvals with string values).
func (f Fields) In(key string, vals ...string) bool {
	s, ok := f.Str(key)
	return ok && slices.Contains(vals, s)
}

// Equal is Python's == of two data dicts: the same keys with equal values,
// in any order, and the same category.
func (f Fields) Equal(o Fields) bool {
	if f.class != o.class || len(f.kv) != len(o.kv) {
		return false
	}
	if len(f.kv) == 0 || &f.kv[0] == &o.kv[0] {
		return true
	}
	for i, x := range f.kv {
		if o.kv[i] == x {
			continue // the usual case: same order
		}
		y, ok := o.Get(x.Key)
		if !ok || y != x {
			return false
		}
	}
	return true
}

// With returns a copy with key set to the string value (in its place when
// f has the key, else last).
func (f Fields) With(key, value string) Fields { return f.with(Field{Key: key, Value: value}) }

// with is With of each of xs (distinct keys) in one copy; f itself when
// xs is empty.
func (f Fields) with(xs ...Field) Fields {
	if len(xs) == 0 {
		return f
	}
	kv := make([]Field, 0, len(f.kv)+len(xs))
	for _, y := range f.kv {
		if j := slices.IndexFunc(xs, func(x Field) bool { return x.Key == y.Key }); j >= 0 {
			y = xs[j]
		}
		kv = append(kv, y)
	}
	for _, x := range xs {
		if _, ok := f.Get(x.Key); !ok {
			kv = append(kv, x)
		}
	}
	return Fields{kv: kv, class: f.class}
}

// Class is the category CanonicalContext gave the event, as an index into the
// Classes it used; -1 when it is Uncategorized or was not categorized.
func (f Fields) Class() int { return int(f.class) - 1 }

// WithClass returns a copy in category i (-1: Uncategorized).
func (f Fields) WithClass(i int) Fields {
	f.class = int32(max(i, -1) + 1)
	return f
}

// Micros converts seconds to microseconds as Python's timedelta does: whole
// seconds exactly, the fraction rounded half to even.
func Micros(seconds float64) int64 {
	whole, frac := math.Modf(seconds)
	return int64(whole)*Second + int64(math.RoundToEven(frac*1e6))
}

// Decoder turns aw.Events into Events: events whose data is byte for byte
// the same (a watcher repeats one app and title for hours) share one
// Fields, decoded once. It keeps every distinct data it has seen: use one
// per batch of events. The zero value is ready; not safe for concurrent use.
type Decoder struct {
	seen map[string]Fields
}

// Event converts one event. Data that is not a JSON object becomes empty
// Fields.
func (d *Decoder) Event(e aw.Event) Event {
	out := Event{Start: e.Timestamp.UnixMicro(), Duration: Micros(e.Duration)}
	if e.ID != nil {
		out.ID = *e.ID
	}
	f, ok := d.seen[string(e.Data)]
	if !ok {
		raw := string(e.Data) // the decoded strings are pieces of it
		f = parseFields(raw)
		if d.seen == nil {
			d.seen = make(map[string]Fields)
		}
		d.seen[raw] = f
	}
	out.Data = f
	return out
}

func parseFields(raw string) Fields {
	r := gjson.Parse(raw)
	if !r.IsObject() {
		return Fields{}
	}
	kv := make([]Field, 0, 6)
	r.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String {
			kv = append(kv, Field{Key: k.Str, Value: v.Str})
		} else {
			kv = append(kv, Field{Key: k.Str, Value: v.Raw, JSON: true})
		}
		return true
	})
	return Fields{kv: slices.Clip(kv)}
}
