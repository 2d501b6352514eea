package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw/awsim"
)

// TestReviewTerminalGivesUpBeforeHistoryTimeout: the terminal commands
// talk to the service with an exchange timeout of max(activitywatch.
// timeout, sidecar.timeout) + 3 s (5 s by default), restarted by each
// progress notification; the activity tools report progress once per day
// read. A history read may now take up to activitywatch.history_timeout
// (30 s by default) without progress, and a read may also wait, silently,
// for the one heavy-read token another call holds. So `awbridge summary
// --period last_7d` against a real aw-server that is slow on one old day
// never shows "ActivityWatch took longer than 30s to send Tuesday's
// window events": after 5 s it prints "the awbridge service did not
// answer within 5s (is it stuck? 'awbridge restart' restarts it ...)",
// telling the person to restart a service that is fine. Here the
// exchange timeout is 3.5 s (both live deadlines 500 ms), the first
// progress goes out after 1 s (toolbus.ProgressAfter), and the history
// deadline is 6 s. Expected: the terminal waits as long as the service may
// take (e.g. serviceTimeout covers history_timeout for the activity
// tools, or the service sends progress while a read is in flight), and
// prints the history's own message.
func TestReviewTerminalGivesUpBeforeHistoryTimeout(t *testing.T) {
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
				<-r.Context().Done() // an old day the server is slow to send
				return
			}
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := baseEnv(t, srv.URL, "AWBRIDGE_AW_HISTORY_TIMEOUT=6s", "AWBRIDGE_AW_TIMEOUT=500ms", "AWBRIDGE_SIDECAR_TIMEOUT=500ms",
		"AWBRIDGE_TIMEZONE=UTC", "AWBRIDGE_LOG_LEVEL=error", "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	ctx, cancel := context.WithTimeout(context.Background(), faultCeiling)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "summary", "--period", "last_7d", "--json")
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if errs := errb.String(); !strings.HasPrefix(errs, "awbridge summary: ActivityWatch took longer than 6s to send ") {
		t.Errorf("the week with an old day slower than history_timeout, through serve: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errs)
	}
}
