package activity

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// requestLog records every request sent to the simulator (method, path and
// query).
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reqs
	l.reqs = nil
	return r
}

// counts is how many of reqs are event counts and event reads.
func counts(reqs []string) (count, events int) {
	for _, r := range reqs {
		switch path, _, _ := strings.Cut(strings.TrimPrefix(r, "GET "), "?"); {
		case strings.HasSuffix(path, "/events/count"):
			count++
		case strings.HasSuffix(path, "/events"):
			events++
		}
	}
	return count, events
}

// deleteEvents deletes bucket's stored events starting within [from, to),
// as the web UI does (one DELETE per event), and returns how many.
func deleteEvents(t *testing.T, env *simEnv, bucket string, from, to time.Time) int {
	t.Helper()
	evs, err := env.client.Events(t.Context(), bucket, aw.EventQuery{Start: from, End: to})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Timestamp.Before(from) || e.ID == nil {
			continue
		}
		req, _ := http.NewRequest(http.MethodDelete, env.srv.URL+"/api/0/buckets/"+url.PathEscape(bucket)+"/events/"+strconv.FormatInt(*e.ID, 10), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("delete: %s", resp.Status)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no events of %s in [%v, %v) to delete", bucket, from, to)
	}
	return n
}

// TestRevalidateSeesDeletedEvents: a person deletes events of a closed day
// in the web UI after serve answered. A call within Revalidate of the last
// read makes no extra request (and still shows them); once Revalidate has
// passed, the next call counts the kept days (one count per bucket, per
// day only for the bucket that changed), reads the changed day again,
// recomputes its units, and answers as a cold read does. The same again
// for a deletion after the first check (against the recorded count).
func TestRevalidateSeesDeletedEvents(t *testing.T) {
	log := &requestLog{}
	env := newSimEnv(t, envOptions{week: smallWeek, fresh: true, wrap: log.wrap})
	loc := env.h.Start.Location()
	// Sunday afternoon: Monday to Saturday are closed days.
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, loc)}
	warm := newService(t, env, clk, ServiceOptions{})
	cold := newService(t, env, clk, ServiceOptions{cacheBytes: -1})
	ctx := context.Background()
	week := func(s *Service) *Summary {
		t.Helper()
		sum, err := s.Summary(ctx, SummaryQuery{Period: "this_week", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	before := week(warm)
	_ = answers(t, warm, "this_week") // every tool's units kept
	log.take()

	// Wednesday 10:00-12:00 deleted from the window bucket.
	deleteEvents(t, env, env.h.Window.ID, time.Date(2026, 3, 25, 10, 0, 0, 0, loc), time.Date(2026, 3, 25, 12, 0, 0, 0, loc))

	clk.set(clk.now().Add(time.Minute))
	week(warm)
	if n, _ := counts(log.take()); n != 0 {
		t.Errorf("a call within Revalidate sent %d event counts, want none", n)
	}

	clk.set(clk.now().Add(DefaultRevalidate))
	after := week(warm)
	reqs := log.take()
	nc, _ := counts(reqs)
	// One count per bucket (4), then Monday to Saturday of the window
	// bucket (6).
	if nc != 4+6 {
		t.Errorf("the call after Revalidate sent %d event counts, want 10: %v", nc, reqs)
	}
	for _, r := range reqs {
		if strings.HasSuffix(strings.SplitN(r, "?", 2)[0], "/events") && !strings.Contains(r, "start=2026-03-29") &&
			!(strings.Contains(r, "window") && strings.Contains(r, "start=2026-03-2")) {
			t.Errorf("read of a day that did not change: %s", r)
		}
	}
	if after.ActiveS >= before.ActiveS {
		t.Errorf("active time %v s after deleting two hours, before %v s", after.ActiveS, before.ActiveS)
	}
	if w, c := answers(t, warm, "this_week"), answers(t, cold, "this_week"); w != c {
		t.Errorf("after the deletion, warm and cold answers differ:\nwarm %.600s\ncold %.600s", w, c)
	}
	clk.set(clk.now().Add(time.Minute))
	week(warm)
	if n, _ := counts(log.take()); n != 0 {
		t.Errorf("a call within Revalidate of the check sent %d event counts, want none", n)
	}

	// Thursday afternoon's AFK events deleted after the first check.
	deleteEvents(t, env, env.h.AFK.ID, time.Date(2026, 3, 26, 14, 0, 0, 0, loc), time.Date(2026, 3, 26, 16, 0, 0, 0, loc))
	clk.set(clk.now().Add(DefaultRevalidate))
	if w, c := answers(t, warm, "this_week"), answers(t, cold, "this_week"); w != c {
		t.Errorf("after the second deletion, warm and cold answers differ:\nwarm %.600s\ncold %.600s", w, c)
	}
	// Nothing changed since: one count per bucket, no read of a closed day.
	log.take()
	clk.set(clk.now().Add(DefaultRevalidate))
	week(warm)
	if nc, ne := counts(log.take()); nc != 4 || ne != 4 {
		t.Errorf("a check finding nothing changed sent %d counts and %d reads, want 4 and 4 (the open day)", nc, ne)
	}
}
