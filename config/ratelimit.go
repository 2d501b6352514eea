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

// ParseRateLimits reads "tool=N/s[:burst],tool=N/m" (spaces around commas
// allowed); "" is none. Tool names are checked by the tool bus.
func ParseRateLimits(s string) (map[string]Rate, error) {
	out := map[string]Rate{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	// Compiled here, not at start-up, and with the name's 64 bytes and the
	// burst's 6 digits checked apart: a counted repetition such as {1,64}
	// compiles into a copy per count (a thousand allocations).
	pattern := regexp.MustCompile(`^([A-Za-z0-9_.-]+)=([0-9]+(?:\.[0-9]+)?)/(s|m)(?::([0-9]+))?$`)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		m := pattern.FindStringSubmatch(part)
		if m == nil || len(m[1]) > 64 || len(m[4]) > 6 {
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
