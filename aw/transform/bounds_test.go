package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// classesSetting is a classes setting of n rules, rule i's regex being
// regex(i).
func classesSetting(n int, regex func(i int) string) []byte {
	rules := make([]string, n)
	for i := range rules {
		r, _ := json.Marshal(regex(i))
		rules[i] = fmt.Sprintf(`{"name":["Work","P%d"],"rule":{"type":"regex","regex":%s}}`, i, r)
	}
	return []byte("[" + strings.Join(rules, ",") + "]")
}

// TestParseClassesBounds: a setting beyond a bound gives no classes and
// ErrClassesTooLarge, before any regex is compiled; what a person writes
// (a thousand rules of 64 bytes, a rule of 4 KiB) passes.
func TestParseClassesBounds(t *testing.T) {
	word := func(i, size int) string { // "p<i>|xxx...", size bytes
		p := fmt.Sprintf("p%d|", i)
		return p + strings.Repeat("x", size-len(p))
	}
	for _, c := range []struct {
		name    string
		setting []byte
		tooBig  bool
	}{
		{"a thousand rules of 64 bytes", classesSetting(MaxClasses, func(i int) string { return word(i, 64) }), false},
		{"a rule of 4 KiB", classesSetting(1, func(i int) string { return word(i, MaxRuleBytes) }), false},
		{"too many rules", classesSetting(MaxClasses+1, func(i int) string { return fmt.Sprint(i) }), true},
		{"a rule too long", classesSetting(1, func(i int) string { return word(i, MaxRuleBytes+1) }), true},
		{"too long in all", classesSetting(MaxRulesBytes/MaxRuleBytes+1, func(i int) string { return word(i, MaxRuleBytes) }), true},
		{"a setting too long", []byte(`[{"name":["` + strings.Repeat("n", MaxClassesBytes) + `"],"rule":{"regex":"x"}}]`), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, err := ParseClasses(c.setting)
			switch {
			case c.tooBig && (!errors.Is(err, ErrClassesTooLarge) || cs != nil):
				t.Errorf("%d classes, %v; want none and ErrClassesTooLarge", len(cs), err)
			case !c.tooBig && (err != nil || len(cs) == 0):
				t.Errorf("%d classes, %v", len(cs), err)
			}
		})
	}
}
