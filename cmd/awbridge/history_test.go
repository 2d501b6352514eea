package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw/awsim"
)

// TestHistoryFailsAloneThroughServe: a person runs the service against an
// ActivityWatch that answers every read a frame makes and recent event
// reads, but never finishes sending older days. `awbridge summary` for
// the week fails in one line saying which day's events ActivityWatch took
// too long to send (each such read sent once), and right after it
// `awbridge nowframe` and `awbridge health` answer, ActivityWatch up.
func TestHistoryFailsAloneThroughServe(t *testing.T) {
	var (
		mu      sync.Mutex
		stalled = map[string]int{} // by URL
	)
	url := stalledWeekAW(t, func(r *http.Request) {
		mu.Lock()
		stalled[r.URL.String()]++
		mu.Unlock()
	})
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := baseEnv(t, url, "AWBRIDGE_AW_HISTORY_TIMEOUT=400ms", "AWBRIDGE_TIMEZONE=UTC",
		"AWBRIDGE_LOG_LEVEL=error", "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	run := func(args ...string) (int, string, string) { t.Helper(); return runBin(t, env, args...) }

	if code, out, errs := run("summary", "--period", "last_3h"); code != exitOK {
		t.Fatalf("a recent period: exit %d\n%s%s", code, out, errs)
	}
	for i := range 2 {
		mu.Lock()
		clear(stalled)
		mu.Unlock()
		code, out, errs := run("summary", "--period", "last_7d")
		if code != exitDegraded || out != "" || strings.Count(errs, "\n") != 1 ||
			!strings.HasPrefix(errs, "awbridge summary: ActivityWatch took longer than 400ms to send ") ||
			!strings.Contains(errs, "'s window events") {
			t.Fatalf("call %d: the week with old days stalled: exit %d\nstdout:\n%s\nstderr:\n%s", i, code, out, errs)
		}
		mu.Lock()
		for u, n := range stalled {
			if n != 1 {
				t.Errorf("call %d: a stalled read was sent %d times, want once (a read that timed out is not sent again): %s", i, n, u)
			}
		}
		if len(stalled) == 0 {
			t.Errorf("call %d: no old day was read", i)
		}
		mu.Unlock()
		if code, out, errs := run("nowframe", "--json"); code != exitOK || !strings.Contains(out, `"aw_buckets":{`) {
			t.Fatalf("call %d: nowframe right after: exit %d\n%s%s", i, code, out, errs)
		}
		if code, out, errs := run("health"); code != exitOK {
			t.Fatalf("call %d: health right after: exit %d\n%s%s", i, code, out, errs)
		}
	}
}

// stalledWeekAW serves a simulated ActivityWatch holding the last eight
// days, which never finishes sending an event read that starts more than
// 36 hours ago (an old day the server is slow to send), telling stalled
// (when set) of each such read; it returns its URL.
func stalledWeekAW(t *testing.T, stalled func(*http.Request)) string {
	t.Helper()
	now := time.Now().UTC()
	h := activitytest.Week(activitytest.WeekOptions{WindowEvents: 2000, Days: 8,
		Start: time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -7)})
	sim := awsim.New(awsim.Options{Hostname: h.Host})
	if err := h.Load(t.Context(), sim); err != nil {
		t.Fatal(err)
	}
	cutoff := now.Add(-36 * time.Hour)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			if start, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("start")); err == nil && start.Before(cutoff) {
				if stalled != nil {
					stalled(r)
				}
				<-r.Context().Done()
				return
			}
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTerminalWaitsForTheHistoryTimeout: the terminal commands talk to
// the service with an exchange timeout of max(activitywatch.timeout,
// sidecar.timeout) + 3 s, restarted by each progress notification, while a
// history read may take up to activitywatch.history_timeout without
// progress (or wait, silently, for the heavy-read token another call
// holds). `awbridge summary --period last_7d` through serve against an
// ActivityWatch that never sends an old day prints the history's own
// message, not "the awbridge service did not answer" (which tells the
// person to restart a service that is fine). Here the exchange timeout is
// 3.5 s (both live deadlines 500 ms) and the history deadline 6 s.
func TestTerminalWaitsForTheHistoryTimeout(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := baseEnv(t, stalledWeekAW(t, nil), "AWBRIDGE_AW_HISTORY_TIMEOUT=6s", "AWBRIDGE_AW_TIMEOUT=500ms", "AWBRIDGE_SIDECAR_TIMEOUT=500ms",
		"AWBRIDGE_TIMEZONE=UTC", "AWBRIDGE_LOG_LEVEL=error", "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	code, out, errs := runBin(t, env, "summary", "--period", "last_7d", "--json")
	if !strings.HasPrefix(errs, "awbridge summary: ActivityWatch took longer than 6s to send ") {
		t.Errorf("the week with an old day slower than history_timeout, through serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
