package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// TestReviewOneBadOldDayShutsOutToday: ActivityWatch answers every read
// but those of one old day (500, as aw-server does when a read raises).
// The summary of that day fails with AwEventsUnreadable, retryable,
// retry_after_ms 1000, hint "a period without that day may work"; an
// assistant that retries it twice (as told) has made three failed reads
// in a row through the history breaker: no other read happens in
// between, since nothing else of the period is read. The history circuit
// opens, and for its 10 s cool-down every activity tool fails with
// CircuitOpen ("the source failed repeatedly") — "today", whose reads
// ActivityWatch answers fine, included. ServiceOptions.Source promises
// "one bucket that keeps failing as the others answer does not [open
// the circuit] (the server is up)". Expected: after the three failures of
// that day, "today" answers (e.g. an HTTP status answer proves the server
// up: count it as an answer, like Misconfigured, not toward the breaker;
// or let a half-open probe / other days through).
func TestReviewOneBadOldDayShutsOutToday(t *testing.T) {
	hs := newHistoryServer(t)
	e := hs.engine(t, 10*time.Second)
	ctx := context.Background()
	if out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)}); out.Err != nil {
		t.Fatalf("today before any failure: %+v", out.Err)
	}
	hs.failOld(fail500)
	day := hs.cutoff.Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(4 * time.Hour)
	old, _ := json.Marshal(map[string]string{"start": day.Format(time.RFC3339), "end": day.Add(24 * time.Hour).Format(time.RFC3339)})
	for i := range 3 {
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: old})
		if out.Err == nil || out.Err.Code != toolbus.CodeAwEventsUnreadable {
			t.Fatalf("old day, call %d: %+v, want AwEventsUnreadable", i, out.Err)
		}
		t.Logf("old day, call %d: %s %q retry_after_ms %v, hint %q, details %v", i, out.Err.Code, out.Err.Message,
			*out.Err.RetryAfterMs, out.Err.Hint, out.Err.Details)
	}
	out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
	if out.Err != nil {
		t.Errorf("today, right after three failed reads of one old day (ActivityWatch answers today's reads): %s %q hint %q",
			out.Err.Code, out.Err.Message, out.Err.Hint)
	}
}

// TestReviewBrokenBrowserBucketShutsOutTheActivityTools: one browser
// bucket whose reads fail (aw-server answers 500 when a read of it
// raises; the other buckets read fine) is, by design, only marked
// unreadable: the answer comes without its tabs. But the closed days of
// the window and AFK buckets are cached after the first call, so the next
// calls over the same days read nothing but that bucket: three failures
// in a row through the history breaker. An assistant asking the usual
// questions about yesterday (summary, timeline, domains, switches), each
// answered with the note "a browser bucket could not be read", has
// opened the history circuit; the next question, today's summary, fails
// with CircuitOpen for 10 s although ActivityWatch answers every read it
// needs, and again after every few questions. (Before this change the
// same reads opened the live frame's circuit, which was worse.)
// Expected: a bucket failing while ActivityWatch answers never stops the
// activity tools (as ServiceOptions.Source promises: "one bucket that
// keeps failing as the others answer does not" open the circuit), e.g.
// an HTTP status answer from a reachable server is not counted toward
// the breaker, or web-bucket reads do not go through it.
func TestReviewBrokenBrowserBucketShutsOutTheActivityTools(t *testing.T) {
	hs := newHistoryServer(t)
	target, err := url.Parse(hs.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") && strings.Contains(r.URL.Path, "aw-watcher-web-chrome") {
			fail500(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	hs.url = front.URL
	e := hs.engine(t, 10*time.Second)
	ctx := context.Background()
	for i, q := range []struct{ name, args string }{
		{"activity_summary", `{"period":"yesterday"}`},
		{"activity_timeline", `{"period":"yesterday"}`},
		{"activity_summary", `{"period":"yesterday","group_by":"domain"}`},
		{"nowframe_history", `{"period":"yesterday"}`},
	} {
		out := e.Call(ctx, toolbus.Request{Name: q.name, Args: json.RawMessage(q.args)})
		if out.Err != nil {
			t.Fatalf("question %d (%s %s), one browser bucket failing: %s %q", i, q.name, q.args, out.Err.Code, out.Err.Message)
		}
		if !strings.Contains(string(out.Body), "a browser bucket could not be read") {
			t.Errorf("question %d: no note of the unreadable browser bucket: %.300s", i, out.Body)
		}
	}
	out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
	if out.Err != nil {
		t.Errorf("today, after four answered questions about yesterday with one browser bucket unreadable: %s %q (history circuit %s)",
			out.Err.Code, out.Err.Message, e.histSrc.Circuit())
	}
}

// TestReviewRetryAfterIgnoresOpenHistoryCircuit: an AwEventsUnreadable
// answer always says retry_after_ms 1000 ("asking again reads only the
// rest"), even when the failed read was the one that opened the history
// circuit, which its own details report ("circuit": "open"): an
// assistant that waits the 1 s it was told gets CircuitOpen with
// retry_after_ms ~10000 instead. Here an old day stalls (history_timeout
// 200 ms) and the assistant asks about it three times. Expected: when the
// history circuit is open, retry_after_ms covers the cool-down left (the
// upstream.Error's RetryAfter, or Source's open-until), and a retry after
// that long is not refused by the circuit.
func TestReviewRetryAfterIgnoresOpenHistoryCircuit(t *testing.T) {
	hs := newHistoryServer(t)
	e := hs.engine(t, 200*time.Millisecond)
	ctx := context.Background()
	hs.failOld(stall)
	day := hs.cutoff.Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(4 * time.Hour)
	old, _ := json.Marshal(map[string]string{"start": day.Format(time.RFC3339), "end": day.Add(24 * time.Hour).Format(time.RFC3339)})
	var last toolbus.Response
	for i := range 3 { // one call may count a browser bucket's stalled read too
		last = e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: old})
		if last.Err == nil || last.Err.Code != toolbus.CodeAwEventsUnreadable {
			t.Fatalf("call %d: %+v, want AwEventsUnreadable", i, last.Err)
		}
		if last.Err.Details["circuit"] == "open" {
			break
		}
	}
	te := last.Err
	if te.Details["circuit"] != "open" {
		t.Skipf("the history circuit is %v after three stalled reads: nothing to check", te.Details["circuit"])
	}
	after := time.Duration(*te.RetryAfterMs) * time.Millisecond
	hs.now = hs.now.Add(after) // the assistant waits as told (the engine's clock)
	again := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
	if again.Err != nil && again.Err.Code == toolbus.CodeCircuitOpen {
		t.Errorf("told retry_after_ms %d with details.circuit %q; a call %s later is refused: %s %q retry_after_ms %d",
			*te.RetryAfterMs, te.Details["circuit"], after, again.Err.Code, again.Err.Message, *again.Err.RetryAfterMs)
	}
}

// TestReviewCompactHistoryDropsTheNewestSwitches: nowframe_history ("what
// was I just doing") answers the newest `limit` switches (default 50),
// oldest first. In response_mode "compact" the bus caps the array at
// toolbus.CompactLimit by keeping its first 10 items, so the answer holds
// the 10 oldest of those 50 and {"_dropped": 40}: the 40 most recent
// switches, the ones the question is about, are gone, and there is no
// cursor to get them. This change fixed the same for activity_timeline
// (compact pages of 10 with next_cursor) but not here. Expected: compact
// keeps the newest switches (e.g. runHistory sets Limit to at most
// CompactLimit in compact mode, as runTimeline does), so its last switch
// is the normal answer's last.
func TestReviewCompactHistoryDropsTheNewestSwitches(t *testing.T) {
	hs := newHistoryServer(t)
	hs.now = hs.h.End.Add(-2 * time.Hour) // within a session: many switches
	e := hs.engine(t, 10*time.Second)
	type answer struct {
		Result struct {
			Switches []map[string]any `json:"switches"`
		} `json:"result"`
	}
	get := func(args string) answer {
		t.Helper()
		out := e.Call(context.Background(), toolbus.Request{Name: "nowframe_history", Args: json.RawMessage(args)})
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		var a answer
		if err := json.Unmarshal(out.Body, &a); err != nil {
			t.Fatalf("%v: %.300s", err, out.Body)
		}
		return a
	}
	normal, compact := get(`{"minutes":240}`), get(`{"minutes":240,"response_mode":"compact"}`)
	if len(normal.Result.Switches) <= toolbus.CompactLimit {
		t.Fatalf("only %d switches: the test needs more than %d", len(normal.Result.Switches), toolbus.CompactLimit)
	}
	newest := normal.Result.Switches[len(normal.Result.Switches)-1]["at"]
	var shown []any
	for _, s := range compact.Result.Switches {
		if at, ok := s["at"]; ok {
			shown = append(shown, at)
		} else {
			shown = append(shown, s)
		}
	}
	if !containsAt(compact.Result.Switches, newest) {
		t.Errorf("compact nowframe_history lacks the newest switch (at %v); it shows %v", newest, shown)
	}
}

func containsAt(sw []map[string]any, at any) bool {
	for _, s := range sw {
		if s["at"] == at {
			return true
		}
	}
	return false
}
