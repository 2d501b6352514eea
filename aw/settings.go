package aw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Settings keys the bridge reads, as the web UI names them.
const (
	settingStartOfDay   = "startOfDay"
	settingStartOfWeek  = "startOfWeek"
	settingAlwaysActive = "always_active_pattern"
	settingClasses      = "classes"
)

// maxSettingKeyLen bounds a settings key the client puts in a path
// (aw-server-rust refuses 128 bytes and more).
const maxSettingKeyLen = 127

// Settings returns what the bridge reads of GET /api/0/settings (no
// trailing slash, as the web UI and aw-client-rust ask): the day and week
// starts, the always-active pattern and the raw category rules. A value of
// the wrong shape is listed in Settings.Ignored and treated as not set; a
// body that is not a JSON object is a Malformed error. A server without
// the endpoint (older aw-server-rust) answers an HTML 404: an HTTPStatus
// error, which callers treat as "no settings".
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	body, err := c.get(ctx, "settings", "/api/0/settings", "")
	if err != nil {
		return Settings{}, err
	}
	s, err := decodeSettings(body)
	if err != nil {
		return Settings{}, malformed("settings", err)
	}
	return s, nil
}

// Setting returns one setting's raw JSON value, GET /api/0/settings/<key>,
// a copy that never aliases the body; nil when it is not set (the server
// answers null).
func (c *Client) Setting(ctx context.Context, key string) (json.RawMessage, error) {
	if err := validateSettingKey(key); err != nil {
		return nil, &Error{Op: "setting", Kind: InvalidArgument, Err: err}
	}
	body, err := c.get(ctx, "setting", "/api/0/settings/"+url.PathEscape(key), "")
	if err != nil {
		return nil, err
	}
	if err := checkJSON(body); err != nil {
		return nil, malformed("setting", err)
	}
	v := gjson.ParseBytes(body)
	if v.Type == gjson.Null {
		return nil, nil
	}
	return json.RawMessage(strings.Clone(v.Raw)), nil
}

// validateSettingKey rejects keys the client will not put in a path.
func validateSettingKey(key string) error {
	switch {
	case key == "":
		return errors.New("empty settings key")
	case len(key) > maxSettingKeyLen:
		return fmt.Errorf("settings key longer than %d bytes", maxSettingKeyLen)
	case !utf8.ValidString(key):
		return errors.New("settings key is not valid UTF-8")
	case key == "." || key == "..":
		return errors.New("settings key is a dot segment")
	case strings.ContainsRune(key, '/'):
		return errors.New("settings key contains '/'")
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return errors.New("settings key contains control characters")
		}
	}
	return nil
}

// decodeSettings decodes a GET /api/0/settings body: a JSON object of
// settings keyed by name, any JSON value each. Only the settings of
// Settings are read; when a key repeats, the last one counts (as Python's
// json and serde do).
func decodeSettings(body []byte) (Settings, error) {
	var s Settings
	if err := checkJSON(body); err != nil {
		return s, err
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return s, errMalformed("expected a JSON object of settings, got %s", typeName(root))
	}
	var start, week, always, classes gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case settingStartOfDay:
			start = v
		case settingStartOfWeek:
			week = v
		case settingAlwaysActive:
			always = v
		case settingClasses:
			classes = v
		}
		return true
	})
	ignore := func(key string) { s.Ignored = append(s.Ignored, key) }
	if start.Exists() && start.Type != gjson.Null {
		if d, ok := parseDayStart(start.Str); ok && start.Type == gjson.String {
			s.StartOfDay = formatDayStart(d)
		} else {
			ignore(settingStartOfDay)
		}
	}
	if week.Exists() && week.Type != gjson.Null {
		if wd, ok := parseWeekday(week.Str); ok && week.Type == gjson.String {
			s.StartOfWeek = wd.String()
		} else {
			ignore(settingStartOfWeek)
		}
	}
	switch {
	case !always.Exists() || always.Type == gjson.Null:
	case always.Type == gjson.String:
		s.AlwaysActivePattern = always.Str
	default:
		ignore(settingAlwaysActive)
	}
	switch {
	case !classes.Exists() || classes.Type == gjson.Null:
	case classes.IsArray():
		s.Classes = json.RawMessage(strings.Clone(classes.Raw))
	default:
		ignore(settingClasses)
	}
	slices.Sort(s.Ignored)
	return s, nil
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

// formatDayStart writes an offset from midnight as "HH:MM".
func formatDayStart(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
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
