package toolbus

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestIDCheck: trace_id, span_id and parent_span_id accept the ids of
// this pattern but "." and ".." (ids name files).
func TestIDCheck(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
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

// TestNewRefusesInvalidResultSchema: tools/list is rendered on first use,
// so a result schema it could not render is refused by New, as when the
// lists were rendered there.
func TestNewRefusesInvalidResultSchema(t *testing.T) {
	run := func(context.Context, *Call) (Result, error) { return Result{}, nil }
	_, err := New(Options{}, &Tool{Name: "bad", ResultSchema: json.RawMessage(`{"type":`), Run: run})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("New with an invalid result schema: %v", err)
	}
}

// TestToolsListFirstUseIsShared: clients listing tools at once, in every
// protocol era, all get the list that era's first caller rendered.
func TestToolsListFirstUseIsShared(t *testing.T) {
	versions := []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	ref, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, v := range versions {
		want[v] = string(ref.ToolsList(v))
	}
	b, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([][]json.RawMessage, 8)
	for i := range got {
		wg.Go(func() {
			for _, v := range versions {
				got[i] = append(got[i], b.ToolsList(v))
			}
		})
	}
	wg.Wait()
	for i := range got {
		for j, v := range versions {
			if string(got[i][j]) != want[v] || !json.Valid(got[i][j]) {
				t.Fatalf("caller %d, version %q: %.200s, want %.200s", i, v, got[i][j], want[v])
			}
			if &got[i][j][0] != &got[0][j][0] {
				t.Errorf("version %q rendered more than once", v)
			}
		}
	}
}
