// Package aw is the ActivityWatch REST client: bounded, validated reads of
// /api/0/info, /api/0/buckets/, bucket events and /api/0/settings, built on
// go-retryablehttp and gjson. It imports nothing of awbridge but internal
// helpers (text, jsonw).
package aw

import (
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"
)

// Bucket types the bridge reads, as aw-server names them.
const (
	TypeWindow = "currentwindow"
	TypeAFK    = "afkstatus"
	TypeWeb    = "web.tab.current"
)

// Info is /api/0/info.
type Info struct {
	Hostname string `json:"hostname"`
	Version  string `json:"version"`
	Testing  bool   `json:"testing"`
	DeviceID string `json:"device_id,omitempty"`
}

// Bucket is one entry of /api/0/buckets/. LastUpdated is the end of its
// newest event; it is zero when the server did not send it (per-bucket
// metadata has none).
type Bucket struct {
	ID          string          `json:"id"`
	Created     time.Time       `json:"created"`
	Name        *string         `json:"name"`
	Type        string          `json:"type"`
	Client      string          `json:"client"`
	Hostname    string          `json:"hostname"`
	Data        json.RawMessage `json:"data,omitempty"`
	LastUpdated time.Time       `json:"last_updated,omitzero"`
}

// Event is one ActivityWatch event. Duration is in seconds, as the server
// sends it (a float). Data is the event's raw, validated JSON object; read
// fields with Str and Bool.
type Event struct {
	ID        *int64          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	Duration  float64         `json:"duration"`
	Data      json.RawMessage `json:"data"`
}

// End is when the event ends: timestamp + duration.
func (e Event) End() time.Time {
	return e.Timestamp.Add(time.Duration(e.Duration * float64(time.Second)))
}

// Str returns the string field key of the event's data, or "" when it is
// missing or not a string.
func (e Event) Str(key string) string {
	if r := e.field(key); r.Type == gjson.String {
		return r.Str
	}
	return ""
}

// Bool returns the boolean field key of the event's data and whether it was
// present as a boolean.
func (e Event) Bool(key string) (value, ok bool) {
	r := e.field(key)
	return r.Type == gjson.True, r.IsBool()
}

// Int returns the numeric field key of the event's data and whether it was
// present as a number.
func (e Event) Int(key string) (int64, bool) {
	r := e.field(key)
	return r.Int(), r.Type == gjson.Number
}

func (e Event) field(key string) gjson.Result { return gjson.GetBytes(e.Data, gjson.Escape(key)) }

// Settings is what the bridge reads of the web UI's own settings, which it
// stores on the server (GET /api/0/settings). A setting the web UI never
// saved, or one of the wrong shape, is "" or nil here, and the web UI's
// built-in default applies (startOfDay "04:00", startOfWeek "Monday", its
// default categories).
type Settings struct {
	// StartOfDay is "startOfDay", normalized to "HH:MM".
	StartOfDay string `json:"startOfDay,omitempty"`
	// StartOfWeek is "startOfWeek", an English weekday name ("Monday").
	StartOfWeek string `json:"startOfWeek,omitempty"`
	// AlwaysActivePattern is "always_active_pattern": a regular expression
	// of apps and titles counted as active even while AFK. Not compiled.
	AlwaysActivePattern string `json:"always_active_pattern,omitempty"`
	// Classes is the raw JSON array "classes" (the categories), a copy
	// that never aliases the body. Not parsed.
	Classes json.RawMessage `json:"classes,omitempty"`
	// PrivacyFilters is the raw JSON "privacy_filters" (the person's
	// privacy rules; any value but null, so a broken one can be told), a
	// copy. Not parsed: see transform.ParsePrivacyFilters.
	PrivacyFilters json.RawMessage `json:"privacy_filters,omitempty"`
	// CategorySets is "category_sets" (the web UI's named sets of
	// categories) and ActiveSetIDs "active_set_ids" (those in use): raw
	// JSON arrays, copies, not parsed.
	CategorySets json.RawMessage `json:"category_sets,omitempty"`
	ActiveSetIDs json.RawMessage `json:"active_set_ids,omitempty"`
}

// DayStart returns StartOfDay as an offset from midnight, and whether it is set.
func (s Settings) DayStart() (time.Duration, bool) { return parseDayStart(s.StartOfDay) }

// WeekStart returns StartOfWeek as a weekday, and whether it is set.
func (s Settings) WeekStart() (time.Weekday, bool) { return parseWeekday(s.StartOfWeek) }
