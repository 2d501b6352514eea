package aw

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
	"github.com/tidwall/gjson"
)

// Decoding limits. Error texts produced here name positions and field names,
// never values: event data (titles, URLs) must not reach logs.
const (
	// maxJSONDepth bounds nesting before gjson sees a body: gjson validates
	// recursively, and a deep enough body overflows the goroutine stack (a
	// fatal error, not a panic).
	maxJSONDepth       = 64
	maxTimestampLen    = 64
	maxDurationSeconds = 1e9 // ~31 years: End never overflows time.Duration
)

// checkJSON rejects a body that is empty, looks like HTML, nests deeper than
// maxJSONDepth or is not valid JSON; it is the only gate in front of gjson.
func checkJSON(body []byte) error {
	switch t := jsonw.TrimSpace(body); {
	case len(t) == 0:
		return errors.New("empty body")
	case t[0] == '<':
		return errors.New("body is HTML, not JSON (is the base URL an ActivityWatch server?)")
	}
	if !jsonw.DepthWithin(body, maxJSONDepth) {
		return fmt.Errorf("JSON nests deeper than %d levels", maxJSONDepth)
	}
	if !gjson.ValidBytes(body) {
		return errors.New("body is not valid JSON")
	}
	return nil
}

// typeName names r's JSON type for an error.
func typeName(r gjson.Result) string {
	switch {
	case r.IsArray():
		return "array"
	case r.IsObject():
		return "object"
	case r.IsBool():
		return "boolean"
	}
	return strings.ToLower(r.Type.String()) // null, number, string
}

// parseTimestamp parses an RFC 3339 timestamp as aw-server writes it
// ("+00:00" or "Z", fraction absent or up to 9 digits) and returns it in UTC.
// The zero instant is rejected.
func parseTimestamp(r gjson.Result) (time.Time, error) {
	if r.Type != gjson.String {
		return time.Time{}, errors.New("is not a string")
	}
	if len(r.Str) > maxTimestampLen {
		return time.Time{}, errors.New("is too long")
	}
	t, err := time.Parse(time.RFC3339Nano, r.Str)
	if err != nil {
		return time.Time{}, errors.New("is not an RFC 3339 timestamp")
	}
	if t.IsZero() {
		return time.Time{}, errors.New("is the zero time")
	}
	return t.UTC(), nil
}

// optTimestamp is parseTimestamp for a field that may be null.
func optTimestamp(r gjson.Result) (time.Time, error) {
	if !r.Exists() || r.Type == gjson.Null {
		return time.Time{}, nil
	}
	return parseTimestamp(r)
}

// optString returns a string field that may be absent or null ("").
func optString(r gjson.Result) (string, error) {
	switch r.Type {
	case gjson.String:
		return r.Str, nil
	case gjson.Null:
		return "", nil
	}
	return "", fmt.Errorf("is a %s, not a string", typeName(r))
}

// decodeEventList decodes a GET .../events body: a JSON array of events,
// each with a timestamp string, a non-negative finite duration in seconds,
// a data object and an optional integer (or null) id. The result is newest
// first. With skip, it leaves out the elements that are not well-formed
// events instead of failing.
func decodeEventList(body []byte, skip bool) ([]Event, error) {
	if skip && !jsonw.DepthWithin(body, maxJSONDepth) {
		// aw-server stores and serves data of any nesting: leave out the
		// events nesting too deep (elements of the array deeper than the
		// bound allows) rather than the whole read.
		body = shallowElements(body, maxJSONDepth-1)
	}
	if err := checkJSON(body); err != nil {
		return nil, err
	}
	root := gjson.Parse(string(body))
	if !root.IsArray() {
		return nil, fmt.Errorf("expected a JSON array of events, got %s", typeName(root))
	}
	events := []Event{}
	var err error
	i := -1
	root.ForEach(func(_, v gjson.Result) bool {
		i++
		ev, evErr := decodeEvent(v)
		switch {
		case evErr == nil:
			events = append(events, ev)
		case !skip:
			err = fmt.Errorf("event %d: %w", i, evErr)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	newestFirst := func(a, b Event) int { return b.Timestamp.Compare(a.Timestamp) }
	if !slices.IsSortedFunc(events, newestFirst) {
		slices.SortStableFunc(events, newestFirst)
	}
	return events, nil
}

// shallowElements returns a JSON array of the elements of the array body
// that nest at most limit deep, in order. It walks body with the
// non-recursive scanner, so any nesting is safe; a body that is not an
// array closed by its last byte is returned as is (checkJSON refuses it).
func shallowElements(body []byte, limit int) []byte {
	arr := jsonw.TrimSpace(body)
	if len(arr) < 2 || arr[0] != '[' || arr[len(arr)-1] != ']' {
		return body
	}
	out := make([]byte, 0, len(arr))
	out = append(out, '[')
	end := 1 // offset after the last element seen
	jsonw.EachElement(arr, func(_ int, v []byte) bool {
		end = cap(arr) - cap(v) + len(v) // v is arr[start:end]
		if jsonw.DepthWithin(v, limit) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		return true
	})
	if jsonw.SkipSpace(arr, end) != len(arr)-1 {
		return body // not a well-closed array: let checkJSON say so
	}
	return append(out, ']')
}

func decodeEvent(v gjson.Result) (Event, error) {
	var ev Event
	if !v.IsObject() {
		return ev, fmt.Errorf("is a %s, not an object", typeName(v))
	}
	var ts, dur, data, id gjson.Result
	v.ForEach(func(k, f gjson.Result) bool {
		switch k.Str {
		case "timestamp":
			ts = f
		case "duration":
			dur = f
		case "data":
			data = f
		case "id":
			id = f
		}
		return true
	})
	if !ts.Exists() {
		return ev, errors.New("missing timestamp")
	}
	t, err := parseTimestamp(ts)
	if err != nil {
		return ev, fmt.Errorf("timestamp %w", err)
	}
	ev.Timestamp = t
	switch {
	case !dur.Exists():
		return ev, errors.New("missing duration")
	case dur.Type != gjson.Number:
		return ev, fmt.Errorf("duration is a %s, not a number", typeName(dur))
	case math.IsNaN(dur.Num) || dur.Num < 0 || dur.Num > maxDurationSeconds:
		return ev, errors.New("duration is out of range")
	}
	ev.Duration = dur.Num
	switch {
	case !data.Exists():
		return ev, errors.New("missing data")
	case !data.IsObject():
		return ev, fmt.Errorf("data is a %s, not an object", typeName(data))
	}
	ev.Data = json.RawMessage(data.Raw) // a copy: never aliases the body
	switch id.Type {
	case gjson.Null: // absent or null: a merged or synthetic event
	case gjson.Number:
		n, err := strconv.ParseInt(id.Raw, 10, 64)
		if err != nil {
			return ev, errors.New("id is not an integer")
		}
		ev.ID = &n
	default:
		return ev, fmt.Errorf("id is a %s, not a number", typeName(id))
	}
	return ev, nil
}

// decodeBuckets decodes a GET /api/0/buckets/ body: an object keyed by bucket
// id.
func decodeBuckets(body []byte) (map[string]Bucket, error) {
	if err := checkJSON(body); err != nil {
		return nil, err
	}
	root := gjson.Parse(string(body))
	if !root.IsObject() {
		return nil, fmt.Errorf("expected a JSON object of buckets, got %s", typeName(root))
	}
	buckets := map[string]Bucket{}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		b, bErr := decodeBucket(k.Str, v)
		if _, dup := buckets[k.Str]; bErr == nil && dup {
			bErr = errors.New("duplicate bucket id")
		}
		if bErr != nil {
			err = fmt.Errorf("bucket %d: %w", len(buckets), bErr)
			return false
		}
		buckets[k.Str] = b
		return true
	})
	if err != nil {
		return nil, err
	}
	return buckets, nil
}

// decodeBucket decodes one bucket object. key is its id in the list; an id
// in the object must agree.
func decodeBucket(key string, v gjson.Result) (Bucket, error) {
	var b Bucket
	if !v.IsObject() {
		return b, fmt.Errorf("is a %s, not an object", typeName(v))
	}
	var err error
	v.ForEach(func(k, f gjson.Result) bool {
		var ferr error
		switch k.Str {
		case "id":
			b.ID, ferr = optString(f)
		case "created":
			b.Created, ferr = optTimestamp(f)
		case "last_updated":
			b.LastUpdated, ferr = optTimestamp(f)
		case "name":
			var s string
			s, ferr = optString(f)
			if ferr == nil && f.Type == gjson.String {
				b.Name = &s
			}
		case "type":
			b.Type, ferr = optString(f)
		case "client":
			b.Client, ferr = optString(f)
		case "hostname":
			b.Hostname, ferr = optString(f)
		case "data":
			switch {
			case f.IsObject():
				b.Data = json.RawMessage(f.Raw)
			case f.Type != gjson.Null:
				ferr = fmt.Errorf("is a %s, not an object", typeName(f))
			}
		}
		if ferr != nil {
			err = fmt.Errorf("%s %w", k.Str, ferr)
			return false
		}
		return true
	})
	if err != nil {
		return b, err
	}
	switch {
	case b.ID != "" && b.ID != key:
		return b, errors.New("id differs from its key")
	case b.Type == "":
		return b, errors.New("missing type")
	case key == "":
		return b, errors.New("empty bucket id")
	}
	b.ID = key
	return b, nil
}

// decodeInfo decodes a GET /api/0/info body.
func decodeInfo(body []byte) (Info, error) {
	var info Info
	if err := checkJSON(body); err != nil {
		return info, err
	}
	root := gjson.Parse(string(body))
	if !root.IsObject() {
		return info, fmt.Errorf("expected a JSON object, got %s", typeName(root))
	}
	hostname, version := root.Get("hostname"), root.Get("version")
	if hostname.Type != gjson.String {
		return info, errors.New("hostname is missing or not a string")
	}
	if version.Type != gjson.String {
		return info, errors.New("version is missing or not a string")
	}
	info.Hostname, info.Version = hostname.Str, version.Str
	switch t := root.Get("testing"); t.Type {
	case gjson.True:
		info.Testing = true
	case gjson.False, gjson.Null:
	default:
		return info, fmt.Errorf("testing is a %s, not a boolean", typeName(t))
	}
	d, err := optString(root.Get("device_id"))
	if err != nil {
		return info, fmt.Errorf("device_id %w", err)
	}
	info.DeviceID = d
	return info, nil
}

// errorBody reads a non-2xx body: the sanitized "message" string (or the
// reason of aw-server-rust's framework), if any, and whether it is an
// ActivityWatch API error (JSON null, as for a missing event, or an object
// with a string "message"; aw-server and aw-server-rust both answer an
// unknown bucket with {"message": ...}).
func errorBody(body []byte) (msg string, apiError bool) {
	if checkJSON(body) != nil {
		return "", false
	}
	root := gjson.ParseBytes(body)
	if root.Type == gjson.Null {
		return "", true
	}
	if !root.IsObject() {
		return "", false
	}
	m := root.Get("message")
	if m.Type != gjson.String {
		// aw-server-rust's web framework (Rocket) answers what no handler
		// did (a panic: 500, an unknown route: 404) with {"error": {"code",
		// "reason", "description"}}: its reason, and not an API error.
		if r := root.Get("error.reason"); r.Type == gjson.String {
			return text.Cut(text.Line(r.Str), maxMessageBytes), false
		}
		return "", false
	}
	return text.Cut(text.Line(m.Str), maxMessageBytes), true
}
