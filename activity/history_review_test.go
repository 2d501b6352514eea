package activity

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReviewCachedBucketListCallsLiveWatcherStale: the Service now reuses
// ActivityWatch's bucket list for MetaTTL (poll.bucket_list_ttl, which a
// person may set up to 1 h), and a bucket's freshness is max(the list's
// last_updated, the newest event read). For a period that ends before now
// (yesterday, last_week, an explicit afternoon) the newest event read is
// old, so the freshness is the cached list's last_updated: once the list
// is older than the watcher's threshold (window: 15 s) a watcher that is
// heartbeating right now is reported stale ("stale_watchers":
// ["aw-watcher-window_testhost"], age_s = the cache's age), which says the
// period may lack its latest part though nothing is missing. A cold
// Service (or one with a fresh list) says the same watcher is fresh.
// Expected: a cached list never makes a live watcher stale (e.g. judge
// the list's last_updated as of Meta.At: age = m.At - last_updated, or
// read the list again before calling a watcher stale).
func TestReviewCachedBucketListCallsLiveWatcherStale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Date(2026, 3, 24, 12, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, t0)
	const win, afk = "aw-watcher-window_testhost", "aw-watcher-afk_testhost"
	y := t0.Add(-24 * time.Hour)
	insert(t, env, win, ev1(y, 3600, `{"app":"Code","title":"a"}`))
	insert(t, env, afk, ev1(y, 3600, `{"status":"not-afk"}`))
	// The watchers are alive now: their newest events end at t0.
	insert(t, env, win, ev1(t0.Add(-time.Minute), 60, `{"app":"Code","title":"b"}`))
	insert(t, env, afk, ev1(t0.Add(-time.Minute), 60, `{"status":"not-afk"}`))

	s := reviewService(env, clk, ServiceOptions{MetaTTL: time.Minute})
	first, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Freshness.StaleWatchers) != 0 {
		t.Fatalf("first call: stale %v, want none", first.Freshness.StaleWatchers)
	}

	// 30 s later the window watcher has kept heartbeating.
	t1 := t0.Add(30 * time.Second)
	clk.set(t1)
	insert(t, env, win, ev1(t0, 30, `{"app":"Code","title":"c"}`))
	insert(t, env, afk, ev1(t0, 30, `{"status":"not-afk"}`))

	warm, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	cold, err := reviewService(env, clk, ServiceOptions{}).Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cold.Freshness.StaleWatchers) != 0 {
		t.Fatalf("cold service: stale %v, want none (test setup)", cold.Freshness.StaleWatchers)
	}
	if slices.Contains(warm.Freshness.StaleWatchers, win) {
		for _, b := range warm.Source.Buckets {
			if b.ID == win && b.AgeS != nil {
				t.Logf("window bucket: newest_end %s, age_s %.1f", b.NewestEnd, *b.AgeS)
			}
		}
		t.Errorf("a window watcher that heartbeats now is reported stale from a %s-old cached bucket list: stale_watchers %v (a cold service: none)",
			t1.Sub(t0), warm.Freshness.StaleWatchers)
	}
}

// stallBefore is a simulator in front of which every event read starting
// before cut stalls until release is closed (or the request goes away),
// as the real aw-server does while it computes an old, large day.
func stallBefore(t *testing.T, cut time.Time, release <-chan struct{}, stalled chan<- struct{}) (*simEnv, *clock) {
	t.Helper()
	env, clk := reviewDesktop(t, cut.Add(32*time.Hour))
	next := env.srv.Config.Handler
	env.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("start"))
		if strings.HasSuffix(r.URL.Path, "/events") && r.Method == http.MethodGet && err == nil && start.Before(cut) {
			select {
			case stalled <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
	return env, clk
}

// TestReviewCancelledCallWaitsForAnotherCallsHeavyRead: a call whose
// context is cancelled (the client's notifications/cancelled, its
// timeout_ms, the bus's deadline) must end promptly ("long calls honour
// cancellation"). readSpan waits for the heavy-read token with ctx, but
// loadDay takes the bucket day's lock (bd.mu, a sync.Mutex) first and
// holds it while waiting for the token and while reading. So: call C
// reads an old day that the server is slow to send (it holds the one
// heavy token, up to history_timeout = 30 s per read, and more reads
// queue behind it); call A asks for yesterday and waits for the token
// holding yesterday's lock; call B asks for yesterday too and is
// cancelled after 100 ms. B does not return: it blocks on the lock
// without looking at its ctx until C's read ends and A has read
// yesterday. Before the shared token, A would have read at once; now B's
// wait is bounded by every heavy read queued in the process. Expected: B
// returns its ctx error within moments of the cancellation (e.g. take
// the token before the bucket day's lock, or make the lock a
// ctx-aware one: a chan struct{} of 1 selected with ctx.Done()).
func TestReviewCancelledCallWaitsForAnotherCallsHeavyRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	day := func(d int) time.Time { return time.Date(2026, 3, 20+d, 4, 0, 0, 0, time.UTC) }
	release, stalled := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	env, clk := stallBefore(t, day(2), release, stalled) // reads of day(1) stall; now is day(3)+8h
	s := reviewService(env, clk, ServiceOptions{})
	if _, err := s.Summary(ctx, SummaryQuery{Period: "today"}); err != nil { // metadata cached
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { // C: an old day the server is slow to send
		_, _ = s.Summary(ctx, SummaryQuery{Start: day(1).Format(time.RFC3339), End: day(2).Format(time.RFC3339)})
	})
	select {
	case <-stalled:
	case <-ctx.Done():
		t.Fatal("C's read never reached the server")
	}
	wg.Go(func() { _, _ = s.Summary(ctx, SummaryQuery{Period: "yesterday"}) }) // A: waits for the token
	time.Sleep(100 * time.Millisecond)                                         // A holds yesterday's lock

	bctx, bcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer bcancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := s.Summary(bctx, SummaryQuery{Period: "yesterday"}); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("B: no error, want its ctx's")
		}
	case <-time.After(3 * time.Second):
		free()
		err := <-done
		t.Errorf("B, cancelled after 100 ms, was still running 3 s later (blocked on yesterday's lock held by a call waiting for another call's heavy read); it returned %v only after %s, once that read was released",
			err, time.Since(start).Round(time.Millisecond))
	}
}
