package activity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// readLog records the event reads sent to the simulator: bucket and
// start of each.
type readLog struct {
	mu    sync.Mutex
	reads []string
	start []time.Time
}

func (l *readLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") && r.Method == http.MethodGet {
			st, _ := time.Parse(time.RFC3339Nano, r.URL.Query().Get("start"))
			l.mu.Lock()
			l.reads = append(l.reads, r.URL.Path)
			l.start = append(l.start, st)
			l.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (l *readLog) take() ([]string, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, s := l.reads, l.start
	l.reads, l.start = nil, nil
	return r, s
}

// answers renders the three tools' results for a period, without the
// freshness (when it was read) so that two reads compare.
func answers(t *testing.T, s *Service, period string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, g := range []string{GroupByApp, GroupByTitle, GroupByDomain, GroupByCategory} {
		sum, err := s.Summary(ctx, SummaryQuery{Period: period, GroupBy: g, Limit: 50, IncludeAFK: g == GroupByApp})
		if err != nil {
			t.Error(err) // not Fatal: it runs in goroutines too
			return ""
		}
		sum.Freshness, sum.Source = Freshness{}, Source{}
		j, _ := json.Marshal(sum)
		b.Write(j)
	}
	zero := 0
	tl, err := s.Timeline(ctx, TimelineQuery{Period: period, Limit: MaxTimelineLimit, MinBlockS: &zero})
	if err != nil {
		t.Error(err)
		return ""
	}
	tl.Freshness, tl.Source, tl.NextCursor = Freshness{}, Source{}, ""
	j, _ := json.Marshal(tl)
	b.Write(j)
	h, err := s.History(ctx, HistoryQuery{Period: period, Limit: MaxHistoryLimit})
	if err != nil {
		t.Error(err)
		return ""
	}
	h.Freshness, h.Source = Freshness{}, Source{}
	j, _ = json.Marshal(h)
	b.Write(j)
	return b.String()
}

// TestWarmEqualsCold: answers from the store (closed days, units, the
// open day read incrementally) equal those of a service that keeps
// nothing, for every period, on every tool; and a repeated this_week
// reads only the open day's newest minutes.
func TestWarmEqualsCold(t *testing.T) {
	log := &readLog{}
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: log.wrap})
	// Sunday afternoon, inside a session: today is open, split in hours.
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, env.h.Start.Location())}
	warm := newService(t, env, clk, ServiceOptions{})
	cold := newService(t, env, clk, ServiceOptions{cacheBytes: -1})
	periods := []string{"this_week", "today", "yesterday", "last_week", "last_2h", "last_3d"}
	for _, p := range periods {
		_ = answers(t, warm, p) // fill the store
	}
	for _, p := range periods {
		if w, c := answers(t, warm, p), answers(t, cold, p); w != c {
			t.Errorf("%s: warm and cold answers differ:\nwarm %.600s\ncold %.600s", p, w, c)
		}
	}
	log.take()
	if _, err := warm.Summary(context.Background(), SummaryQuery{Period: "this_week"}); err != nil {
		t.Fatal(err)
	}
	reads, starts := log.take()
	if len(reads) != 4 {
		t.Errorf("a repeated this_week read %d times, want one read per bucket: %v", len(reads), reads)
	}
	// Each read starts Reread before the last one, or at the start of the
	// bucket's newest event when that is earlier (an event dated back,
	// like the AFK watcher's "afk", can only follow it): in the generated
	// week no event lasts an hour.
	for i, st := range starts {
		if age := clk.now().Sub(st); age > time.Hour {
			t.Errorf("a repeated this_week read %s from %v, %v before now: only the newest minutes need reading", reads[i], st, age)
		}
	}

	// The clock moves on: the open day's newest part is read; the answers
	// still equal a cold read's.
	clk.set(clk.now().Add(47 * time.Minute))
	for _, p := range periods {
		if w, c := answers(t, warm, p), answers(t, cold, p); w != c {
			t.Errorf("%s, later: warm and cold answers differ", p)
		}
	}
	// Past midnight and the day start: Sunday closes and becomes one unit.
	clk.set(time.Date(2026, 3, 30, 9, 0, 0, 0, env.h.Start.Location()))
	for _, p := range []string{"yesterday", "last_7d", "last_week"} {
		if w, c := answers(t, warm, p), answers(t, cold, p); w != c {
			t.Errorf("%s, next day: warm and cold answers differ", p)
		}
	}
}

// insert stores events in a simulator bucket as aw-client does.
func insert(t *testing.T, env *simEnv, bucket string, events ...string) {
	t.Helper()
	resp, err := http.Post(env.srv.URL+"/api/0/buckets/"+url.PathEscape(bucket)+"/events", "application/json",
		strings.NewReader("["+strings.Join(events, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %s", resp.Status)
	}
}

// heartbeat sends a watcher's heartbeat.
func heartbeat(t *testing.T, env *simEnv, bucket, event string) {
	t.Helper()
	resp, err := http.Post(env.srv.URL+"/api/0/buckets/"+url.PathEscape(bucket)+"/heartbeat?pulsetime=60", "application/json",
		strings.NewReader(event))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("heartbeat: %s", resp.Status)
	}
}

func ev1(at time.Time, dur float64, data string) string {
	return fmt.Sprintf(`{"timestamp":%q,"duration":%g,"data":%s}`, at.UTC().Format(time.RFC3339Nano), dur, data)
}

// TestOpenDayIncremental: an event stored after a call appears on the
// next, an event growing by heartbeats shows its new length, and one a
// watcher delivers late (dated before the last read) appears, while the
// store keeps what it read.
func TestOpenDayIncremental(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, fresh: true})
	clk := &clock{t: env.h.End.Add(10 * time.Minute)}
	s := newService(t, env, clk, ServiceOptions{})
	ctx := context.Background()
	top := func() map[string]float64 {
		t.Helper()
		sum, err := s.Summary(ctx, SummaryQuery{Period: "this_week", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return got(sum.Top, false)
	}
	before := top()
	if before["Zed"] != 0 {
		t.Fatal("Zed before it was used")
	}
	at := clk.now().Add(time.Minute)
	insert(t, env, env.h.AFK.ID, ev1(at, 600, `{"status":"not-afk"}`))
	zed := func(s int) {
		heartbeat(t, env, env.h.Window.ID, ev1(at.Add(time.Duration(s)*time.Second), 0, `{"app":"Zed","title":"main.rs"}`))
	}
	for s := 0; s <= 90; s += 30 {
		zed(s)
	}
	clk.set(at.Add(2 * time.Minute))
	if got := top()["Zed"]; got != 90 {
		t.Errorf("after 90 s in Zed the summary says %v s", got)
	}
	// The heartbeats go on: the same event grows.
	zed(120)
	zed(150)
	clk.set(at.Add(3 * time.Minute))
	after := top()
	if after["Zed"] != 150 {
		t.Errorf("after 150 s in Zed the summary says %v s", after["Zed"])
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed from %v to %v", k, v, after[k])
		}
	}
	// A watcher delivers late: an event before the last read appears.
	insert(t, env, env.h.Window.ID, ev1(at.Add(160*time.Second), 10, `{"app":"Helix","title":"notes.md"}`))
	clk.set(at.Add(4 * time.Minute))
	if got := top()["Helix"]; got != 10 {
		t.Errorf("an event delivered late (10 s in Helix) reads %v s", got)
	}
}

// TestStoreBounded: a store far too small for a week still answers as a
// cold read does, within its bound.
func TestStoreBounded(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, env.h.Start.Location())}
	small := newService(t, env, clk, ServiceOptions{cacheBytes: 256 << 10})
	cold := newService(t, env, clk, ServiceOptions{cacheBytes: -1})
	for range 2 {
		if w, c := answers(t, small, "this_week"), answers(t, cold, "this_week"); w != c {
			t.Errorf("a small store answers differently")
		}
	}
	if n := small.store.bytes; n > 256<<10 {
		t.Errorf("the store holds %d bytes, over its bound", n)
	}
	// Days beyond CacheDays are not kept.
	old := newService(t, env, &clock{t: time.Date(2026, 4, 20, 12, 0, 0, 0, env.h.Start.Location())}, ServiceOptions{})
	if _, err := old.Summary(context.Background(), SummaryQuery{Start: "2026-03-23T00:00:00+01:00", End: "2026-03-30T00:00:00+02:00"}); err != nil {
		t.Fatal(err)
	}
	if n := len(old.store.entries); n != 0 {
		t.Errorf("days older than 14 days were kept: %d days and units", n)
	}
}

// TestProgressByDay: a cold week reports progress per day read and unit
// computed, never going back, ending at its total, with fixed messages.
func TestProgressByDay(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: env.now}
	s := newService(t, env, clk, ServiceOptions{})
	type step struct {
		done, total float64
		msg         string
	}
	var (
		mu    sync.Mutex
		steps []step
	)
	_, err := s.Summary(context.Background(), SummaryQuery{Period: "this_week", Progress: func(done, total float64, msg string) {
		mu.Lock()
		steps = append(steps, step{done, total, msg})
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	// 7 days read, 6 closed days and the open day's hours computed.
	if len(steps) < 7+6 {
		t.Fatalf("%d progress reports: %+v", len(steps), steps)
	}
	last := steps[len(steps)-1]
	if last.done != last.total {
		t.Errorf("progress ends at %v of %v", last.done, last.total)
	}
	for i, st := range steps {
		if i > 0 && st.done < steps[i-1].done {
			t.Errorf("progress went back: %+v after %+v", st, steps[i-1])
		}
		if st.msg != "reading ActivityWatch's events by day" && st.msg != "computing the period" {
			t.Errorf("progress message %q", st.msg)
		}
	}
}

// TestConcurrentCalls: calls at once on one service (sharing its store,
// reading the open day together) answer as a cold read does.
func TestConcurrentCalls(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	cold := newService(t, env, clk, ServiceOptions{cacheBytes: -1})
	want := map[string]string{}
	periods := []string{"this_week", "today", "yesterday"}
	for _, p := range periods {
		want[p] = answers(t, cold, p)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			p := periods[i%len(periods)]
			if got := answers(t, s, p); got != want[p] {
				t.Errorf("%s: a concurrent answer differs from a cold one", p)
			}
		})
	}
	wg.Wait()
}

// TestBucketCreatedAgain: a bucket deleted and created again under the
// same id is read anew, not answered from the days kept of the old one.
func TestBucketCreatedAgain(t *testing.T) {
	env, clk := privateDesktop(t)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc})
	ctx := context.Background()
	clk.set(clk.now().Add(24 * time.Hour)) // the desktop's day is closed and kept
	q := SummaryQuery{Period: "yesterday"}
	if sum, err := s.Summary(ctx, q); err != nil || got(sum.Top, false)["Code"] != 1200 {
		t.Fatalf("before: %v %+v", err, sum)
	}
	req, _ := http.NewRequest(http.MethodDelete, env.srv.URL+"/api/0/buckets/aw-watcher-window_testhost?force=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	clk.set(clk.now().Add(time.Minute))
	createBucket(t, env, "aw-watcher-window_testhost", "currentwindow")
	insert(t, env, "aw-watcher-window_testhost", ev1(time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC), 60, `{"app":"Zed","title":"x"}`))
	sum, err := s.Summary(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if apps := got(sum.Top, false); apps["Zed"] != 60 || apps["Code"] != 0 {
		t.Errorf("after the bucket was created again: %v", apps)
	}
}

// TestSplitReadsAnswerAlike: days whose answers exceed the client's body
// limit are read in halves and joined again; the answers equal those of
// whole reads.
func TestSplitReadsAnswerAlike(t *testing.T) {
	whole := newSimEnv(t, envOptions{week: smallWeek})
	split := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 48 << 10}})
	clk := &clock{t: time.Date(2026, 3, 29, 15, 30, 0, 0, whole.h.Start.Location())}
	a := newService(t, whole, clk, ServiceOptions{cacheBytes: -1})
	b := newService(t, split, clk, ServiceOptions{cacheBytes: -1})
	for _, p := range []string{"this_week", "today"} {
		if x, y := answers(t, a, p), answers(t, b, p); x != y {
			t.Errorf("%s: split reads answer differently", p)
		}
	}
}

// TestLateAFKEventAfterReread: aw-watcher-afk reports "afk" only
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
func TestLateAFKEventAfterReread(t *testing.T) {
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
