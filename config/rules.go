package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rule is one privacy rewrite: what Pattern matches becomes Replacement
// ($1 and ${name} refer to groups, as in regexp.ReplaceAllString).
type Rule struct {
	Pattern     *regexp.Regexp
	Replacement string
}

// maxRules bounds a rule list.
const maxRules = 64

// maxReplacement bounds a rule's replacement, in bytes: a replacement is
// written once per match, so it bounds how much one rule can grow a title.
const maxReplacement = 256

// ParseRules reads one rule per line (or separated by ";;"),
// "PATTERN => REPLACEMENT"; blank lines and lines starting with # are
// skipped. "" is no rules.
func ParseRules(s string) ([]Rule, error) {
	var out []Rule
	for _, line := range splitList(s, "\n") {
		pat, repl, ok := strings.Cut(line, "=>")
		if !ok {
			return nil, fmt.Errorf("rule %d: expected PATTERN => REPLACEMENT", len(out)+1)
		}
		re, err := regexp.Compile(strings.TrimSpace(pat))
		if err != nil {
			return nil, fmt.Errorf("rule %d: not a regular expression (%s)", len(out)+1, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		repl = strings.TrimSpace(repl)
		if len(repl) > maxReplacement {
			return nil, fmt.Errorf("rule %d: the replacement is longer than %d bytes", len(out)+1, maxReplacement)
		}
		out = append(out, Rule{Pattern: re, Replacement: repl})
		if len(out) > maxRules {
			return nil, fmt.Errorf("more than %d rules", maxRules)
		}
	}
	return out, nil
}

// ExcludedApps splits privacy.exclude_apps.
func (p Privacy) ExcludedApps() []string { return splitList(p.ExcludeApps, ",") }

// splitList splits a list setting's text into its items, trimmed, empty
// ones dropped: comma lists at commas, rules at line breaks and ";;"
// (without # comments).
func splitList(s, sep string) []string {
	if sep == "\n" {
		s = strings.ReplaceAll(s, ";;", "\n")
	}
	var out []string
	for _, it := range strings.Split(s, sep) {
		if it = strings.TrimSpace(it); it != "" && (sep != "\n" || !strings.HasPrefix(it, "#")) {
			out = append(out, it)
		}
	}
	return out
}

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
