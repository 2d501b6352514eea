package awsim

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock advances one second every time it is read: Run reads it once
// per step, so every step is one simulated second however fast it ticks.
type fakeClock struct{ us atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.us.Store(t.UnixMicro())
	return c
}

func (c *fakeClock) Now() time.Time { return time.UnixMicro(c.us.Add(usPerSecond)).UTC() }

type jsonEvent struct {
	ID        int64          `json:"id"`
	Timestamp string         `json:"timestamp"`
	Duration  float64        `json:"duration"`
	Data      map[string]any `json:"data"`
}

func (e jsonEvent) start(t *testing.T) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		t.Fatalf("timestamp %q: %v", e.Timestamp, err)
	}
	return ts
}

func (e jsonEvent) end(t *testing.T) time.Time {
	return e.start(t).Add(time.Duration(e.Duration * float64(time.Second)))
}

func fetchEvents(t *testing.T, h *harness, bucket string) []jsonEvent {
	t.Helper()
	a := h.get("/api/0/buckets/" + bucket + "/events")
	if a.status != 200 {
		t.Fatalf("events of %s: %d %s", bucket, a.status, a.body)
	}
	var evs []jsonEvent
	if err := json.Unmarshal(a.body, &evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestRunGeneratesWatcherEvents(t *testing.T) {
	clock := newFakeClock(base)
	sim := New(Options{Hostname: "desk", Seed: 7, Now: clock.Now})
	h := &harness{t: t, sim: sim, srv: newTestServer(t, sim), cli: newHarness(t, base).cli}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx, time.Millisecond) }()

	// Wait (generous ceiling, no timing assertion) for a few dozen switches.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if a := h.get("/api/0/buckets/aw-watcher-window_desk/events/count"); a.status == 200 {
			if n, _ := strconv.Atoi(strings.TrimSpace(string(a.body))); n >= 30 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the generator produced fewer than 30 window events in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v, want nil on cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}

	var buckets map[string]map[string]any
	if err := json.Unmarshal(h.get("/api/0/buckets/").body, &buckets); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][2]string{
		"aw-watcher-window_desk":     {"currentwindow", "aw-watcher-window"},
		"aw-watcher-afk_desk":        {"afkstatus", "aw-watcher-afk"},
		"aw-watcher-web-chrome_desk": {"web.tab.current", "aw-client-web"},
	} {
		b := buckets[id]
		if b == nil || b["type"] != want[0] || b["client"] != want[1] || b["hostname"] != "desk" || b["last_updated"] == nil {
			t.Errorf("bucket %s: %v", id, b)
		}
	}

	win := fetchEvents(t, h, "aw-watcher-window_desk")
	var durs []float64
	apps := map[string]bool{}
	for i, e := range win {
		if i > 0 && e.start(t).After(win[i-1].start(t)) {
			t.Errorf("window events not newest first: %s after %s", e.Timestamp, win[i-1].Timestamp)
		}
		app, _ := e.Data["app"].(string)
		title, _ := e.Data["title"].(string)
		if app == "" || title == "" || len(e.Data) != 2 {
			t.Errorf("window event data %v", e.Data)
		}
		apps[app] = true
		if e.Duration < 0 || e.Duration > 400 {
			t.Errorf("window event of %v s", e.Duration)
		}
		if i > 0 { // the newest is still growing
			durs = append(durs, e.Duration)
		}
	}
	sort.Float64s(durs)
	if med := durs[len(durs)/2]; med < 3 || med > 12 {
		t.Errorf("median window event %v s; switches should come every 3-10 s", med)
	}
	if len(apps) < 3 {
		t.Errorf("only %v apps: the person should be lively", apps)
	}
	for _, e := range fetchEvents(t, h, "aw-watcher-afk_desk") {
		if s := e.Data["status"]; s != "afk" && s != "not-afk" {
			t.Errorf("afk status %v", s)
		}
	}
	web := fetchEvents(t, h, "aw-watcher-web-chrome_desk")
	if len(web) == 0 {
		t.Fatal("no web events")
	}
	for _, e := range web {
		_, u := e.Data["url"].(string)
		_, ti := e.Data["title"].(string)
		_, au := e.Data["audible"].(bool)
		_, in := e.Data["incognito"].(bool)
		_, tc := e.Data["tabCount"].(float64)
		if !u || !ti || !au || !in || !tc || len(e.Data) != 5 {
			t.Errorf("web event data %v", e.Data)
		}
	}
}

func TestRunStops(t *testing.T) {
	sim := New(Options{Now: newFakeClock(base).Now})
	if err := sim.Run(context.Background(), 0); err == nil {
		t.Error("a zero step was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sim.Run(ctx, time.Hour); err != nil {
		t.Errorf("Run with a done context: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx, time.Hour) }()
	deadline := time.Now().Add(30 * time.Second)
	for !sim.running.Load() {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := sim.Run(context.Background(), time.Second); !errors.Is(err, errRunning) {
		t.Errorf("a second Run: %v", err)
	}
	cancel() // Run sleeps on an hour-long ticker: it must still return at once
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestSeedHistory(t *testing.T) {
	clock := newFakeClock(base)
	sim := New(Options{Hostname: "desk", Seed: 3, Now: clock.Now})
	sim.Seed(base)
	h := &harness{t: t, sim: sim, srv: newTestServer(t, sim), cli: newHarness(t, base).cli}

	win := fetchEvents(t, h, "aw-watcher-window_desk")
	oldest, newest := win[len(win)-1], win[0]
	if got := oldest.start(t); !got.Equal(base.Add(-time.Hour)) {
		t.Errorf("history starts at %v, want an hour before %v", got, base)
	}
	if got := newest.end(t); got.After(base) || base.Sub(got) > 2*time.Second {
		t.Errorf("history ends at %v, want just before %v", got, base)
	}
	if len(win) < 8 || len(win) > 80 {
		t.Errorf("%d window events in the hour", len(win))
	}
	checkAFKBackdating(t, fetchEvents(t, h, "aw-watcher-afk_desk"), true)

	// Run continues the script: the first live heartbeat extends the last
	// seeded window event instead of starting a new one.
	n := len(win)
	sim.step(time.Second) // the clock reads base+1s
	if got := len(fetchEvents(t, h, "aw-watcher-window_desk")); got != n {
		t.Errorf("%d window events after the first live step, want %d", got, n)
	}
}

// checkAFKBackdating: each afk event starts 1 ms after the preceding
// not-afk event ends (at the last input) and lasts at least the watcher's
// 180 s timeout; statuses alternate.
func checkAFKBackdating(t *testing.T, evs []jsonEvent, wantAFK bool) {
	t.Helper()
	afk := 0
	for i := len(evs) - 2; i >= 0; i-- {
		prev, e := evs[i+1], evs[i]
		if prev.Data["status"] == e.Data["status"] {
			t.Errorf("two %v events in a row at %s", e.Data["status"], e.Timestamp)
		}
		if e.Data["status"] != "afk" {
			continue
		}
		afk++
		if got := e.start(t).Sub(prev.end(t)); got != time.Millisecond {
			t.Errorf("afk at %s starts %v after the not-afk event ends, want 1ms", e.Timestamp, got)
		}
		if i > 0 && e.Duration < 180 {
			t.Errorf("a finished afk event of %v s, shorter than the 180 s timeout", e.Duration)
		}
	}
	if wantAFK && afk == 0 {
		t.Error("no afk period")
	}
}

func TestLiveAFKIsReportedLate(t *testing.T) {
	now := base
	sim := New(Options{Hostname: "desk", Seed: 5, Now: func() time.Time { return now }})
	sim.Seed(base)
	seen := map[int64]bool{}
	for _, e := range sim.st.bucket("aw-watcher-afk_desk").events {
		seen[e.id] = true
	}
	apps := map[string]bool{}
	reported := 0
	for i := 0; i < 3*3600; i++ {
		now = now.Add(time.Second)
		sim.step(time.Second)
		if e := sim.st.bucket("aw-watcher-afk_desk").newest(); !seen[e.id] {
			seen[e.id] = true
			if string(e.data) == `{"status":"afk"}` {
				reported++
				if lag := now.UnixMicro() - e.ts; lag < afkTimeout || lag > afkTimeout+afkPoll+2*usPerSecond {
					t.Errorf("afk event appeared %v after the last input, want the 180 s timeout (+ one poll)", time.Duration(lag)*time.Microsecond)
				}
			}
		}
		w := sim.st.bucket("aw-watcher-window_desk").newest()
		var d struct{ App string }
		_ = json.Unmarshal(w.data, &d)
		apps[d.App] = true
	}
	if reported == 0 {
		t.Error("no live break in three simulated hours")
	}
	if !apps["1Password"] && !apps["KeePassXC"] {
		t.Errorf("no password manager in three hours (apps %v): the demo's privacy exclusion needs one", apps)
	}
	h := &harness{t: t, sim: sim, srv: newTestServer(t, sim), cli: newHarness(t, base).cli}
	checkAFKBackdating(t, fetchEvents(t, h, "aw-watcher-afk_desk"), true)

	// While Google-chrome has focus, the web bucket shows the same page.
	web := fetchEvents(t, h, "aw-watcher-web-chrome_desk")
	checked := 0
	for _, w := range fetchEvents(t, h, "aw-watcher-window_desk") {
		if w.Data["app"] != "Google-chrome" || w.Duration < 10 {
			continue
		}
		title := strings.TrimSuffix(strings.TrimSuffix(w.Data["title"].(string), " (Incognito)"), " - Google Chrome")
		found := false
		for _, e := range web {
			if e.Data["title"] == title && e.start(t).Before(w.end(t)) && e.end(t).After(w.start(t)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no tab event for the focused browser window %q at %s", title, w.Timestamp)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no browser window to check")
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	run := func(seed int64) string {
		now := base
		sim := New(Options{Seed: seed, Now: func() time.Time { return now }})
		sim.Seed(base)
		for i := 0; i < 600; i++ {
			now = now.Add(time.Second)
			sim.step(time.Second)
		}
		var sb strings.Builder
		for _, b := range sim.st.buckets {
			for _, e := range b.events {
				b, _ := json.Marshal(e.json())
				sb.Write(b)
			}
		}
		return sb.String()
	}
	a, b, c := run(11), run(11), run(12)
	if a != b {
		t.Error("the same seed and clock gave different events")
	}
	if a == c {
		t.Error("different seeds gave the same events")
	}
}

// TestDemoShowsSeveralSwitches: `make demo` watches the simulator for 30 s
// after seeding an hour of history; whatever the seed, the focused window
// changes several times in that half minute (simulated clock, one step a
// second, as the demo runs it).
func TestDemoShowsSeveralSwitches(t *testing.T) {
	total, fewest := 0, 1<<30
	const seeds = 200
	for seed := int64(1); seed <= seeds; seed++ {
		now := base
		sim := New(Options{Hostname: "desk", Seed: seed, Now: func() time.Time { return now }})
		sim.Seed(now)
		focused := func() string {
			return string(sim.st.bucket("aw-watcher-window_desk").newest().data)
		}
		last, changes := focused(), 0
		for range 30 {
			now = now.Add(time.Second)
			sim.step(time.Second)
			if f := focused(); f != last {
				changes++
				last = f
			}
		}
		total += changes
		fewest = min(fewest, changes)
	}
	if fewest < 3 {
		t.Errorf("a seed shows only %d window changes in a 30 s demo; want at least 3 for every seed", fewest)
	}
	t.Logf("window changes in 30 s: %.1f on average, %d at the fewest", float64(total)/seeds, fewest)
}
