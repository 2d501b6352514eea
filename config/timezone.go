package config

import (
	"fmt"
	"time"
)

// parseTimezone accepts an IANA time zone name the system's (or Go's
// embedded) zone database knows, such as "Europe/Berlin" or "UTC"; "" when
// optional means the machine's local zone. "Local" is refused: the setting
// names a zone, and empty already means the local one.
func (sp *spec) parseTimezone(s string) (any, string) {
	if v, problem := sp.parseText(s); problem != "" || s == "" {
		return v, problem
	}
	if s == "Local" {
		return nil, `"Local" is not a zone name (leave it empty for the machine's local zone, or name one such as Europe/Berlin)`
	}
	if _, err := time.LoadLocation(s); err != nil {
		return nil, fmt.Sprintf("%s is not a known IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)", sp.quote(s))
	}
	return s, ""
}
