package activity

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/upstream"
)

// reviewDesktop is an empty simulator of host "testhost" with a window, an
// AFK and a Chrome bucket, whose clock stands at now.
func reviewDesktop(t *testing.T, now time.Time) (*simEnv, *clock) {
	t.Helper()
	clk := &clock{t: now}
	sim := awsim.New(awsim.Options{Hostname: "testhost", Now: clk.now})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	env := &simEnv{srv: srv, sim: sim}
	for _, b := range []struct{ id, typ string }{
		{"aw-watcher-window_testhost", aw.TypeWindow}, {"aw-watcher-afk_testhost", aw.TypeAFK}, {"aw-watcher-web-chrome_testhost", aw.TypeWeb}} {
		createBucket(t, env, b.id, b.typ)
	}
	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	env.client = c
	env.src = upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: time.Minute})
	return env, clk
}

func reviewService(env *simEnv, clk *clock, o ServiceOptions) *Service {
	o.AW, o.Source, o.Now = env.client, env.src, clk.now
	if o.Zone == nil {
		o.Zone = utc
	}
	return NewService(o)
}

// TestReviewTimelineCursorSubMillisecondBlockEnd: aw-watcher-afk stores
// durations to the microsecond (seconds since the last input, a float), so
// active time, and with it a focus block, can end between two
// milliseconds. The cursor keeps its position in whole milliseconds only.
// A client paging with limit 1 gets, after the block ending at
// 09:20:00.0005, a page holding a 0.0 s sliver of that same block whose
// cursor points at the same place again: the cursor never ends, a client
// that follows next_cursor loops forever, and the AFK gap after it is
// never reached. Expected: pages
// joined by their cursors are exactly the whole timeline (e.g. keep the
// position in microseconds in the cursor, or resume at the first block
// whose end is after the position rounded up).
func TestReviewTimelineCursorSubMillisecondBlockEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, at.Add(time.Hour))
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	// Active for 20 min and half a millisecond, then away for the rest.
	insert(t, env, "aw-watcher-afk_testhost",
		ev1(m(0), 1200.0005, `{"status":"not-afk"}`),
		ev1(m(0).Add(1200000500*time.Microsecond), 2399.9995, `{"status":"afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(m(0), 600, `{"app":"Code","title":"main.go"}`),
		ev1(m(10), 1800, `{"app":"Slack","title":"general"}`))
	s := reviewService(env, clk, ServiceOptions{})
	zero := 0
	whole, err := s.Timeline(ctx, TimelineQuery{Period: "last_1h", MinBlockS: &zero, Limit: MaxTimelineLimit})
	if err != nil {
		t.Fatal(err)
	}
	var paged []Block
	q := TimelineQuery{Period: "last_1h", MinBlockS: &zero, Limit: 1}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatalf("more than 20 pages for %d blocks: the cursor repeats itself (so far %d blocks, the last %+v)", len(whole.Blocks), len(paged), paged[len(paged)-1])
		}
		page, err := s.Timeline(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page.Blocks...)
		if page.NextCursor == "" {
			break
		}
		q = TimelineQuery{Cursor: page.NextCursor, Limit: 1}
	}
	a, _ := json.Marshal(whole.Blocks)
	p, _ := json.Marshal(paged)
	if string(a) != string(p) {
		t.Errorf("the pages differ from the whole timeline:\nwhole %s\npages %s", a, p)
	}
}
