package activity_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/internal/realaw"
)

// hiddenByRecordedFilters are what the privacy recording's filters drop
// (testdata/realaw/privacy/privacy_filters.json): two Slack channels' and
// Hacker News's windows, and Reddit's and YouTube's tabs. Hacker News's
// tabs are not dropped (the rule names the window watcher's buckets): as
// on the real server, their title shows for the seconds a tab outlasts
// its window.
var hiddenByRecordedFilters = []string{"#incidents", "#random", "Hacker News - Google Chrome", "reddit.com", "youtube.com"}

// TestPrivacyFiltersHideRealAW: with the person's privacy filters (the
// privacy recording's, and a redact rule added), no summary, timeline
// or history of the recorded week shows what they drop or redact, and
// the answers say that some rules could not be used. A redact rule moves
// time between titles, never changes it: the active time is still the
// real aw-server's with the drop rules expressed in its query.
func TestPrivacyFiltersHideRealAW(t *testing.T) {
	rec, s := realService(t, "privacy", func(sim http.Handler) http.Handler {
		var settings map[string]json.RawMessage
		rec, err := realaw.Load("privacy")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(rec.Settings, &settings); err != nil {
			t.Fatal(err)
		}
		var rules []json.RawMessage
		if err := json.Unmarshal(settings["privacy_filters"], &rules); err != nil {
			t.Fatal(err)
		}
		rules = append(rules, json.RawMessage(`{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)^slack","action":"redact","replacement":"Chat"}`))
		body, _ := json.Marshal(rules)
		w := httptest.NewRecorder()
		sim.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/0/settings/privacy_filters", strings.NewReader(string(body))))
		if w.Code/100 != 2 {
			t.Fatalf("POST privacy_filters: %d", w.Code)
		}
		return sim
	})
	hidden := append(hiddenByRecordedFilters, "Slack |")
	check := func(t *testing.T, what string, v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hidden {
			if strings.Contains(string(b), h) {
				t.Errorf("%s shows %q, which the privacy filters hide", what, h)
			}
		}
		return string(b)
	}
	for _, p := range rec.Periods {
		t.Run(p.Name, func(t *testing.T) {
			start, end := p.Start.Format(time.RFC3339Nano), p.End.Format(time.RFC3339Nano)
			for _, g := range []string{realaw.ByTitle, realaw.ByDomain} {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: start, End: end, GroupBy: g, Limit: activity.MaxSummaryLimit})
				if err != nil {
					t.Fatal(err)
				}
				out := check(t, "the summary by "+g, sum)
				if d := sum.ActiveS - p.Active; d > realTolerance || d < -realTolerance {
					t.Errorf("active %.1f s, the real aw-server's %.1f s", sum.ActiveS, p.Active)
				}
				if !strings.Contains(out, "privacy filters could not be used") {
					t.Errorf("the summary by %s does not say some privacy filters are not used", g)
				}
				if g == realaw.ByTitle && !strings.Contains(out, `"Chat"`) {
					t.Error("the summary by title does not show the redacted titles' replacement")
				}
			}
			q := activity.TimelineQuery{Start: start, End: end, Limit: activity.MaxTimelineLimit}
			for pages := 0; pages < 1000; pages++ {
				tl, err := s.Timeline(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				check(t, "the timeline", tl)
				if tl.NextCursor == "" {
					break
				}
				q = activity.TimelineQuery{Cursor: tl.NextCursor, Limit: activity.MaxTimelineLimit}
			}
			h, err := s.History(t.Context(), activity.HistoryQuery{Start: start, End: end, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			check(t, "the history", h)
		})
	}
}

// TestPrivacyFiltersKeptWhenSettingsFail: a read of ActivityWatch's
// settings that fails after one that succeeded (a timeout while the
// server is busy, a 500) keeps the privacy filters last read, as frames
// do. The next answers went on without them and showed what they hide.
func TestPrivacyFiltersKeptWhenSettingsFail(t *testing.T) {
	rec, err := realaw.Load("privacy")
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Periods[0]
	var (
		mu   sync.Mutex
		now  = p.End.Add(24 * time.Hour)
		fail atomic.Bool
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := realServiceOn(t, rec, clock, func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fail.Load() && strings.HasPrefix(r.URL.Path, "/api/0/settings") {
				http.Error(w, `{"message":"busy"}`, http.StatusInternalServerError)
				return
			}
			sim.ServeHTTP(w, r)
		})
	})
	q := activity.SummaryQuery{Start: p.Start.Format(time.RFC3339Nano), End: p.End.Format(time.RFC3339Nano), GroupBy: realaw.ByTitle, Limit: activity.MaxSummaryLimit}
	for i, failing := range []bool{true, false, true} {
		fail.Store(failing)
		mu.Lock()
		now = now.Add(time.Hour) // past the settings' reuse
		mu.Unlock()
		sum, err := s.Summary(t.Context(), q)
		if i == 0 {
			// No rules were ever read: no answer without them.
			if err == nil || !strings.Contains(err.Error(), "privacy filters") || aw.KindOf(err) != aw.HTTPStatus {
				t.Fatalf("the first call, the settings failing, answered (%v) rather than refuse for want of the privacy filters", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(sum)
		if failing && !strings.Contains(string(b), "settings could not be read") {
			t.Fatalf("call %d: the settings read did not fail: %s", i, b)
		}
		for _, h := range hiddenByRecordedFilters {
			if strings.Contains(string(b), h) {
				t.Errorf("call %d (settings read failing: %v) shows %q, which the privacy filters hide", i, failing, h)
			}
		}
	}
}
