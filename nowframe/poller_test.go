package nowframe

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/upstream"
)

// testPoll are config's default poll settings.
var testPoll = PollerOptions{Interval: time.Second, IdleInterval: 30 * time.Second, ActiveFor: 5 * time.Minute, BucketListTTL: 10 * time.Second}

func frameWith(v uint64, at time.Time, app, title, url, afk string) *Frame {
	f := &Frame{Version: v, Timestamp: at}
	f.Now.Window.App, f.Now.Window.Title = app, title
	f.Now.Browser.URL, f.Now.AFK.Status = url, afk
	f.Now.Summary = "Active in " + app
	return f
}

// The change feed wakes subscribers when what the person does changes,
// not at every frame, and never for an older build finishing late.
func TestChangeFeedWakesOnSwitchesOnly(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	b := NewBuilder(Options{})
	changed := b.Changed()
	b.publish(frameWith(1, t0, "Code", "a.go", "", "not-afk"))
	b.publish(frameWith(2, t0.Add(time.Second), "Code", "a.go", "", "not-afk")) // nothing changed
	select {
	case <-changed:
		t.Fatal("a frame without a switch woke subscribers")
	default:
	}
	b.publish(frameWith(3, t0.Add(2*time.Second), "Google-chrome", "Docs", "https://x/", "not-afk"))
	select {
	case <-changed:
	default:
		t.Fatal("a switch did not wake subscribers")
	}
	changed = b.Changed()
	b.publish(frameWith(1, t0.Add(3*time.Second), "Slack", "", "", "afk")) // an older build finishing late
	select {
	case <-changed:
		t.Fatal("an older frame woke subscribers")
	default:
	}
	if b.Latest().Version != 3 {
		t.Fatalf("an older frame replaced the latest: %d", b.Latest().Version)
	}
	b.publish(frameWith(4, t0.Add(4*time.Second), "Google-chrome", "Docs", "https://x/", "afk"))
	select {
	case <-changed:
	default:
		t.Fatal("going AFK did not wake subscribers")
	}
}

func TestPollerRunStopsWithItsContext(t *testing.T) {
	b := NewBuilder(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error)
	go func() { done <- NewPoller(b, testPoll).Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run ignored its cancelled context")
	}
}

// countingAW is an ActivityWatch that counts what it is asked.
type countingAW struct {
	mu                   sync.Mutex
	info, buckets, event int
	down                 bool
}

// counts returns how often info, the bucket list and events were read.
func (c *countingAW) counts() (info, buckets, events int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info, c.buckets, c.event
}

// setDown makes every read fail (or answer again).
func (c *countingAW) setDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

func (c *countingAW) Info(context.Context) (aw.Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info++
	if c.down {
		return aw.Info{}, errors.New("connection refused")
	}
	return aw.Info{Hostname: "h"}, nil
}

func (c *countingAW) Buckets(context.Context) (map[string]aw.Bucket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buckets++
	if c.down {
		return nil, errors.New("connection refused")
	}
	return map[string]aw.Bucket{
		"aw-watcher-window_h": {ID: "aw-watcher-window_h", Type: aw.TypeWindow, Hostname: "h"},
		"aw-watcher-afk_h":    {ID: "aw-watcher-afk_h", Type: aw.TypeAFK, Hostname: "h"},
	}, nil
}

func (c *countingAW) Events(context.Context, string, aw.EventQuery) ([]aw.Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.event++
	if c.down {
		return nil, errors.New("connection refused")
	}
	return nil, nil
}

func TestPollingReadsBucketsLessOftenAndProbesWhileDown(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	src := &countingAW{}
	up := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: clock})
	b := NewBuilder(Options{AW: src, AWSource: up, SidecarSource: upstream.New(upstream.Options{Name: "sidecar"}), Now: clock})
	b.SetReuse(10*time.Second, 5*time.Second)
	for range 5 {
		b.Build(context.Background())
		now = now.Add(time.Second)
	}
	if src.info != 1 || src.buckets != 1 || src.event != 2*5 {
		t.Fatalf("five polls read info %d, buckets %d, events %d times; want 1, 1, 10", src.info, src.buckets, src.event)
	}
	now = now.Add(10 * time.Second)
	b.Build(context.Background())
	if src.buckets != 2 {
		t.Fatalf("the bucket list was not read again after 10 s (%d)", src.buckets)
	}
	// Down: three failures open the circuit; the poller's probe still
	// reaches ActivityWatch once per tick and notices its return.
	src.down = true
	for range 3 {
		now = now.Add(11 * time.Second)
		b.Build(context.Background())
	}
	if !b.AWDown() {
		t.Fatal("the circuit did not open")
	}
	src.down = false
	if err := b.ProbeAW(context.Background()); err != nil || b.AWDown() {
		t.Fatalf("the probe did not close the circuit: %v", err)
	}
}
