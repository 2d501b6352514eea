package activity

import (
	"context"
	"testing"
	"time"
)

// TestReviewLateAFKEventAfterReread: aw-watcher-afk reports "afk" only
// once its timeout has passed without input, dated back to the last input
// (aw-watcher-afk's ping(afk, timestamp=last_input, duration=
// seconds_since_input)); its timeout is a setting people raise (10 min
// here). The service takes everything older than Reread (3 min) before
// its last read as final, so a serve that answered a call just before the
// afk event arrived keeps, for the rest of the day, only the part of the
// away time after its cut: a user asking "today" sees 4 min away where
// ActivityWatch (and a fresh awbridge stdio) says 10 min. Expected: a warm
// answer equals a cold one once the event is stored (e.g. re-read the
// AFK bucket from the start of its newest event, or from the bucket's
// last_updated minus the event's length).
func TestReviewLateAFKEventAfterReread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	env, clk := reviewDesktop(t, m(69))
	insert(t, env, "aw-watcher-afk_testhost", ev1(m(0), 69*60, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost", ev1(m(0), 69*60, `{"app":"Code","title":"a"}`))
	warm := reviewService(env, clk, ServiceOptions{})
	if _, err := warm.Summary(ctx, SummaryQuery{Period: "today"}); err != nil {
		t.Fatal(err)
	}
	// 10:10: no input since 10:00, the watcher's 10 min timeout passes.
	clk.set(m(70))
	insert(t, env, "aw-watcher-afk_testhost", ev1(m(60).Add(time.Millisecond), 600, `{"status":"afk"}`))
	clk.set(m(71))
	w, err := warm.Summary(ctx, SummaryQuery{Period: "today"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := reviewService(env, clk, ServiceOptions{}).Summary(ctx, SummaryQuery{Period: "today"})
	if err != nil {
		t.Fatal(err)
	}
	if w.AFKS != c.AFKS || w.ActiveS != c.ActiveS {
		t.Errorf("serve (warm) says %v s away, %v s active; a fresh read says %v s away, %v s active", w.AFKS, w.ActiveS, c.AFKS, c.ActiveS)
	}
}
