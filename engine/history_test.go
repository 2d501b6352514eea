package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"net/http/httputil"
	"net/url"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// historyServer is a simulator holding a generated week, behind a handler
// that lets a test make the reads of old days fail while recent reads and
// everything a frame reads keep working.
type historyServer struct {
	h   *activitytest.History
	now time.Time
	url string
	// old, when set, answers an event read that starts before cutoff.
	old    atomic.Pointer[http.HandlerFunc]
	cutoff time.Time
	// oldReads counts the event reads that reached old; oldURLs counts
	// them by URL.
	oldReads atomic.Int64
	oldURLs  sync.Map // string -> *atomic.Int64

	mu       sync.Mutex
	requests []string // paths after the test's mark
}

func newHistoryServer(t *testing.T) *historyServer {
	t.Helper()
	h := activitytest.Week(activitytest.WeekOptions{WindowEvents: 3000, Start: time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)})
	hs := &historyServer{h: h, now: h.End.Add(time.Hour)}
	hs.cutoff = hs.now.Add(-36 * time.Hour)
	sim := awsim.New(awsim.Options{Hostname: h.Host, Now: func() time.Time { return hs.now }})
	if err := h.Load(t.Context(), sim); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		hs.requests = append(hs.requests, r.URL.Path)
		hs.mu.Unlock()
		if f := hs.old.Load(); f != nil && strings.HasSuffix(r.URL.Path, "/events") {
			if start, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("start")); err == nil && start.Before(hs.cutoff) {
				hs.oldReads.Add(1)
				n, _ := hs.oldURLs.LoadOrStore(r.URL.String(), new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
				(*f)(w, r)
				return
			}
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	hs.url = srv.URL
	return hs
}

func (hs *historyServer) failOld(f http.HandlerFunc) { hs.old.Store(&f) }

// engine is an engine over hs with the live frame's default deadline and a
// history deadline of history.
func (hs *historyServer) engine(t *testing.T, history time.Duration) *Engine {
	t.Helper()
	c := config.Defaults()
	c.AW.URL, c.AW.HistoryTimeout = hs.url, history
	c.Activity.Timezone = "UTC"
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return hs.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// stall answers nothing until the client gives up.
func stall(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// fail500 answers as aw-server does when a read raises.
func fail500(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(`{"message": "Internal Server Error"}`))
}

// TestHistoryFailsAloneAndClearly: ActivityWatch answers recent reads and
// every read a frame makes, but stalls (or fails with 500) on old days.
// The week's summary fails saying what ActivityWatch did not send (the
// day, the events, the deadline), without asking whether ActivityWatch
// runs; a stalled read is sent once, never retried into the busy server;
// nowframe_build, aw_get_state and system_health answer right after, with
// ActivityWatch up.
func TestHistoryFailsAloneAndClearly(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		message string // in the error's message
		hint    string // in its hint
	}{
		{"stall", stall, 300 * time.Millisecond, "ActivityWatch took longer than 300ms to send ", "slowly"},
		{"500", fail500, 10 * time.Second, "ActivityWatch did not send ", "failed to send these events"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := newHistoryServer(t)
			e := hs.engine(t, c.timeout)
			ctx := context.Background()
			// Recent periods work.
			if out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"last_3h"}`)}); out.Err != nil {
				t.Fatalf("a recent period: %+v", out.Err)
			}
			hs.failOld(c.handler)
			for i := range 3 {
				before := hs.oldReads.Load()
				out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"last_7d"}`)})
				if out.Err == nil {
					t.Fatalf("call %d: the week answered though its old days fail", i)
				}
				te := out.Err
				if te.Code != toolbus.CodeAwEventsUnreadable || !te.Retryable || !strings.Contains(te.Message, c.message) ||
					!strings.Contains(te.Message, "events") || !strings.Contains(te.Hint, c.hint) || strings.Contains(te.Hint, "running") {
					t.Errorf("call %d: %s %q hint %q; want AwEventsUnreadable saying %q", i, te.Code, te.Message, te.Hint, c.message)
				}
				if !strings.Contains(te.Message, hs.cutoff.Add(-24*time.Hour).Format("Monday")) &&
					!strings.Contains(te.Message, hs.cutoff.Format("Monday")) {
					t.Errorf("call %d: %q names no failing day", i, te.Message)
				}
				if hs.oldReads.Load() == before {
					t.Errorf("call %d: no old day was read", i)
				}
				if c.name == "stall" {
					// Each stalled read is sent once (a browser bucket's may
					// stall before the window's, which fails the call).
					hs.oldURLs.Range(func(u, n any) bool {
						if got := n.(*atomic.Int64).Load(); got != 1 {
							t.Errorf("call %d: a stalled read was sent %d times, want once: %s", i, got, u)
						}
						return true
					})
					hs.oldURLs.Clear()
				}
				liveAnswers(t, e, i)
			}
		})
	}
}

// TestHistoryCircuitIsItsOwn: when every history read stalls, the
// history's circuit opens after three failed calls (the fourth is refused
// without a read), and the live frame's circuit stays closed: frames,
// aw_get_state and health keep answering with ActivityWatch up.
func TestHistoryCircuitIsItsOwn(t *testing.T) {
	hs := newHistoryServer(t)
	hs.cutoff = hs.now.Add(time.Hour) // every read of a period
	e := hs.engine(t, 200*time.Millisecond)
	ctx := context.Background()
	hs.failOld(stall)
	refused := false
	for i := 0; i < 4 && !refused; i++ {
		// Each call fails at least once (its window read stalls; a browser
		// bucket's may stall first, and count too).
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
		switch {
		case out.Err == nil:
			t.Fatalf("call %d: answered though every read stalls", i)
		case out.Err.Code == toolbus.CodeCircuitOpen:
			// This call's own stalled read may have opened it: the next
			// is refused without a read.
			refused = true
			before := hs.oldReads.Load()
			again := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
			if i == 0 || again.Err == nil || again.Err.Code != toolbus.CodeCircuitOpen || hs.oldReads.Load() != before {
				t.Errorf("call %d: CircuitOpen; then %+v after %d reads, want CircuitOpen without a read", i, again.Err, hs.oldReads.Load()-before)
			}
		case out.Err.Code != toolbus.CodeAwEventsUnreadable:
			t.Errorf("call %d: %s %q, want AwEventsUnreadable", i, out.Err.Code, out.Err.Message)
		}
		liveAnswers(t, e, i)
	}
	if !refused {
		t.Errorf("the history's circuit never opened in 4 calls whose every read stalled")
	}
	if got := e.awSrc.Circuit().String(); got != "closed" {
		t.Errorf("the live frame's circuit is %s after history failures", got)
	}
}

// liveAnswers checks that nowframe.build, aw.get_state and system.health
// answer, with ActivityWatch up.
func liveAnswers(t *testing.T, e *Engine, call int) {
	t.Helper()
	ctx := context.Background()
	frame := e.Call(ctx, toolbus.Request{Name: "nowframe.build", Args: json.RawMessage(`{"max_age_ms":0}`)})
	if frame.Err != nil || !strings.Contains(string(frame.Body), `"aw_buckets":{`) {
		t.Fatalf("call %d: nowframe.build after a failed period: %+v %.300s", call, frame.Err, frame.Body)
	}
	if st := e.Call(ctx, toolbus.Request{Name: "aw.get_state"}); st.Err != nil {
		t.Fatalf("call %d: aw.get_state after a failed period: %+v", call, st.Err)
	}
	var health struct {
		Result struct {
			AWOK bool `json:"aw_ok"`
		} `json:"result"`
	}
	h := e.Call(ctx, toolbus.Request{Name: "system.health"})
	if err := json.Unmarshal(h.Body, &health); err != nil || !health.Result.AWOK {
		t.Fatalf("call %d: system.health says ActivityWatch is down: %s", call, h.Body)
	}
}

// TestHistoryReadCancelled: a cancelled call stops reading at once: no
// event read starts after it returned.
func TestHistoryReadCancelled(t *testing.T) {
	hs := newHistoryServer(t)
	e := hs.engine(t, time.Minute)
	started := make(chan struct{}, 1)
	hs.failOld(func(w http.ResponseWriter, r *http.Request) {
		select {
		case started <- struct{}{}:
		default:
		}
		stall(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan toolbus.Response, 1)
	go func() {
		done <- e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"last_7d"}`)})
	}()
	<-started
	cancel()
	out := <-done
	if out.Err == nil || out.Err.Code != toolbus.CodeCancelled {
		t.Fatalf("a cancelled week: %+v", out.Err)
	}
	n := hs.oldReads.Load()
	time.Sleep(100 * time.Millisecond)
	if more := hs.oldReads.Load() - n; more != 0 {
		t.Errorf("%d reads started after the call was cancelled", more)
	}
}

// TestHistoryRepeatedCallReadsOnlyTheTail: a repeated call within
// poll.bucket_list_ttl reads neither the server's info, nor its bucket
// list, nor its settings again, only the open day's newest minutes.
func TestHistoryRepeatedCallReadsOnlyTheTail(t *testing.T) {
	hs := newHistoryServer(t)
	e := hs.engine(t, time.Minute)
	ctx := context.Background()
	args := json.RawMessage(`{"period":"this_week"}`)
	if out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: args}); out.Err != nil {
		t.Fatal(out.Err)
	}
	hs.mu.Lock()
	hs.requests = nil
	hs.mu.Unlock()
	if out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: args}); out.Err != nil {
		t.Fatal(out.Err)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, p := range hs.requests {
		if !strings.HasSuffix(p, "/events") {
			t.Errorf("a repeated call read %s", p)
		}
	}
	if len(hs.requests) > 4 {
		t.Errorf("a repeated call made %d reads: %v", len(hs.requests), hs.requests)
	}
}

// TestHistoryTooDenseIsAContractError: a period holding more events than
// a call reads is the caller's to shorten: a ContractError naming the
// period, never AwUnavailable nor "is ActivityWatch running?".
func TestHistoryTooDenseIsAContractError(t *testing.T) {
	e := newHistoryServer(t).engine(t, 10*time.Second)
	de := &activity.DenseError{Start: time.Date(2026, 3, 23, 4, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 24, 4, 0, 0, 0, time.UTC),
		Max: activity.DefaultMaxEvents}
	_, err := e.activityResult(context.Background(), nil, fmt.Errorf("wrapped: %w", de))
	var te *toolbus.ToolError
	if !errors.As(err, &te) || te.Kind != toolbus.ContractError || te.Retryable || !strings.Contains(te.Message, "period too dense") ||
		te.Details["argument"] != "period" || strings.Contains(te.Message+te.Hint, "running") {
		t.Fatalf("too dense: %#v", err)
	}
}

// TestHistoryPieceTooLarge: when even the smallest piece of a day (22.5
// min) holds more than activitywatch.max_body_bytes of events (anything
// can write them), the period still answers, the stretches left out said
// in its notes, and frames answer.
func TestHistoryPieceTooLarge(t *testing.T) {
	hs := newHistoryServer(t)
	c := config.Defaults()
	c.AW.URL, c.AW.MaxBodyBytes = hs.url, 4<<10
	c.Activity.Timezone = "UTC"
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return hs.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	out := e.Call(context.Background(), toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"yesterday"}`)})
	if out.Err != nil || !strings.Contains(string(out.Body), "(activitywatch.max_body_bytes): that time is left out") {
		t.Fatalf("a piece over the body limit: %+v %.500s", out.Err, out.Body)
	}
	liveAnswers(t, e, 0)
}

// TestOneBadOldDayDoesNotShutOutToday: ActivityWatch answers every read
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
func TestOneBadOldDayDoesNotShutOutToday(t *testing.T) {
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

// TestBrokenBrowserBucketDoesNotShutOutTheActivityTools: one browser
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
func TestBrokenBrowserBucketDoesNotShutOutTheActivityTools(t *testing.T) {
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

// TestRetryAfterCoversAnOpenHistoryCircuit: an AwEventsUnreadable
// answer always says retry_after_ms 1000 ("asking again reads only the
// rest"), even when the failed read was the one that opened the history
// circuit, which its own details report ("circuit": "open"): an
// assistant that waits the 1 s it was told gets CircuitOpen with
// retry_after_ms ~10000 instead. Here an old day stalls (history_timeout
// 200 ms) and the assistant asks about it until the circuit opens.
// Expected: when the history circuit is open, retry_after_ms covers the
// cool-down left (the upstream.Error's RetryAfter, or Source's
// open-until), and a retry after that long is not refused by the circuit.
func TestRetryAfterCoversAnOpenHistoryCircuit(t *testing.T) {
	hs := newHistoryServer(t)
	e := hs.engine(t, 200*time.Millisecond)
	ctx := context.Background()
	// The server's metadata, read now and kept (the engine's clock stands
	// still), so that the calls below read nothing but the stalled day.
	// These reads are quick, but 200 ms is short for a loaded machine:
	// one answered call will do (it resets the breaker's count).
	for i := 0; ; i++ {
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"last_3h"}`)})
		if out.Err == nil {
			break
		}
		if i == 2 {
			t.Fatalf("a recent period: %+v", out.Err)
		}
	}
	hs.failOld(stall)
	day := hs.cutoff.Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(4 * time.Hour)
	old, _ := json.Marshal(map[string]string{"start": day.Format(time.RFC3339), "end": day.Add(24 * time.Hour).Format(time.RFC3339)})
	var te *toolbus.ToolError
	// Every call counts at least its first stalled read; a browser
	// bucket's may come first, and when it opens the circuit the call's
	// window read is refused: CircuitOpen, which says the cool-down too.
	for i := 0; te == nil || te.Details["circuit"] != "open"; i++ {
		if i == 3 {
			t.Fatalf("the history circuit is %v after three calls of stalled reads", te.Details["circuit"])
		}
		te = e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: old}).Err
		if te == nil || te.Code != toolbus.CodeAwEventsUnreadable && te.Code != toolbus.CodeCircuitOpen {
			t.Fatalf("call %d: %+v, want AwEventsUnreadable or CircuitOpen", i, te)
		}
	}
	after := time.Duration(*te.RetryAfterMs) * time.Millisecond
	hs.now = hs.now.Add(after) // the assistant waits as told (the engine's clock)
	again := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
	if again.Err != nil && again.Err.Code == toolbus.CodeCircuitOpen {
		t.Errorf("told retry_after_ms %d (%s, details.circuit %q); a call %s later is refused: %s %q retry_after_ms %d",
			*te.RetryAfterMs, te.Code, te.Details["circuit"], after, again.Err.Code, again.Err.Message, *again.Err.RetryAfterMs)
	}
}

// TestCompactHistoryKeepsTheNewestSwitches: nowframe_history ("what
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
func TestCompactHistoryKeepsTheNewestSwitches(t *testing.T) {
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
