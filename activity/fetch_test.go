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

	"slices"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/upstream"
)

// weekQuery asks most of the small week, cut inside a session at its
// start, its last day half an hour long (a short read).
var weekQuery = SummaryQuery{Start: "2026-03-23T10:00:00+01:00", End: "2026-03-29T04:30:00.123+02:00"}

// readWeek answers weekQuery from a new service that keeps nothing: every
// day of every bucket read.
func readWeek(t *testing.T, env *simEnv, o ServiceOptions) (*Summary, error) {
	t.Helper()
	o.cacheBytes = -1
	return newService(t, env, &clock{t: env.now}, o).Summary(t.Context(), weekQuery)
}

// TestReadSource: a period's answer names the host and the buckets read,
// each with its newest event, its age and whether it is stale, and the
// period's freshness. The watchers stopped an hour ago: stale for today,
// not for a period that ended before (it misses nothing).
func TestReadSource(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	sum, err := readWeek(t, env, ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source.Host != "testhost" || sum.Source.HostSource != nowframe.HostFromAWHostname {
		t.Errorf("source %+v", sum.Source)
	}
	roles := []string{}
	for _, b := range sum.Source.Buckets {
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
		if b.Stale || b.Unreadable || b.Events == 0 {
			t.Errorf("%s: %+v (a closed period: not stale)", b.ID, b)
		}
	}
	if !reflect.DeepEqual(roles, []string{RoleWindow, RoleAFK, RoleWeb, RoleWeb}) {
		t.Errorf("roles %v", roles)
	}
	if len(sum.Freshness.StaleWatchers) != 0 || !sum.Freshness.AsOf.Equal(env.now) {
		t.Errorf("closed period's freshness %+v", sum.Freshness)
	}
	today, err := newService(t, env, &clock{t: env.now}, ServiceOptions{}).Summary(t.Context(), SummaryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range today.Source.Buckets {
		if !b.Stale {
			t.Errorf("today %s: %+v (the watchers stopped an hour ago: stale)", b.ID, b)
		}
	}
	if len(today.Freshness.StaleWatchers) != 4 {
		t.Errorf("today's freshness %+v", today.Freshness)
	}
	if st := env.src.Status(); !st.OK || st.ConsecutiveFailures != 0 {
		t.Errorf("source status %+v", st)
	}
}

// TestReadSplitsTooLarge: a read whose answer exceeds the client's body
// limit is split, and the breaker counts no failure (TestSplitReadsAnswerAlike
// compares the answers); a limit even the server's metadata exceeds fails
// the call with the client's TooLarge.
func TestReadSplitsTooLarge(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 48 << 10}})
	if _, err := readWeek(t, env, ServiceOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := env.src.Status(); !st.OK || st.ConsecutiveFailures != 0 {
		t.Errorf("source status %+v after splitting", st)
	}
	tiny := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 1 << 10}})
	if _, err := readWeek(t, tiny, ServiceOptions{}); aw.KindOf(err) != aw.TooLarge {
		t.Errorf("err = %v, want a too-large read", err)
	}
}

// piecesReader answers a read of one of its spans (µs since the epoch)
// with its events, and any other with the client's TooLarge, so that a
// read is split into its spans.
type piecesReader struct {
	Reader
	pieces map[[2]int64][]aw.Event
}

func (r piecesReader) Events(_ context.Context, _ string, q aw.EventQuery) ([]aw.Event, error) {
	if evs, ok := r.pieces[[2]int64{q.Start.UnixMicro(), q.End.UnixMicro()}]; ok {
		return evs, nil
	}
	return nil, &aw.Error{Op: "events", Kind: aw.TooLarge, Message: "body exceeds the limit"}
}

// TestReadStitches covers a read split in two: the events clipped to the
// span read, an event the split cut joined again when both parts carry
// its id and meet at the cut (within the 1 ms the server adds to a range's
// end), events without duration counted where they start.
func TestReadStitches(t *testing.T) {
	const m = int64(time.Minute / time.Microsecond)
	base := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC).UnixMicro()
	e := func(id int64, startMin, durS float64) aw.Event {
		var i *int64
		if id != 0 {
			i = &id
		}
		return aw.Event{ID: i, Timestamp: time.UnixMicro(base + int64(startMin*float64(m))), Duration: durS, Data: json.RawMessage(`{}`)}
	}
	tests := []struct {
		name string
		a, b []aw.Event // the answers for [0, 50 min) and [50 min, 100 min), newest first
		want [][3]int64 // id, start, duration (min)
	}{
		{"an event cut by the split is whole again",
			[]aw.Event{e(2, 40, 600.001), e(1, 0, 2400)}, []aw.Event{e(3, 60, 2400.001), e(2, 50, 600)},
			[][3]int64{{1, 0, 40}, {2, 40, 20}, {3, 60, 40}}},
		{"without ids the parts stay apart",
			[]aw.Event{e(0, 40, 600.001)}, []aw.Event{e(0, 50, 600)}, [][3]int64{{0, 40, 10}, {0, 50, 10}}},
		{"different ids stay apart",
			[]aw.Event{e(1, 40, 600.001)}, []aw.Event{e(2, 50, 600)}, [][3]int64{{1, 40, 10}, {2, 50, 10}}},
		{"the span read clips both ends; events only touching it are dropped",
			[]aw.Event{e(2, -5, 600), e(1, -10, 300)}, []aw.Event{e(4, 100, 600), e(3, 95, 600)}, [][3]int64{{2, 0, 5}, {3, 95, 5}}},
		{"an event without duration counts where it starts",
			[]aw.Event{e(1, 50, 0), e(9, 0, 0)}, []aw.Event{e(1, 50, 0)}, [][3]int64{{9, 0, 0}, {1, 50, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewService(ServiceOptions{Source: testSource(), AW: piecesReader{pieces: map[[2]int64][]aw.Event{
				{base, base + 50*m}: tt.a, {base + 50*m, base + 100*m}: tt.b}}})
			var dec transform.Decoder
			evs, holes, err := f.readSpan(t.Context(), nil, &dec, "b", span64{base, base + 100*m})
			if err != nil || len(holes) != 0 {
				t.Fatalf("err %v, holes %v", err, holes)
			}
			var got [][3]int64
			for _, x := range evs {
				got = append(got, [3]int64{x.ID, (x.Start - base) / m, x.Duration / m})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
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

// TestReadParallelismBounded checks reads run in parallel, never more
// than Parallel at once, one per day and bucket.
func TestReadParallelismBounded(t *testing.T) {
	for _, parallel := range []int{1, 3, 4} {
		cw := &countingWrap{barrier: parallel}
		env := newSimEnv(t, envOptions{week: smallWeek, wrap: cw.wrap})
		sum, err := readWeek(t, env, ServiceOptions{parallel: parallel})
		if err != nil {
			t.Fatal(err)
		}
		if cw.max != parallel || cw.total != 4*len(sum.Period.Days()) {
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

// TestReadWebBucketUnreadable checks a browser bucket that fails is
// marked unreadable and left out, with a note, and the rest is read.
func TestReadWebBucketUnreadable(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("firefox", http.StatusInternalServerError, &hits),
		client: aw.Options{RetryMax: -1}})
	sum, err := readWeek(t, env, ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ff BucketRead
	for _, b := range sum.Source.Buckets {
		if strings.Contains(b.ID, "firefox") {
			ff = b
		}
	}
	notes := strings.Join(sum.Notes, "; ")
	if !ff.Unreadable || ff.Events != 0 || !strings.Contains(notes, "browser bucket could not be read") || sum.ActiveS == 0 {
		t.Errorf("firefox %+v, notes %q, active %v s", ff, notes, sum.ActiveS)
	}
	if strings.Contains(notes, "firefox") {
		t.Errorf("a note names a bucket: %q", notes)
	}
}

// TestReadWindowBucketGone checks a window bucket that vanished since
// the bucket list was read fails the call with an *UnreadableError naming
// it, whose cause is the client's NotFound, without reading on.
func TestReadWindowBucketGone(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("aw-watcher-window", http.StatusNotFound, &hits)})
	_, err := readWeek(t, env, ServiceOptions{})
	var ue *nowframe.UnreadableError
	var ne *upstream.Error
	if !errors.As(err, &ue) || len(ue.Buckets) != 1 || ue.Buckets[0] != env.h.Window.ID || aw.KindOf(err) != aw.NotFound || !errors.As(err, &ne) {
		t.Fatalf("err = %v (%T), want an UnreadableError of the window bucket", err, err)
	}
	if hits.Load() > 8 {
		t.Errorf("%d reads of the missing bucket: the read went on after it failed", hits.Load())
	}
}

// TestReadThroughBreaker checks reads go through the source: a server
// failing every event read opens its circuit, and then a read is refused
// without touching the server.
func TestReadThroughBreaker(t *testing.T) {
	var hits atomic.Int64
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: faultWrap("/api/0/buckets/", http.StatusServiceUnavailable, &hits),
		client: aw.Options{RetryMax: -1}})
	// One service, as in a process: the metadata read once (a success
	// would reset the breaker's count).
	s := newService(t, env, &clock{t: env.now}, ServiceOptions{cacheBytes: -1})
	for i := 0; i < 5 && env.src.Circuit() != upstream.Open; i++ {
		if _, err := s.Summary(t.Context(), weekQuery); err == nil {
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
		_, err := s.Summary(t.Context(), weekQuery)
		if !errors.As(err, &ue) || ue.Code != upstream.CodeCircuitOpen {
			t.Errorf("err = %v, want CircuitOpen", err)
		}
	}
	if more := hits.Load() - before; more > parallel {
		t.Errorf("%d more reads reached the server with the circuit open", more)
	}
}

// TestReadCallerGoesAway checks a cancelled call returns the context's
// error and does not count against ActivityWatch.
func TestReadCallerGoesAway(t *testing.T) {
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
	go func() {
		<-first
		cancel()
	}()
	s := newService(t, env, &clock{t: env.now}, ServiceOptions{cacheBytes: -1})
	_, err := s.Summary(ctx, SummaryQuery{Period: "last_7d"})
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
	m, err := newService(t, env, &clock{t: env.now}, ServiceOptions{}).readMeta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := NewCalendar(zone(t, "Europe/Berlin"), m.Settings)
	if m.SettingsErr != nil || c.DayStart != 5*time.Hour+30*time.Minute || c.WeekStart != time.Sunday ||
		c.DayStartSource != FromActivityWatch {
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
	m, err = newService(t, old, &clock{t: old.now}, ServiceOptions{}).readMeta(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c = NewCalendar(zone(t, "UTC"), m.Settings)
	if aw.KindOf(m.SettingsErr) != aw.HTTPStatus || c.DayStart != DefaultDayStart || c.DayStartSource != FromDefault {
		t.Errorf("calendar %+v, settings error %v", c, m.SettingsErr)
	}
	if st := old.src.Status(); !st.OK {
		t.Errorf("a missing settings endpoint failed the source: %+v", st)
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
	s := newService(t, env, &clock{t: env.now}, ServiceOptions{cacheBytes: -1})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := s.Summary(t.Context(), weekQuery); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if maxHeavy != 1 || shorts == 0 {
		t.Errorf("%d heavy reads at once (want 1), %d short reads", maxHeavy, shorts)
	}
}

// TestCachedBucketListNeverMakesALiveWatcherStale: the Service now reuses
// ActivityWatch's bucket list for MetaTTL (poll.bucket_list_ttl, which a
// person may set up to 1 h), and a bucket's freshness is max(the list's
// last_updated, the newest event read). For a period that ends before now
// (yesterday, last_week, an explicit afternoon) the newest event read is
// old, so the freshness is the cached list's last_updated: once the list
// is older than the watcher's threshold (window: 15 s) a watcher that is
// heartbeating right now is reported stale ("stale_watchers":
// ["aw-watcher-window_testhost"], age_s = the cache's age), which says the
// period may lack its latest part though nothing is missing. A cold
// Service (or one with a fresh list) says the same watcher is fresh.
// Expected: a cached list never makes a live watcher stale (e.g. judge
// the list's last_updated as of Meta.At: age = m.At - last_updated, or
// read the list again before calling a watcher stale).
func TestCachedBucketListNeverMakesALiveWatcherStale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Date(2026, 3, 24, 12, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, t0)
	const win, afk = "aw-watcher-window_testhost", "aw-watcher-afk_testhost"
	y := t0.Add(-24 * time.Hour)
	insert(t, env, win, ev1(y, 3600, `{"app":"Code","title":"a"}`))
	insert(t, env, afk, ev1(y, 3600, `{"status":"not-afk"}`))
	// The watchers are alive now: their newest events end at t0.
	insert(t, env, win, ev1(t0.Add(-time.Minute), 60, `{"app":"Code","title":"b"}`))
	insert(t, env, afk, ev1(t0.Add(-time.Minute), 60, `{"status":"not-afk"}`))

	s := reviewService(env, clk, ServiceOptions{MetaTTL: time.Minute})
	first, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Freshness.StaleWatchers) != 0 {
		t.Fatalf("first call: stale %v, want none", first.Freshness.StaleWatchers)
	}

	// 30 s later the window watcher has kept heartbeating.
	t1 := t0.Add(30 * time.Second)
	clk.set(t1)
	insert(t, env, win, ev1(t0, 30, `{"app":"Code","title":"c"}`))
	insert(t, env, afk, ev1(t0, 30, `{"status":"not-afk"}`))

	warm, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	cold, err := reviewService(env, clk, ServiceOptions{}).Summary(ctx, SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cold.Freshness.StaleWatchers) != 0 {
		t.Fatalf("cold service: stale %v, want none (test setup)", cold.Freshness.StaleWatchers)
	}
	if slices.Contains(warm.Freshness.StaleWatchers, win) {
		for _, b := range warm.Source.Buckets {
			if b.ID == win && b.AgeS != nil {
				t.Logf("window bucket: newest_end %s, age_s %.1f", b.NewestEnd, *b.AgeS)
			}
		}
		t.Errorf("a window watcher that heartbeats now is reported stale from a %s-old cached bucket list: stale_watchers %v (a cold service: none)",
			t1.Sub(t0), warm.Freshness.StaleWatchers)
	}
}

// stallBefore is a simulator in front of which every event read starting
// before cut stalls until release is closed (or the request goes away),
// as the real aw-server does while it computes an old, large day.
func stallBefore(t *testing.T, cut time.Time, release <-chan struct{}, stalled chan<- struct{}) (*simEnv, *clock) {
	t.Helper()
	env, clk := reviewDesktop(t, cut.Add(32*time.Hour))
	next := env.srv.Config.Handler
	env.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("start"))
		if strings.HasSuffix(r.URL.Path, "/events") && r.Method == http.MethodGet && err == nil && start.Before(cut) {
			select {
			case stalled <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
	return env, clk
}

// TestCancelledCallDoesNotWaitForAnotherCallsHeavyRead: a call whose
// context is cancelled (the client's notifications/cancelled, its
// timeout_ms, the bus's deadline) must end promptly ("long calls honour
// cancellation"). readSpan waits for the heavy-read token with ctx, but
// loadDay takes the bucket day's lock (bd.mu, a sync.Mutex) first and
// holds it while waiting for the token and while reading. So: call C
// reads an old day that the server is slow to send (it holds the one
// heavy token, up to history_timeout = 30 s per read, and more reads
// queue behind it); call A asks for yesterday and waits for the token
// holding yesterday's lock; call B asks for yesterday too and is
// cancelled after 100 ms. B does not return: it blocks on the lock
// without looking at its ctx until C's read ends and A has read
// yesterday. Before the shared token, A would have read at once; now B's
// wait is bounded by every heavy read queued in the process. Expected: B
// returns its ctx error within moments of the cancellation (e.g. take
// the token before the bucket day's lock, or make the lock a
// ctx-aware one: a chan struct{} of 1 selected with ctx.Done()).
func TestCancelledCallDoesNotWaitForAnotherCallsHeavyRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	day := func(d int) time.Time { return time.Date(2026, 3, 20+d, 4, 0, 0, 0, time.UTC) }
	release, stalled := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	env, clk := stallBefore(t, day(2), release, stalled) // reads of day(1) stall; now is day(3)+8h
	s := reviewService(env, clk, ServiceOptions{})
	if _, err := s.Summary(ctx, SummaryQuery{Period: "today"}); err != nil { // metadata cached
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { // C: an old day the server is slow to send
		_, _ = s.Summary(ctx, SummaryQuery{Start: day(1).Format(time.RFC3339), End: day(2).Format(time.RFC3339)})
	})
	select {
	case <-stalled:
	case <-ctx.Done():
		t.Fatal("C's read never reached the server")
	}
	wg.Go(func() { _, _ = s.Summary(ctx, SummaryQuery{Period: "yesterday"}) }) // A: waits for the token
	time.Sleep(100 * time.Millisecond)                                         // A holds yesterday's lock

	bctx, bcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer bcancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := s.Summary(bctx, SummaryQuery{Period: "yesterday"}); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("B: no error, want its ctx's")
		}
	case <-time.After(3 * time.Second):
		free()
		err := <-done
		t.Errorf("B, cancelled after 100 ms, was still running 3 s later (blocked on yesterday's lock held by a call waiting for another call's heavy read); it returned %v only after %s, once that read was released",
			err, time.Since(start).Round(time.Millisecond))
	}
}
