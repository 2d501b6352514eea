package transform_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
)

// TestCanonicalQuirks plants the cases where the web UI's query does
// surprising things and checks that CanonicalContext does the same: a
// window matched by a browser's app names and by its pattern (its tabs
// count twice), and an audible tab and an always-active window that
// period_union takes over on their own (their data is cleared). How the canonical query totals real data is held to aw-server by
// the recordings (activity's TestSummaryMatchesRealAW).
func TestCanonicalQuirks(t *testing.T) {
	day0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var d transform.Decoder
	ev := func(min, dur float64, data any) transform.Event {
		b, _ := json.Marshal(data)
		return d.Event(aw.Event{Timestamp: day0.Add(time.Duration(min * float64(time.Minute))), Duration: dur * 60, Data: b})
	}
	win := func(app, title string) map[string]any { return map[string]any{"app": app, "title": title} }
	tab := func(url string, audible bool) map[string]any {
		return map[string]any{"url": url, "title": url, "audible": audible, "incognito": false, "tabCount": 3}
	}
	in := transform.Input{
		Window: []transform.Event{
			ev(0, 5, win("Code", "main.go")), ev(5, 5, win("Google-chrome", "GitHub - Google Chrome")),
			ev(15, 5, win("Google-chrome", "YouTube - Google Chrome")), ev(22, 3, win("Slack", "#dev")),
			ev(30, 4, win("org.mozilla.firefox", "docs - Firefox")), ev(34, 6, win("Code", "aw-server")),
			ev(40.05, 2, win("Code", "aw-server")), ev(50, 1, win("Code", "x")),
		},
		AFK: []transform.Event{
			ev(0, 10, map[string]any{"status": "not-afk"}), ev(10, 20, map[string]any{"status": "afk"}), ev(30, 12, map[string]any{"status": "not-afk"}),
		},
		Browsers: []transform.Browser{
			{Name: "chrome", Events: []transform.Event{ev(5, 5, tab("https://github.com/", false)), ev(15, 5, tab("https://www.youtube.com/watch?v=1", true))}},
			{Name: "firefox", Events: []transform.Event{ev(28, 8, tab("file:///home/a/docs.html", false))}},
		},
	}
	for _, opt := range []transform.Options{{}, {AlwaysActivePattern: "Slack"}} {
		got, err := transform.CanonicalContext(context.Background(), in, opt)
		if err != nil {
			t.Fatal(err)
		}
		cleared := 0
		for _, list := range [][]transform.Event{got.Events, got.Browser} {
			for _, e := range list {
				if e.Data.Len() == 0 {
					cleared++
				}
			}
		}
		if cleared == 0 {
			t.Errorf("%+v: no event lost its data", opt)
		}
		twice := 0
		for _, e := range got.Browser {
			if d, _ := e.Data.Str("$domain"); d == "file" {
				twice++
			}
		}
		if twice != 2 {
			t.Errorf("%+v: the Firefox tab counts %d times, want 2", opt, twice)
		}
	}
}
