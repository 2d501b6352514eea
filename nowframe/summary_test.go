package nowframe

import (
	"strings"
	"testing"

	"github.com/awbridge/awbridge/aw"
)

// A watcher whose events could not be read is unknown, not quiet: the
// summary says its events could not be read and never calls it
// "silent", nor its data missing; a watcher that really recorded
// nothing recent is still called silent.
func TestSummaryNeverCallsAnUnreadableWatcherSilent(t *testing.T) {
	web := map[string][]aw.Event{"aw-watcher-web-chrome_h": {tabEv(2, 1, "https://example.com/", "Example")}}
	staleWin := []aw.Event{winEv(600, 5, "Code", "x")}
	staleAFK := []aw.Event{afkEv(900, 5, "not-afk")}
	tests := []struct {
		name       string
		in         Input
		want       string
		unreadable bool // the summary must say so
	}{
		{"web fresh, window and AFK unreadable",
			Input{Web: web, Unreadable: []string{"w_h", "a_h"}},
			"Only the web watcher is active: the window and AFK watchers' events could not be read", true},
		{"web fresh, window unreadable, AFK stale",
			Input{Web: web, AFK: staleAFK, Unreadable: []string{"w_h"}},
			"Only the web watcher is active: the window watcher's events could not be read, and the AFK watcher is silent", true},
		{"web fresh, window stale, AFK unreadable",
			Input{Web: web, Window: staleWin, Unreadable: []string{"a_h"}},
			"Only the web watcher is active: the window watcher is silent, and the AFK watcher's events could not be read", true},
		{"web fresh, window and AFK stale (really silent)",
			Input{Web: web, Window: staleWin, AFK: staleAFK},
			"Only the web watcher is active: the window and AFK watchers are silent", false},
		{"present, window unreadable",
			Input{AFK: []aw.Event{afkEv(3, 2, "not-afk")}, Unreadable: []string{"w_h"}},
			"Present (not afk); the window watcher's events could not be read", true},
		{"active, AFK unreadable",
			Input{Window: []aw.Event{winEv(2, 1, "Code", "x")}, Unreadable: []string{"a_h"}},
			"Active in Code; AFK status unknown: its events could not be read", true},
		{"active in a browser whose tab is unreadable",
			Input{Window: []aw.Event{winEv(2, 1, "Google-chrome", "x")}, AFK: []aw.Event{afkEv(3, 2, "not-afk")},
				Unreadable: []string{"aw-watcher-web-chrome_h"}},
			"Active in Google-chrome (its tab could not be read)", true},
		{"stale AFK, window unreadable",
			Input{AFK: staleAFK, Unreadable: []string{"w_h"}},
			"No recent activity: the AFK watcher's newest event ended 14m ago; the window watcher's events could not be read", true},
		{"nothing read while ActivityWatch answered",
			Input{Unreadable: []string{"w_h", "a_h", "aw-watcher-web-chrome_h"}},
			"Unknown: the window and AFK watchers' events could not be read (see sources.activitywatch.error)", true},
		{"ActivityWatch did not answer",
			Input{Unavailable: true},
			"Unknown: ActivityWatch did not answer (see sources.activitywatch.error)", false},
		{"ActivityWatch refused awbridge (401, 403, Host header)",
			Input{Unavailable: true, Refused: true},
			"Unknown: ActivityWatch refused awbridge's requests (see sources.activitywatch.error)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Now, in.Selection = t0, fullSel
			if in.Unavailable {
				in.Selection = Selection{}
			}
			n := ComputeNow(in)
			if n.Summary != tt.want {
				t.Errorf("summary %q, want %q", n.Summary, tt.want)
			}
			for _, id := range in.Unreadable {
				if id == "w_h" && n.Window.Reason != ReasonUnreadable || id == "a_h" && n.AFK.Reason != ReasonUnreadable {
					t.Errorf("reasons %q / %q for unreadable %v", n.Window.Reason, n.AFK.Reason, in.Unreadable)
				}
			}
			if len(in.Unreadable) > 0 && (strings.Contains(n.Summary, "silent") && !strings.Contains(tt.want, "is silent") ||
				strings.Contains(n.Summary, "no window data") || strings.Contains(n.Summary, "no browser tab data")) {
				t.Errorf("an unreadable watcher is called silent or empty: %q", n.Summary)
			}
			if tt.unreadable != strings.Contains(n.Summary, "could not be read") {
				t.Errorf("summary %q: says unreadable %v, want %v", n.Summary, !tt.unreadable, tt.unreadable)
			}
		})
	}
}
