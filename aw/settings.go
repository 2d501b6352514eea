package aw

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Settings returns what the bridge reads of GET /api/0/settings (no
// trailing slash, as the web UI and aw-client-rust ask). A value of the
// wrong shape is treated as not set; a body that is not a JSON object is a
// Malformed error. A server without the endpoint (older aw-server-rust)
// answers an HTML 404: an HTTPStatus error, which callers treat as "no
// settings".
//
// When the whole object is too large (any local program can store a setting
// of any size), the keys read are asked one by one, so that another
// program's setting cannot cost the person's privacy filters and
// categories; a key that is too large or unreadable then fails it as
// before.
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	s, err := read(ctx, c, "settings", "/api/0/settings", "", decodeSettings)
	if KindOf(err) != TooLarge {
		return s, err
	}
	var obj strings.Builder
	obj.WriteByte('{')
	for _, key := range settingKeys {
		body, kerr := c.get(ctx, "settings", "/api/0/settings/"+key, "")
		switch {
		case KindOf(kerr) == NotFound:
			continue // aw-server-rust: not set
		case kerr != nil:
			return Settings{}, err
		}
		if obj.Len() > 1 {
			obj.WriteByte(',')
		}
		q, _ := json.Marshal(key)
		obj.Write(q)
		obj.WriteByte(':')
		obj.Write(body)
	}
	obj.WriteByte('}')
	if s, kerr := decodeSettings([]byte(obj.String())); kerr == nil {
		return s, nil
	}
	return Settings{}, err
}

// settingKeys are the settings decodeSettings reads.
var settingKeys = [...]string{"startOfDay", "startOfWeek", "always_active_pattern", "classes", "privacy_filters", "category_sets", "active_set_ids"}

// decodeSettings decodes a GET /api/0/settings body: a JSON object of
// settings keyed by name. When a key repeats, the last one counts (as
// Python's json and serde do).
func decodeSettings(body []byte) (Settings, error) {
	var s Settings
	if err := checkJSON(body); err != nil {
		return s, err
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return s, fmt.Errorf("expected a JSON object of settings, got %s", typeName(root))
	}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "startOfDay":
			s.StartOfDay = ""
			if d, ok := parseDayStart(v.Str); ok && v.Type == gjson.String {
				s.StartOfDay = fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
			}
		case "startOfWeek":
			s.StartOfWeek = ""
			if wd, ok := parseWeekday(v.Str); ok && v.Type == gjson.String {
				s.StartOfWeek = wd.String()
			}
		case "always_active_pattern":
			s.AlwaysActivePattern = ""
			if v.Type == gjson.String {
				s.AlwaysActivePattern = v.Str
			}
		case "classes":
			s.Classes = rawArray(v)
		case "privacy_filters":
			s.PrivacyFilters = nil
			if v.Type != gjson.Null {
				s.PrivacyFilters = json.RawMessage(strings.Clone(v.Raw))
			}
		case "category_sets":
			s.CategorySets = rawArray(v)
		case "active_set_ids":
			s.ActiveSetIDs = rawArray(v)
		}
		return true
	})
	return s, nil
}

// rawArray is a copy of v's JSON when it is an array (that never aliases
// the body), else nil.
func rawArray(v gjson.Result) json.RawMessage {
	if !v.IsArray() {
		return nil
	}
	return json.RawMessage(strings.Clone(v.Raw))
}

// parseDayStart reads a start of day as the web UI's time input writes it:
// "H:MM" or "HH:MM", optionally with ":SS" and a fraction, which the web UI
// ignores, as this does. Hours 0-23, minutes 0-59.
func parseDayStart(v string) (time.Duration, bool) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || len(parts[0]) > 2 || len(parts[1]) != 2 {
		return 0, false
	}
	h, okH := digits(parts[0])
	m, okM := digits(parts[1])
	if !okH || !okM || h > 23 || m > 59 {
		return 0, false
	}
	if len(parts) == 3 {
		sec, frac, hasFrac := strings.Cut(parts[2], ".")
		n, ok := digits(sec)
		if len(sec) != 2 || !ok || n > 59 {
			return 0, false
		}
		if _, ok := digits(frac); hasFrac && !ok {
			return 0, false
		}
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, true
}

// digits parses a short run of ASCII digits.
func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// parseWeekday reads an English weekday name, any case.
func parseWeekday(v string) (time.Weekday, bool) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(v, d.String()) {
			return d, true
		}
	}
	return 0, false
}
