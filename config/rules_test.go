package config

import (
	"strings"
	"testing"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules("# comment\nAcme (Corp|Inc) => [client]\n\n;; secret-\\d+ => [redacted]")
	if err != nil || len(rules) != 2 {
		t.Fatalf("%v %v", rules, err)
	}
	if got := rules[0].Pattern.ReplaceAllString("Meeting with Acme Inc", rules[0].Replacement); got != "Meeting with [client]" {
		t.Fatalf("rule 1: %q", got)
	}
	for _, bad := range []string{"no arrow", "([ => x", strings.Repeat("a => b\n", 65)} {
		if _, err := ParseRules(bad); err == nil {
			t.Fatalf("%.20q accepted", bad)
		}
	}
	env := Env{Lookup: func(k string) (string, bool) {
		switch k {
		case "AWBRIDGE_TITLE_RULES":
			return "([ => x", true
		case "HOME":
			return "/home/t", true
		}
		return "", false
	}}
	if _, err := Load(env, nil); err == nil || !strings.Contains(err.Error(), "privacy.title_rules from AWBRIDGE_TITLE_RULES: rule 1: not a regular expression") {
		t.Fatalf("bad rule: %v", err)
	}
}

func TestRuleReplacementIsBounded(t *testing.T) {
	if _, err := ParseRules("x => " + strings.Repeat("y", maxReplacement)); err != nil {
		t.Fatalf("a replacement at the bound: %v", err)
	}
	_, err := ParseRules("a => b\nx => " + strings.Repeat("y", maxReplacement+1))
	if err == nil || err.Error() != "rule 2: the replacement is longer than 256 bytes" {
		t.Fatalf("a replacement over the bound: %v", err)
	}
}
