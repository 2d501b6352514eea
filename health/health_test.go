package health

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/upstream"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func checker(c *clock, awErr *atomic.Value, probe func(context.Context) (json.RawMessage, error), probes *atomic.Int32) *Checker {
	aw := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now})
	sc := upstream.New(upstream.Options{Name: "sidecar", Code: "SidecarUnavailable", Configured: probe != nil, Now: c.now})
	return New(Options{
		AWSource: aw,
		AWProbe: func(context.Context) error {
			probes.Add(1)
			if e, _ := awErr.Load().(error); e != nil {
				return e
			}
			return nil
		},
		SidecarSource: sc, SidecarProbe: probe,
		Preflight: []Check{{Name: "config", OK: true}},
		Now:       c.now,
	})
}

func TestHealthNoSidecarIsHealthy(t *testing.T) {
	c := &clock{t: time.Now()}
	var awErr atomic.Value
	var probes atomic.Int32
	h := checker(c, &awErr, nil, &probes)
	defer h.Close()
	r := h.Report(context.Background())
	if !r.AWOK || r.SidecarProbeStatus != nil || !r.PreflightOK || r.Status != "healthy" || string(r.OmniProbe) != "null" {
		t.Fatalf("report = %+v", r)
	}
	if probes.Load() != 1 {
		t.Fatalf("first call probed %d times, want 1", probes.Load())
	}
	// Within the refresh interval nothing is probed again.
	for range 50 {
		h.Report(context.Background())
	}
	if probes.Load() != 1 {
		t.Fatalf("probed %d times within a second", probes.Load())
	}
}

func TestHealthAnswersFromLastStatusAndRefreshes(t *testing.T) {
	c := &clock{t: time.Now()}
	var awErr atomic.Value
	var probes atomic.Int32
	h := checker(c, &awErr, nil, &probes)
	defer h.Close()
	if r := h.Report(context.Background()); !r.AWOK {
		t.Fatal("first report not ok")
	}
	awErr.Store(errors.New("connection refused"))
	c.add(2 * time.Second)
	h.Report(context.Background()) // answers from the last status, starts a refresh
	h.wg.Wait()                    // wait for the refresh
	r := h.Report(context.Background())
	if r.AWOK || r.Status != "degraded" || r.Sources.ActivityWatch.Error == "" {
		t.Fatalf("after ActivityWatch went down: %+v", r)
	}
}

func TestHealthSlowActivityWatchDoesNotDelayLaterCalls(t *testing.T) {
	c := &clock{t: time.Now()}
	release := make(chan struct{})
	aw := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now, Deadline: time.Minute})
	var calls atomic.Int32
	h := New(Options{AWSource: aw, Now: c.now, AWProbe: func(ctx context.Context) error {
		if calls.Add(1) > 1 {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}})
	h.Report(context.Background())
	c.add(2 * time.Second)
	done := make(chan Report)
	go func() { done <- h.Report(context.Background()) }()
	select {
	case r := <-done:
		if !r.AWOK {
			t.Fatalf("report = %+v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a slow ActivityWatch held system.health")
	}
	close(release)
	h.Close()
}

func TestHealthSidecar(t *testing.T) {
	tests := []struct {
		name        string
		probe       string
		err         error
		status      *bool
		preflightOK bool
		healthy     bool
	}{
		{"ok", `{"ok":true,"preflight_ok":true}`, nil, ptr(true), true, true},
		{"ok false", `{"ok":false}`, nil, ptr(false), false, false},
		{"preflight false", `{"ok":true,"preflight_ok":false}`, nil, ptr(true), false, false},
		{"down", ``, errors.New("refused"), ptr(false), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Now()}
			var awErr atomic.Value
			var probes atomic.Int32
			h := checker(c, &awErr, func(context.Context) (json.RawMessage, error) {
				if tt.err != nil {
					return nil, tt.err
				}
				return json.RawMessage(tt.probe), nil
			}, &probes)
			defer h.Close()
			r := h.Report(context.Background())
			if (r.SidecarProbeStatus == nil) != (tt.status == nil) || (r.SidecarProbeStatus != nil && *r.SidecarProbeStatus != *tt.status) ||
				r.PreflightOK != tt.preflightOK || r.Healthy() != tt.healthy {
				t.Fatalf("report = %+v", r)
			}
			if tt.err == nil && string(r.OmniProbe) != tt.probe {
				t.Fatalf("omni_probe = %s", r.OmniProbe)
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func TestHealthFirstCallIsNotHeldBySlowSource(t *testing.T) {
	release := make(chan struct{})
	aw := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: time.Minute})
	h := New(Options{AWSource: aw, FirstWait: 20 * time.Millisecond, AWProbe: func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}})
	r := h.Report(context.Background())
	if r.AWOK || r.Sources.ActivityWatch.Checked || r.Status != "checking" || r.Healthy() {
		t.Fatalf("first report while the probe hangs = %+v", r)
	}
	close(release)
	h.wg.Wait()
	if r := h.Report(context.Background()); !r.AWOK {
		t.Fatalf("after the probe answered = %+v", r)
	}
}

func TestCloseStopsAProbeUnderWay(t *testing.T) {
	aw := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: time.Minute})
	started := make(chan struct{})
	h := New(Options{AWSource: aw, AWProbe: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	h.Prime(context.Background())
	<-started
	done := make(chan struct{})
	go func() { h.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for a probe with a one-minute deadline")
	}
}

// The report shows each source as it is now: a breaker that opened since
// the last refresh (three failed calls by others, the clock not moved) is
// open in the very next report, rendered and redacted again, with the
// failure's code; the subscribers of Changed hear of it.
func TestHealthShowsTheLiveCircuit(t *testing.T) {
	c := &clock{t: time.Now()}
	var awErr atomic.Value
	var probes atomic.Int32
	h := checker(c, &awErr, nil, &probes)
	defer h.Close()
	if r := h.Report(context.Background()); r.Sources.ActivityWatch.Circuit != "closed" || !r.AWOK {
		t.Fatalf("first report = %+v", r)
	}
	changed := h.Changed()
	for range 3 {
		_ = h.opts.AWSource.Do(context.Background(), func(context.Context) error { return errors.New("connection refused") })
	}
	body, _, _ := h.Rendered(context.Background())
	r := h.Report(context.Background())
	if r.Sources.ActivityWatch.Circuit != "open" || r.AWOK || r.Status != "degraded" || r.Sources.ActivityWatch.Code != "AwUnavailable" {
		t.Fatalf("report right after the breaker opened = %+v", r)
	}
	var doc struct {
		Sources struct {
			ActivityWatch struct {
				Circuit string `json:"circuit"`
			} `json:"activitywatch"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.Sources.ActivityWatch.Circuit != "open" {
		t.Fatalf("rendered report: %s", body)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Changed was not closed when the circuit opened")
	}
	if probes.Load() != 1 {
		t.Fatalf("the live state cost %d probes, want none beyond the first", probes.Load()-1)
	}
}
