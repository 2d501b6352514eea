package config

import (
	"fmt"
	"regexp"
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
