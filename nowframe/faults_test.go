package nowframe

// Faults met by the builder through the real ActivityWatch client and
// HTTP: buckets that vanish between polls, a sidecar that starts failing
// while its probe is reused, a build that hangs when the process exits.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/upstream"
)

// faultClock is a settable clock, safe for concurrent use.
type faultClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *faultClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *faultClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// simWorld is the ActivityWatch simulator over HTTP, counting the reads of
// the bucket list and 404s, with per-path overrides.
type simWorld struct {
	t         *testing.T
	srv       *httptest.Server
	listReads atomic.Int64
	notFound  atomic.Int64
	mu        sync.Mutex
	override  map[string]http.HandlerFunc // by path
}

func newSimWorld(t *testing.T) *simWorld {
	t.Helper()
	w := &simWorld{t: t, override: map[string]http.HandlerFunc{}}
	sim := awsim.New(awsim.Options{Hostname: "desk"})
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/0/buckets/" {
			w.listReads.Add(1)
		}
		w.mu.Lock()
		h := w.override[r.URL.Path]
		w.mu.Unlock()
		rec := &statusRecorder{ResponseWriter: rw}
		if h != nil {
			h(rec, r)
		} else {
			sim.ServeHTTP(rec, r)
		}
		if rec.status == http.StatusNotFound {
			w.notFound.Add(1)
		}
	}))
	t.Cleanup(w.srv.Close)
	return w
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

func (w *simWorld) do(method, path, body string) {
	w.t.Helper()
	req, err := http.NewRequest(method, w.srv.URL+path, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

// watcher creates a bucket of host "desk" with one event ending at end.
func (w *simWorld) watcher(id, typ, data string, end time.Time) {
	w.t.Helper()
	w.do(http.MethodPost, "/api/0/buckets/"+id, fmt.Sprintf(`{"client":"t","type":%q,"hostname":"desk"}`, typ))
	ts := end.Add(-5*time.Second).UTC().Format("2006-01-02T15:04:05") + "+00:00"
	w.do(http.MethodPost, "/api/0/buckets/"+id+"/events", fmt.Sprintf(`[{"timestamp":%q,"duration":5.0,"data":%s}]`, ts, data))
}

func (w *simWorld) remove(id string) {
	w.t.Helper()
	w.do(http.MethodDelete, "/api/0/buckets/"+id+"?force=1", "")
}

func (w *simWorld) handle(path string, h http.HandlerFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.override[path] = h
}

// faultBuilder is a builder reading w through the real client, on clock.
func faultBuilder(t *testing.T, url string, clock *faultClock, deadline time.Duration, sidecar Prober) *Builder {
	t.Helper()
	c, err := aw.New(aw.Options{BaseURL: url, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	opts := Options{AW: c, Now: clock.now,
		AWSource: upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true,
			Deadline: deadline, Now: clock.now}),
		SidecarSource: upstream.New(upstream.Options{Name: "sidecar", Code: "SidecarUnavailable",
			Configured: sidecar != nil, Now: clock.now}),
		Sidecar: sidecar,
	}
	b := NewBuilder(opts)
	t.Cleanup(b.Close)
	return b
}

const (
	winDesk  = "aw-watcher-window_desk"
	winDesk2 = "aw-watcher-window_desk-2"
	afkDesk  = "aw-watcher-afk_desk"
)

// While polling, the bucket list is reused for 10 s. A window bucket
// deleted and replaced in that time is met with a 404 on the stale list;
// the same build reads the list again and the new bucket's events, so no
// frame reports ActivityWatch as failed, the circuit never counts it, and
// it costs one more list read, not a frame.
func TestReusedBucketListMeetsAVanishedBucket(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	w.watcher(afkDesk, "afkstatus", `{"status":"not-afk"}`, clock.now())
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil)
	b.SetReuse(10*time.Second, 5*time.Second)
	ctx := context.Background()

	check := func(step string, f *Frame, bucket, app, reason string) {
		t.Helper()
		if !f.Sources.ActivityWatch.OK || f.Info == nil || f.Buckets == nil {
			t.Fatalf("%s: the frame reports ActivityWatch failed: %+v", step, f.Sources.ActivityWatch)
		}
		if f.Now.Window.Bucket != bucket || f.Now.Window.App != app || f.Now.Window.Reason != reason || f.Now.AFK.Status != "not-afk" {
			t.Fatalf("%s: window %+v, afk %+v", step, f.Now.Window, f.Now.AFK)
		}
	}
	check("first build", b.Build(ctx), winDesk, "Code", "")
	clock.add(time.Second)
	check("second build", b.Build(ctx), winDesk, "Code", "")
	if n := w.listReads.Load(); n != 1 {
		t.Fatalf("two builds read the bucket list %d times, want once (reused)", n)
	}

	w.remove(winDesk)
	w.watcher(winDesk2, "currentwindow", `{"app":"Terminal","title":"make"}`, clock.now())
	clock.add(time.Second)
	f := b.Build(ctx)
	check("after the bucket was replaced", f, winDesk2, "Terminal", "")
	// Two 404s: the reused selection's read, and the same selection's
	// early read that runs alongside the fresh list (it is not retried).
	if n, nf := w.listReads.Load(), w.notFound.Load(); n != 2 || nf != 2 {
		t.Fatalf("the replaced bucket cost %d list reads and %d 404s, want 2 and 2", n, nf)
	}
	if f.Version != 3 {
		t.Fatalf("frame version %d, want 3: the vanished bucket cost a frame", f.Version)
	}

	w.remove(winDesk2)
	clock.add(time.Second)
	check("after the bucket was removed", b.Build(ctx), "", "", ReasonNoWindowBucket)
	if st := b.opts.AWSource.Status(); st.ConsecutiveFailures != 0 || st.Circuit != "closed" {
		t.Fatalf("vanished buckets were counted against ActivityWatch: %+v", st)
	}
}

// The bucket list names a window bucket whose events then 404 (it was
// deleted between the two reads of one build). The frame says why
// ActivityWatch's part failed and does not guess the window from another
// bucket; the next build, with the bucket gone from the list too, is
// whole.
func TestListNamesABucketWhoseEventsAreGone(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	w.watcher(afkDesk, "afkstatus", `{"status":"not-afk"}`, clock.now())
	gone := func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(rw, `{"message": "There's no bucket named %s"}`, winDesk)
	}
	w.handle("/api/0/buckets/"+winDesk+"/events", gone)
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil)
	f := b.Build(context.Background())
	aws := f.Sources.ActivityWatch
	if aws.OK || aws.Error == nil || !strings.Contains(*aws.Error, "not found 404") ||
		!strings.Contains(*aws.Error, "no bucket named") {
		t.Fatalf("sources.activitywatch: %+v", aws)
	}
	if f.Now.Window.Available || f.Now.Window.App != "" {
		t.Fatalf("the window was guessed: %+v", f.Now.Window)
	}
	if f.Now.Window.EventTiming != nil {
		t.Fatalf("a vanished window bucket yields timing: %+v", f.Now.Window)
	}

	// The bucket is deleted for good: the list no longer names it.
	w.handle("/api/0/buckets/"+winDesk+"/events", nil)
	w.remove(winDesk)
	clock.add(time.Second)
	f = b.Build(context.Background())
	if !f.Sources.ActivityWatch.OK || f.Now.Window.Reason != ReasonNoWindowBucket || f.Now.AFK.Status != "not-afk" {
		t.Fatalf("after the bucket left the list: %+v %+v", f.Sources.ActivityWatch, f.Now.Window)
	}
}

// When the window bucket's events could not be read (404, a failed read),
// window.reason says so ("unreadable"), not "no_events", which would tell
// the assistant the watcher has recorded nothing.
func TestUnreadableWindowBucketIsNotReportedAsEmpty(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	w.handle("/api/0/buckets/"+winDesk+"/events", func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusInternalServerError)
	})
	f := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil).Build(context.Background())
	if f.Sources.ActivityWatch.OK {
		t.Fatal("the failed read was not reported")
	}
	if f.Now.Window.Reason != ReasonUnreadable {
		t.Errorf("window.reason %q for a bucket whose events could not be read, want %q", f.Now.Window.Reason, ReasonUnreadable)
	}
}

// With ActivityWatch unreachable, window.reason and afk.reason say
// "unreadable", never "no_window_bucket" or "no_afk_bucket", which would
// tell the assistant that the person has no watchers.
func TestUnreachableActivityWatchIsNotReportedAsNoWatchers(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	f := faultBuilder(t, url, clock, 2*time.Second, nil).Build(context.Background())
	if f.Sources.ActivityWatch.OK {
		t.Fatal("an unreachable ActivityWatch was not reported")
	}
	if f.Now.Window.Reason != ReasonUnreadable || f.Now.AFK.Reason != ReasonUnreadable {
		t.Errorf("reasons %q / %q claim there are no watchers while ActivityWatch did not answer",
			f.Now.Window.Reason, f.Now.AFK.Reason)
	}
}

// probeFunc is a Prober from a function.
type probeFunc func(ctx context.Context) (json.RawMessage, error)

func (p probeFunc) Probe(ctx context.Context) (json.RawMessage, error) { return p(ctx) }

// While polling, the sidecar's probe is reused for 5 s: a sidecar that
// starts failing is noticed at the next read, its cached answer is then
// dropped (omni_probe null with the reason, never a stale payload), and a
// sidecar that recovers is read again at once.
func TestSidecarFailingWhileItsProbeIsReused(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	var (
		failing atomic.Bool
		probes  atomic.Int64
	)
	sidecar := probeFunc(func(context.Context) (json.RawMessage, error) {
		probes.Add(1)
		if failing.Load() {
			return nil, fmt.Errorf("sidecar probe: answer is not a JSON object")
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, sidecar)
	b.SetReuse(10*time.Second, 5*time.Second)
	ctx := context.Background()

	f := b.Build(ctx)
	if string(f.Probe) != `{"ok":true}` || !f.Sources.Sidecar.OK {
		t.Fatalf("first frame: probe %s, %+v", f.Probe, f.Sources.Sidecar)
	}
	failing.Store(true)
	clock.add(time.Second)
	if f = b.Build(ctx); string(f.Probe) != `{"ok":true}` || probes.Load() != 1 {
		t.Fatalf("within the reuse window: probe %s after %d probes", f.Probe, probes.Load())
	}
	clock.add(5 * time.Second)
	f = b.Build(ctx)
	if f.Probe != nil || f.Sources.Sidecar.OK || f.Sources.Sidecar.Error == nil ||
		!strings.Contains(*f.Sources.Sidecar.Error, "not a JSON object") || !f.Sources.ActivityWatch.OK {
		t.Fatalf("after the reuse window: probe %s, %+v", f.Probe, f.Sources.Sidecar)
	}
	if !strings.Contains(string(body(f, "r")), `"omni_probe":null`) {
		t.Fatal("the rendered frame does not say omni_probe null")
	}
	// The failure dropped the cached answer: the next build reads again.
	failing.Store(false)
	clock.add(time.Second)
	if f = b.Build(ctx); string(f.Probe) != `{"ok":true}` || !f.Sources.Sidecar.OK || probes.Load() != 3 {
		t.Fatalf("after recovery: probe %s after %d probes", f.Probe, probes.Load())
	}
}

// A build hanging on ActivityWatch (a one-minute deadline) does not hold
// its caller past the caller's context, nor the process's exit: Close
// stops it and returns.
func TestCloseStopsAHangingBuild(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) })
	clock := &faultClock{t: time.Now()}
	b := faultBuilder(t, hang.URL, clock, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if f := b.Build(ctx); f != nil {
		t.Fatalf("a hanging build returned a frame: %+v", f)
	}
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for the hanging build's one-minute deadline")
	}
	if f := b.Latest(); f == nil || f.Sources.ActivityWatch.OK {
		t.Fatalf("the stopped build left no frame saying why: %+v", f)
	}
}

// TestFrameSourceCarriesTheFailureCode: a frame whose ActivityWatch part
// failed says the failure's code beside its text, so a reader (the
// terminal's line) can tell "did not answer" from "answered and refused"
// without parsing the server's words.
func TestFrameSourceCarriesTheFailureCode(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"no"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	f := faultBuilder(t, srv.URL, clock, 2*time.Second, nil).Build(context.Background())
	if got := f.Sources.ActivityWatch; got.OK || got.Code != "AwUnavailable" {
		t.Fatalf("ActivityWatch part %+v, want failed with code AwUnavailable", got)
	}
	if f.Sources.Sidecar.Code != "" {
		t.Fatalf("an unconfigured sidecar has a code: %+v", f.Sources.Sidecar)
	}
}

func body(f *Frame, reason string) []byte { b, _, _ := f.JSON(reason, false); return b }
