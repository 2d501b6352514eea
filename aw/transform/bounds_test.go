package transform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
		{"a short rule of a large program", classesSetting(1, func(int) string { return strings.Repeat(`[^\x01]{0,1000}`, 5) }), true},
		{"large programs in all", classesSetting(17, func(int) string { return strings.Repeat(`[^\x01]{0,1000}`, 4) }), true},
		{"programs just within", classesSetting(16, func(int) string { return strings.Repeat(`[^\x01]{0,1000}`, 4) }), false},
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

// stopAfter is a context whose Err is nil for its first n calls and
// Canceled after: a caller cancelled while the work is under way.
type stopAfter struct {
	context.Context
	n, calls atomic.Int64
}

func (c *stopAfter) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

func (c *stopAfter) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestCanonicalStopsCategorizing: a call cancelled while thousands of
// titles are categorized by a thousand rules stops at the next title, with
// the context's error and no result, instead of finishing the period.
func TestCanonicalStopsCategorizing(t *testing.T) {
	cs, err := ParseClasses(classesSetting(MaxClasses, func(i int) string { return fmt.Sprintf("(proj|task)-%d\\b", i) }))
	if err != nil {
		t.Fatal(err)
	}
	const titles = 3000
	var in Input
	for i := range titles {
		in.Window = append(in.Window, Event{ID: int64(i + 1), Start: int64(i) * Second, Duration: Second,
			Data: strs("app", "Code", "title", fmt.Sprintf("file%d.go - task-%d - Code", i, i%2000))})
	}
	in.AFK = []Event{{ID: 1, Start: 0, Duration: titles * Second, Data: strs("status", "not-afk")}}
	ctx := &stopAfter{Context: context.Background()}
	ctx.n.Store(10)
	res, err := CanonicalContext(ctx, in, Options{Classes: cs})
	if !errors.Is(err, context.Canceled) || res.Events != nil {
		t.Fatalf("%d events, %v; want none and Canceled", len(res.Events), err)
	}
	if n := ctx.calls.Load(); n != 11 {
		t.Errorf("the context was checked %d times; want 11: once per title until it ended", n)
	}
	// Not cancelled, the same call categorizes every title (a hundred of
	// them here: all 3,000 take seconds).
	ctx.n.Store(1 << 40)
	in.Window = in.Window[:100]
	res, err = CanonicalContext(ctx, in, Options{Classes: cs})
	if err != nil || len(res.Events) != 100 {
		t.Fatalf("%d events, %v", len(res.Events), err)
	}
}
