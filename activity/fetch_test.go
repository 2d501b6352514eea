package activity

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/upstream"
)

// want is what a bucket's events within p must read as: the generated
// events overlapping p, clipped to it, oldest first.
func want(b *activitytest.Bucket, p Period) []aw.Event {
	var out []aw.Event
	for _, e := range b.Events {
		if c, ok := clip(e, p.Start, p.End); ok {
			out = append(out, c)
		}
	}
	return out
}

// sameEvents compares events as a person would notice: times to the
// microsecond and the same data.
func sameEvents(t *testing.T, what string, got, want []aw.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		var gd, wd any
		_ = json.Unmarshal(g.Data, &gd)
		_ = json.Unmarshal(w.Data, &wd)
		if g.Timestamp.Sub(w.Timestamp).Abs() > time.Microsecond || math.Abs(g.Duration-w.Duration) > 1e-6 || !reflect.DeepEqual(gd, wd) {
			t.Fatalf("%s event %d: got %v +%v %s, want %v +%v %s", what, i, g.Timestamp, g.Duration, g.Data, w.Timestamp, w.Duration, w.Data)
		}
	}
}

// cutPeriod is a period of the small week cut inside sessions at both
// ends, on a calendar whose days start at noon: every day boundary cuts
// events that the read must join again.
func cutPeriod(t *testing.T, env *simEnv) Period {
	t.Helper()
	c := NewCalendar(Zone{Name: "Europe/Berlin", Loc: env.h.Start.Location()}, aw.Settings{StartOfDay: "12:00"})
	loc := env.h.Start.Location()
	start := time.Date(2026, 3, 23, 10, 0, 0, 0, loc).Format(time.RFC3339)
	end := time.Date(2026, 3, 29, 12, 30, 0, 123e6, loc).Format(time.RFC3339Nano)
	return resolve(t, c, "", start, end, env.now)
}

// TestEventsMatchHistory reads a week cut into noon-to-noon days from the
// simulator and gets exactly the generated events clipped to the period:
// nothing lost, nothing doubled at the day boundaries, the spring change
// included; it names the host and buckets read with their freshness.
func TestEventsMatchHistory(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	ctx := t.Context()
	m, err := env.f.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := cutPeriod(t, env)
	days := p.Days()
	if len(days) != 8 {
		t.Fatalf("%d days: %v", len(days), days)
	}
	raw, err := env.f.Events(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "window", raw.Window, want(env.h.Window, p))
	sameEvents(t, "afk", raw.AFK, want(env.h.AFK, p))
	if len(raw.Web) != 2 {
		t.Fatalf("%d web buckets read, want chrome and firefox", len(raw.Web))
	}
	for _, w := range raw.Web {
		b := env.h.Chrome
		if strings.Contains(w.Bucket, "firefox") {
			b = env.h.Firefox
		}
		sameEvents(t, w.Bucket, w.Events, want(b, p))
	}
	if raw.Requests != 8*4 {
		t.Errorf("%d reads, want 8 days x 4 buckets", raw.Requests)
	}
	if raw.Source.Host != "testhost" || raw.Source.HostSource != nowframe.HostFromAWHostname {
		t.Errorf("source %+v", raw.Source)
	}
	roles := []string{}
	for _, b := range raw.Source.Buckets {
		roles = append(roles, b.Role)
		var gen *activitytest.Bucket
		for _, g := range env.h.Buckets() {
			if g.ID == b.ID {
				gen = g
			}
		}
		newest := gen.Events[len(gen.Events)-1].End()
		if b.NewestEnd == nil || !b.NewestEnd.Equal(newest) || b.AgeS == nil || *b.AgeS != math.Round(env.now.Sub(newest).Seconds()*10)/10 {
			t.Errorf("%s: newest %v age %v, want %v", b.ID, b.NewestEnd, b.AgeS, newest)
		}
		if !b.Stale || b.Unreadable || b.Events == 0 {
			t.Errorf("%s: %+v (the watchers stopped an hour ago: stale)", b.ID, b)
		}
	}
	if !reflect.DeepEqual(roles, []string{RoleWindow, RoleAFK, RoleWeb, RoleWeb}) {
		t.Errorf("roles %v", roles)
	}
	if len(raw.Freshness.StaleWatchers) != 4 || !raw.Freshness.AsOf.Equal(env.now) {
		t.Errorf("freshness %+v", raw.Freshness)
	}
	if st := env.src.Status(); !st.OK || st.ConsecutiveFailures != 0 {
		t.Errorf("source status %+v", st)
	}
}

// TestEventsSplitsTooLargeDays reads with a body limit smaller than a
// day's answer: the days are halved and read again, the result is the
// same, and the breaker counts no failure.
func TestEventsSplitsTooLargeDays(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 48 << 10}})
	ctx := t.Context()
	m, err := env.f.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := cutPeriod(t, env)
	raw, err := env.f.Events(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "window", raw.Window, want(env.h.Window, p))
	for _, w := range raw.Web {
		b := env.h.Chrome
		if strings.Contains(w.Bucket, "firefox") {
			b = env.h.Firefox
		}
		sameEvents(t, w.Bucket, w.Events, want(b, p))
	}
	if raw.Requests <= 8*4 {
		t.Errorf("%d reads: no day was split", raw.Requests)
	}
	if st := env.src.Status(); !st.OK || st.ConsecutiveFailures != 0 {
		t.Errorf("source status %+v after splitting", st)
	}

	// A limit no split can meet fails with the client's TooLarge.
	tiny := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 1 << 10},
		fetcher: FetcherOptions{MinSplit: 6 * time.Hour}})
	m, err = tiny.f.Meta(ctx)
	if err == nil {
		_, err = tiny.f.Events(ctx, m, cutPeriod(t, tiny))
	}
	var ue *UnreadableError
	if aw.KindOf(err) != aw.TooLarge || (m != nil && !errors.As(err, &ue)) {
		t.Errorf("err = %v, want a too-large read", err)
	}
}

// countingWrap counts requests to event reads and the most in flight at
// once; until `barrier` reads are in flight together, each waits (so a
// fetcher that never reads in parallel would stall, not pass).
type countingWrap struct {
	barrier  int
	mu       sync.Mutex
	inflight int
	max      int
	total    int
	release  chan struct{}
	once     sync.Once
}

func (cw *countingWrap) wrap(next http.Handler) http.Handler {
	cw.release = make(chan struct{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/events") {
			next.ServeHTTP(w, r)
			return
		}
		cw.mu.Lock()
		cw.inflight++
		cw.total++
		cw.max = max(cw.max, cw.inflight)
		if cw.inflight >= cw.barrier {
			cw.once.Do(func() { close(cw.release) })
		}
		cw.mu.Unlock()
		select {
		case <-cw.release:
		case <-r.Context().Done():
		}
		next.ServeHTTP(w, r)
		cw.mu.Lock()
		cw.inflight--
		cw.mu.Unlock()
	})
}

// TestEventsParallelismBounded checks reads run in parallel, never more
// than Parallel at once.
func TestEventsParallelismBounded(t *testing.T) {
	for _, parallel := range []int{1, 3, 4} {
		cw := &countingWrap{barrier: parallel}
		env := newSimEnv(t, envOptions{week: smallWeek, wrap: cw.wrap, fetcher: FetcherOptions{Parallel: parallel}})
		m, err := env.f.Meta(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.f.Events(t.Context(), m, cutPeriod(t, env)); err != nil {
			t.Fatal(err)
		}
		if cw.max != parallel || cw.total != 32 {
			t.Errorf("parallel %d: at most %d reads at once (of %d)", parallel, cw.max, cw.total)
		}
	}
}

// faultWrap answers event reads of buckets whose id contains match with
// status (and an ActivityWatch error body), counting them.
func faultWrap(match string, status int, hits *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, match) && strings.HasSuffix(r.URL.Path, "/events") {
				hits.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"message": "injected"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestEventsWebBucketUnreadable checks a browser bucket that fails is
// marked unreadable and left out, and the rest is read.
func TestEventsWebBucketUnreadable(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("firefox", http.StatusInternalServerError, &hits),
		client: aw.Options{RetryMax: -1}})
	m, err := env.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := cutPeriod(t, env)
	raw, err := env.f.Events(t.Context(), m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Web) != 1 || !strings.Contains(raw.Web[0].Bucket, "chrome") {
		t.Fatalf("web buckets read: %+v", raw.Web)
	}
	sameEvents(t, "window", raw.Window, want(env.h.Window, p))
	var ff BucketRead
	for _, b := range raw.Source.Buckets {
		if strings.Contains(b.ID, "firefox") {
			ff = b
		}
	}
	if !ff.Unreadable || ff.Events != 0 || !strings.Contains(raw.Source.Note, "browser bucket could not be read") {
		t.Errorf("firefox %+v, note %q", ff, raw.Source.Note)
	}
	if strings.Contains(raw.Source.Note, "firefox") {
		t.Errorf("the note names a bucket: %q", raw.Source.Note)
	}
}

// TestEventsWindowBucketGone checks a window bucket that vanished since
// Meta fails the read with an *UnreadableError naming it, whose cause is
// the client's NotFound.
func TestEventsWindowBucketGone(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("aw-watcher-window", http.StatusNotFound, &hits)})
	m, err := env.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.f.Events(t.Context(), m, cutPeriod(t, env))
	var ue *UnreadableError
	var ne *upstream.Error
	if !errors.As(err, &ue) || len(ue.Buckets) != 1 || ue.Buckets[0] != env.h.Window.ID || aw.KindOf(err) != aw.NotFound || !errors.As(err, &ne) {
		t.Fatalf("err = %v (%T), want an UnreadableError of the window bucket", err, err)
	}
	if hits.Load() > 8 {
		t.Errorf("%d reads of the missing bucket: the read went on after it failed", hits.Load())
	}
}

// TestEventsThroughBreaker checks reads go through the source: a server
// failing every event read opens its circuit, and then a read is refused
// without touching the server.
func TestEventsThroughBreaker(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("/api/0/buckets/", http.StatusServiceUnavailable, &hits),
		client: aw.Options{RetryMax: -1}})
	m, err := env.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := cutPeriod(t, env)
	for i := 0; i < 3 && env.src.Circuit() != upstream.Open; i++ {
		if _, err := env.f.Events(t.Context(), m, p); err == nil {
			t.Fatal("a read of a failing server succeeded")
		}
	}
	if env.src.Circuit() != upstream.Open {
		t.Fatalf("circuit %v after repeated failures", env.src.Circuit())
	}
	// Reads the failed call cancelled may still reach the server's
	// handler after it returned (the request was already on the wire):
	// at most the parallel reads of that call. Refused reads add none.
	before := hits.Load()
	var ue *upstream.Error
	for range 3 {
		_, err = env.f.Events(t.Context(), m, p)
		if !errors.As(err, &ue) || ue.Code != upstream.CodeCircuitOpen {
			t.Errorf("err = %v, want CircuitOpen", err)
		}
	}
	if more := hits.Load() - before; more > DefaultParallel {
		t.Errorf("%d more reads reached the server with the circuit open", more)
	}
	if _, err := env.f.Meta(t.Context()); !errors.As(err, &ue) || ue.Code != upstream.CodeCircuitOpen {
		t.Errorf("Meta with the circuit open: %v", err)
	}
}

// TestEventsCallerGoesAway checks a cancelled read returns the context's
// error and does not count against ActivityWatch.
func TestEventsCallerGoesAway(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan struct{})
	var once sync.Once
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				once.Do(func() { close(first) })
				<-r.Context().Done() // hang until the caller leaves
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: wrap})
	m, err := env.f.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-first
		cancel()
	}()
	_, err = env.f.Events(ctx, m, cutPeriod(t, env))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if st := env.src.Status(); !st.OK || st.ConsecutiveFailures != 0 {
		t.Errorf("status %+v: a caller leaving counted against ActivityWatch", st)
	}
}

// TestMetaSettings checks Meta reads ActivityWatch's settings into the
// calendar, and that a server without the settings endpoint still works
// with the web UI's defaults.
func TestMetaSettings(t *testing.T) {
	env := newSimEnv(t, envOptions{week: activitytest.WeekOptions{WindowEvents: 500, Days: 2}, fresh: true})
	for key, val := range map[string]string{"startOfDay": `"05:30"`, "startOfWeek": `"Sunday"`} {
		resp, err := http.Post(env.srv.URL+"/api/0/settings/"+key, "application/json", strings.NewReader(val))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	m, err := env.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := m.Calendar(zone(t, "Europe/Berlin"))
	if m.SettingsErr != nil || c.DayStart != 5*time.Hour+30*time.Minute || c.WeekStart != time.Sunday ||
		c.DayStartSource != FromActivityWatch || c.WeekStartSource != FromActivityWatch {
		t.Errorf("calendar %+v, settings error %v", c, m.SettingsErr)
	}
	if m.Selection.Window != env.h.Window.ID || len(m.Selection.Web) != 2 {
		t.Errorf("selection %+v", m.Selection)
	}

	noSettings := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/0/settings") {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte("<html>404</html>"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	old := newSimEnv(t, envOptions{week: smallWeek, wrap: noSettings})
	m, err = old.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c = m.Calendar(zone(t, "UTC"))
	if aw.KindOf(m.SettingsErr) != aw.HTTPStatus || c.DayStart != DefaultDayStart || c.DayStartSource != FromDefault {
		t.Errorf("calendar %+v, settings error %v", c, m.SettingsErr)
	}
	if st := old.src.Status(); !st.OK {
		t.Errorf("a missing settings endpoint failed the source: %+v", st)
	}
}

// TestAssemble covers clipping and joining at piece boundaries: the 1 ms
// the server adds to a range's end, events without duration, and parts
// joined only when they carry the same id.
func TestAssemble(t *testing.T) {
	base := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	id := func(n int64) *int64 { return &n }
	ev := func(i *int64, start, dur float64) aw.Event {
		return aw.Event{ID: i, Timestamp: at(start), Duration: dur, Data: json.RawMessage(`{}`)}
	}
	p := Period{Start: at(0), End: at(100)}
	a, b := Span{Start: at(0), End: at(50)}, Span{Start: at(50), End: at(100)}
	tests := []struct {
		name   string
		pieces []piece
		want   []aw.Event
	}{
		{"an event cut by the split is whole again",
			[]piece{{span: a, events: []aw.Event{ev(id(2), 40, 10.001), ev(id(1), 0, 40)}}, {span: b, events: []aw.Event{ev(id(3), 60, 40.001), ev(id(2), 50, 10)}}},
			[]aw.Event{ev(id(1), 0, 40), ev(id(2), 40, 20), ev(id(3), 60, 40)}},
		{"without ids the parts stay apart",
			[]piece{{span: a, events: []aw.Event{ev(nil, 40, 10.001)}}, {span: b, events: []aw.Event{ev(nil, 50, 10)}}},
			[]aw.Event{ev(nil, 40, 10), ev(nil, 50, 10)}},
		{"different ids stay apart",
			[]piece{{span: a, events: []aw.Event{ev(id(1), 40, 10.001)}}, {span: b, events: []aw.Event{ev(id(2), 50, 10)}}},
			[]aw.Event{ev(id(1), 40, 10), ev(id(2), 50, 10)}},
		{"the period clips both ends; events only touching it are dropped",
			[]piece{{span: Span{Start: at(-10), End: at(50)}, events: []aw.Event{ev(id(2), -5, 10), ev(id(1), -10, 5)}},
				{span: Span{Start: at(50), End: at(110)}, events: []aw.Event{ev(id(4), 100, 10), ev(id(3), 95, 10)}}},
			[]aw.Event{ev(id(2), 0, 5), ev(id(3), 95, 5)}},
		{"an event without duration counts where it starts",
			[]piece{{span: a, events: []aw.Event{ev(id(1), 50, 0), ev(id(9), 0, 0)}}, {span: b, events: []aw.Event{ev(id(1), 50, 0)}}},
			[]aw.Event{ev(id(9), 0, 0), ev(id(1), 50, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assemble(tt.pieces, p)
			sameEvents(t, tt.name, got, tt.want)
			for i := range got {
				if (got[i].ID == nil) != (tt.want[i].ID == nil) || got[i].ID != nil && *got[i].ID != *tt.want[i].ID {
					t.Errorf("event %d: id %v, want %v", i, got[i].ID, tt.want[i].ID)
				}
			}
		})
	}
}

// TestHeavyReadsOneAtATime: reads of more than an hour of events go to
// ActivityWatch one at a time, across concurrent calls (the real Python
// aw-server computes each answer under one interpreter lock: a second
// read in flight only slows both, and the frame's reads wait behind
// them), while short reads still go beside them.
func TestHeavyReadsOneAtATime(t *testing.T) {
	var (
		mu                      sync.Mutex
		heavy, maxHeavy, shorts int
	)
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			start, _ := time.Parse(time.RFC3339Nano, q.Get("start"))
			end, _ := time.Parse(time.RFC3339Nano, q.Get("end"))
			isHeavy := strings.HasSuffix(r.URL.Path, "/events") && end.Sub(start) > time.Hour
			mu.Lock()
			if isHeavy {
				heavy++
				maxHeavy = max(maxHeavy, heavy)
			} else if strings.HasSuffix(r.URL.Path, "/events") {
				shorts++
			}
			mu.Unlock()
			if isHeavy {
				time.Sleep(2 * time.Millisecond) // long enough for another to arrive
			}
			// The read ends before its answer leaves: once the client has
			// it, the next may come at once.
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			mu.Lock()
			if isHeavy {
				heavy--
			}
			mu.Unlock()
			maps.Copy(w.Header(), rec.Header())
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})
	}
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: wrap})
	m, err := env.f.Meta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := env.f.Events(t.Context(), m, cutPeriod(t, env)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if maxHeavy != 1 || shorts == 0 {
		t.Errorf("%d heavy reads at once (want 1), %d short reads", maxHeavy, shorts)
	}
}
