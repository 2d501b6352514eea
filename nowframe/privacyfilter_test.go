package nowframe

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/upstream"
)

// TestFramesApplyPrivacyFilters: the person's privacy_filters, read with
// the bucket list, apply to the events a frame reads: a dropped window
// is as if never stored (the frame shows the one before it, stale), a
// redacted title shows its replacement; a rule written later applies to
// the next frame that reads the list, and one that cannot be used is
// remembered for health.
func TestFramesApplyPrivacyFilters(t *testing.T) {
	clock := &faultClock{t: time.Now()}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go - billing-api"}`, clock.now().Add(-time.Minute))
	ts := clock.now().Add(-30*time.Second).UTC().Format("2006-01-02T15:04:05") + "+00:00"
	w.do(http.MethodPost, "/api/0/buckets/"+winDesk+"/events",
		`[{"timestamp":"`+ts+`","duration":30.0,"data":{"app":"Firefox","title":"My Bank - Online Banking"}}]`)
	c, err := aw.New(aw.Options{BaseURL: w.srv.URL, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	cache := &transform.PrivacyFilterCache{}
	b := NewBuilder(Options{AW: c, Now: clock.now, Settings: c.Settings, PrivacyFilters: cache,
		AWSource: upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: 5 * time.Second, Now: clock.now})})
	t.Cleanup(b.Close)
	for _, tc := range []struct {
		name, setting string
		want, absent  string
	}{
		{"no rules", `[]`, "My Bank - Online Banking", ""},
		{"drop", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)banking","action":"drop"}]`, "main.go - billing-api", "Bank"},
		{"redact", `[{"enabled":true,"field":"title","pattern":"(?i)banking","action":"redact","replacement":"REDACTED"}]`, "REDACTED", "Bank"},
		{"an invalid rule", `[{"enabled":true,"field":"title","pattern":"(banking","action":"drop"}]`, "My Bank - Online Banking", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.do(http.MethodPost, "/api/0/settings/privacy_filters", tc.setting)
			f := b.Build(t.Context())
			js := string(body(f, "test"))
			if !strings.Contains(js, tc.want) {
				t.Errorf("the frame does not show %q: %s", tc.want, f.Now.Window.Title)
			}
			if tc.absent != "" && strings.Contains(js, tc.absent) {
				t.Errorf("the frame shows %q, which the privacy filters hide", tc.absent)
			}
			if n := len(cache.Last().Skipped); (n > 0) != (tc.name == "an invalid rule") {
				t.Errorf("rules skipped: %q", cache.Last().Skipped)
			}
		})
	}
}

// TestFramesWithholdUntilFiltersRead: while the person's privacy filters
// were never read (the settings read keeps failing), a frame shows no
// window title and no URL, so a drop rule it could not read cannot be
// bypassed; once the settings answer, the rules apply. A server without
// settings (a 404) has no rules to wait for.
func TestFramesWithholdUntilFiltersRead(t *testing.T) {
	clock := &faultClock{t: time.Now()}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Firefox","title":"My Bank - Online Banking"}`, clock.now().Add(-time.Minute))
	w.do(http.MethodPost, "/api/0/settings/privacy_filters", `[{"enabled":true,"field":"title","pattern":"(?i)banking","action":"redact","replacement":"REDACTED"}]`)
	c, err := aw.New(aw.Options{BaseURL: w.srv.URL, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	var settingsErr error
	settings := func(ctx context.Context) (aw.Settings, error) {
		if settingsErr != nil {
			return aw.Settings{}, settingsErr
		}
		return c.Settings(ctx)
	}
	cache := &transform.PrivacyFilterCache{}
	b := NewBuilder(Options{AW: c, Now: clock.now, Settings: settings, PrivacyFilters: cache,
		AWSource: upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: 5 * time.Second, Now: clock.now})})
	t.Cleanup(b.Close)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"failing, never read", &aw.Error{Op: "settings", Kind: aw.HTTPStatus, Status: 500}, "withheld"},
		{"read", nil, "REDACTED"},
		{"failing after a read", &aw.Error{Op: "settings", Kind: aw.Timeout}, "REDACTED"},
	} {
		settingsErr = tc.err
		f := b.Build(t.Context())
		js := string(body(f, "test"))
		if !strings.Contains(js, tc.want) || strings.Contains(js, "Bank") {
			t.Errorf("%s: the frame shows title %q, want %q and never the bank's", tc.name, f.Now.Window.Title, tc.want)
		}
	}
	fresh := NewBuilder(Options{AW: c, Now: clock.now, PrivacyFilters: &transform.PrivacyFilterCache{},
		Settings: func(context.Context) (aw.Settings, error) {
			return aw.Settings{}, &aw.Error{Op: "settings", Kind: aw.HTTPStatus, Status: 404}
		},
		AWSource: upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: 5 * time.Second, Now: clock.now})})
	t.Cleanup(fresh.Close)
	if f := fresh.Build(t.Context()); !strings.Contains(string(body(f, "test")), "My Bank") {
		t.Errorf("a server without settings: the frame withholds the title (%q), with no rules to wait for", f.Now.Window.Title)
	}
}
