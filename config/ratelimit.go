package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rate is one tool's token bucket: PerSecond calls a second on average,
// Burst at once (0: the rate rounded up, at least 1).
type Rate struct {
	PerSecond float64
	Burst     int
}

var ratePattern = regexp.MustCompile(`^([A-Za-z0-9_.-]{1,64})=([0-9]+(?:\.[0-9]+)?)/(s|m)(?::([0-9]{1,6}))?$`)

// ParseRateLimits reads "tool=N/s[:burst],tool=N/m" (spaces around commas
// allowed); "" is none. Tool names are checked by the tool bus.
func ParseRateLimits(s string) (map[string]Rate, error) {
	out := map[string]Rate{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		m := ratePattern.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("%s: expected tool=N/s or tool=N/m with an optional :burst (e.g. nowframe_build=5/s:10)", quoteShort(part))
		}
		n, err := strconv.ParseFloat(m[2], 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("the rate of %s must be more than 0", m[1])
		}
		if m[3] == "m" {
			n /= 60
		}
		r := Rate{PerSecond: n}
		if m[4] != "" {
			r.Burst, _ = strconv.Atoi(m[4])
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("%s is limited twice", m[1])
		}
		out[m[1]] = r
	}
	return out, nil
}
