package activity_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
)

// TestEditorBucketsReadOnlyWhenUsed: the editor watchers' events (a third
// more to fetch from the slow server in a week of an editor's use) are
// read only by what shows them: the editor groupings, the timeline's
// projects and search; a summary by app or a history reads none.
func TestEditorBucketsReadOnlyWhenUsed(t *testing.T) {
	var (
		mu    sync.Mutex
		reads int
	)
	rec, s := realService(t, "editor", func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "vscode") || strings.Contains(r.URL.Path, "jetbrains") {
				if strings.HasSuffix(r.URL.Path, "/events") {
					mu.Lock()
					reads++
					mu.Unlock()
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	day := rec.Periods[0]
	start, end := day.Start.Format(time.RFC3339), day.End.Format(time.RFC3339)
	editorReads := func(call func() error) int {
		t.Helper()
		mu.Lock()
		reads = 0
		mu.Unlock()
		if err := call(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return reads
	}
	summary := func(g string) func() error {
		return func() error {
			_, err := s.Summary(t.Context(), activity.SummaryQuery{Start: start, End: end, GroupBy: g})
			return err
		}
	}
	if n := editorReads(summary(activity.GroupByApp)); n != 0 {
		t.Errorf("a summary by app read the editor buckets %d times", n)
	}
	if n := editorReads(func() error {
		_, err := s.History(t.Context(), activity.HistoryQuery{Start: start, End: end})
		return err
	}); n != 0 {
		t.Errorf("a history read the editor buckets %d times", n)
	}
	if n := editorReads(summary(activity.GroupByProject)); n == 0 {
		t.Error("a summary by project read no editor bucket")
	}
}
