package main

import (
	"path/filepath"
	"strings"
	"testing"
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
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := baseEnv(t, stalledWeekAW(t, nil), "AWBRIDGE_AW_HISTORY_TIMEOUT=6s", "AWBRIDGE_AW_TIMEOUT=500ms", "AWBRIDGE_SIDECAR_TIMEOUT=500ms",
		"AWBRIDGE_TIMEZONE=UTC", "AWBRIDGE_LOG_LEVEL=error", "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	code, out, errs := runBin(t, env, "summary", "--period", "last_7d", "--json")
	if !strings.HasPrefix(errs, "awbridge summary: ActivityWatch took longer than 6s to send ") {
		t.Errorf("the week with an old day slower than history_timeout, through serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
