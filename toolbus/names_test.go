package toolbus

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestIDCheckAgreesWithItsSchemaPattern: the pattern clients see in the
// schema of trace_id, span_id and parent_span_id, and the check the bus
// applies, accept the same ids (apart from "." and "..", which the check
// also refuses because ids name files).
func TestIDCheckAgreesWithItsSchemaPattern(t *testing.T) {
	re := regexp.MustCompile(idPattern)
	ids := []string{"", "a", "A-z_0.9", ".", "..", "...", "a/b", `a\b`, "a b", "é", "a\x00", "a:b", "tr-1",
		strings.Repeat("x", 127), strings.Repeat("x", 128), strings.Repeat("x", 129)}
	for c := 0; c < 256; c++ {
		ids = append(ids, "a"+string(rune(c)), string([]byte{byte(c)}))
	}
	for _, id := range ids {
		want := re.MatchString(id) && id != "." && id != ".."
		if got := checkID(id) == ""; got != want {
			t.Errorf("checkID(%q) accepts: %v, the schema pattern says %v", id, got, want)
		}
	}
}

// TestToolNamesAreAPISafe: New refuses a tool whose name is not 1-64
// letters, digits, '_' or '-'.
func TestToolNamesAreAPISafe(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"nowframe_build", true}, {"a-b_C9", true}, {strings.Repeat("n", 64), true},
		{"", false}, {strings.Repeat("n", 65), false}, {"a.b", false}, {"a b", false}, {"a/b", false}, {"é", false},
	} {
		_, err := New(Options{}, &Tool{Name: tc.name, Run: func(context.Context, *Call) (Result, error) { return Result{}, nil }})
		if (err == nil) != tc.ok {
			t.Errorf("New with tool %q: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
