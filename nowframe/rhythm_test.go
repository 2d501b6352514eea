package nowframe

// The poller's rhythm (a frame a second while someone asks or watches,
// one every 30 s at rest) and the cached bucket list that makes a frame
// cost only its event reads.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awbridge/awbridge/upstream"
)

// rhythm runs a poller over a counting ActivityWatch inside a synctest
// bubble, so its 1 s and 30 s sleeps take no real time.
type rhythm struct {
	src *countingAW
	b   *Builder
	p   *Poller
}

// startRhythm starts Run; it stops when the test ends. Call inside a
// synctest bubble.
func startRhythm(t *testing.T) *rhythm {
	t.Helper()
	r := &rhythm{src: &countingAW{}}
	r.b = NewBuilder(Options{AW: r.src,
		AWSource:      upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true}),
		SidecarSource: upstream.New(upstream.Options{Name: "sidecar"})})
	p := NewPoller(r.b, testPoll)
	r.p = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		r.b.Close()
	})
	<-p.Tried()
	synctest.Wait()
	return r
}

// polls is how many frames have been built so far (the poller's, while
// the test asks for none).
func (r *rhythm) polls() int {
	if f := r.b.Latest(); f != nil {
		return int(f.Version)
	}
	return 0
}

// after lets d pass in the bubble and returns how many frames the poller
// built meanwhile.
func (r *rhythm) after(d time.Duration) int {
	before := r.polls()
	time.Sleep(d)
	synctest.Wait()
	return r.polls() - before
}

// At rest (nobody watches, no call) the poller builds one frame every 30
// to 33 s (a tenth of jitter), not one a second.
func TestPollerRestsWhenNobodyAsks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		if n := r.polls(); n != 1 {
			t.Fatalf("%d frames at start, want the first one", n)
		}
		if r.p.Active() {
			t.Fatal("active with nobody asking")
		}
		if n := r.after(29 * time.Second); n != 0 {
			t.Fatalf("%d frames in the first 29 s at rest, want none", n)
		}
		if n := r.after(5 * time.Second); n != 1 {
			t.Fatalf("%d frames between 29 and 34 s at rest, want one", n)
		}
		if n := r.after(10 * time.Minute); n < 18 || n > 20 {
			t.Fatalf("%d frames in 10 minutes at rest, want one every 30-33 s", n)
		}
	})
}

// A call at rest wakes the poller: its next frame comes at once (the last
// was long ago), then one a second for 5 minutes after the last call, then
// the rhythm rests again.
func TestPollerWakesWhenACallComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		time.Sleep(10 * time.Second) // at rest, between two idle frames
		synctest.Wait()
		before := r.polls()
		r.p.Touch()
		synctest.Wait()
		if n := r.polls() - before; n != 1 {
			t.Fatalf("the call was followed by %d frames at once, want one (not after the 30 s sleep)", n)
		}
		if !r.p.Active() {
			t.Fatal("not active after a call")
		}
		if n := r.after(10 * time.Second); n < 9 || n > 10 {
			t.Fatalf("%d frames in the 10 s after a call, want one a second", n)
		}
		// Calls keep it active; 5 minutes after the last one it rests.
		r.p.Touch()
		if n := r.after(5*time.Minute - time.Second); n < 270 {
			t.Fatalf("%d frames in the 5 minutes after a call, want one a second", n)
		}
		r.after(3 * time.Second) // the last active tick
		if r.p.Active() {
			t.Fatal("still active 5 minutes after the last call")
		}
		if n := r.after(time.Minute); n < 1 || n > 2 {
			t.Fatalf("%d frames in the minute after the active window closed, want the rest rhythm", n)
		}
	})
}

// A call during the active rhythm does not add frames: the poller keeps
// one a second, whoever asks.
func TestPollerCallsWhileActiveAddNoFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		r.p.Touch()
		synctest.Wait()
		before := r.polls()
		for range 10 {
			for range 50 {
				r.p.Touch()
			}
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if n := r.polls() - before; n < 9 || n > 10 {
			t.Fatalf("500 calls in 10 s made the poller build %d frames, want one a second", n)
		}
	})
}

// A subscriber (Watch) keeps the active rhythm for as long as it watches,
// beyond the 5 minutes a call is worth; released, the rhythm rests.
func TestPollerWatcherKeepsItActive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		before := r.polls()
		release := r.p.Watch()
		synctest.Wait()
		if n := r.polls() - before; n != 1 {
			t.Fatalf("a new subscriber was followed by %d frames at once, want one", n)
		}
		if n := r.after(10 * time.Minute); n < 540 {
			t.Fatalf("%d frames in 10 minutes with a subscriber, want one a second", n)
		}
		second := r.p.Watch()
		release()
		release() // a second release does nothing
		if n := r.after(10 * time.Second); n < 9 {
			t.Fatalf("%d frames in 10 s with the second subscriber left, want one a second", n)
		}
		second()
		r.after(2 * time.Second)
		if r.p.Active() {
			t.Fatal("still active with no subscriber and no call")
		}
		if n := r.after(time.Minute); n < 1 || n > 2 {
			t.Fatalf("%d frames in the minute after the last subscriber left, want the rest rhythm", n)
		}
	})
}

// A caller at rest still gets a fresh frame whenever the warm one is older
// than its max_age (the poller's last frame is up to 33 s old).
func TestCallAtRestGetsAFreshFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		warm := r.b.Latest()
		_, _, events := r.src.counts()
		f, hit := r.b.Get(context.Background(), 2*time.Second)
		if hit || f == nil || f.Version == warm.Version || f.Age(time.Now()) != 0 {
			t.Fatalf("max_age 2 s with a 10 s old warm frame: hit %v, frame %+v", hit, f)
		}
		if _, _, n := r.src.counts(); n == events {
			t.Fatal("the fresh frame read no events")
		}
		if g, hit := r.b.Get(context.Background(), 2*time.Second); !hit || g.Version != f.Version {
			t.Fatalf("a second call at once was not answered from the fresh frame (hit %v)", hit)
		}
	})
}

// While ActivityWatch is down at rest, the poller probes it once per idle
// tick; a call wakes it and it probes within the active rhythm.
func TestPollerProbesADownServerAtRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRhythm(t)
		r.src.setDown(true)
		for range 3 { // three failed frames open the circuit
			r.b.Build(context.Background())
		}
		if !r.b.AWDown() {
			t.Fatal("the circuit did not open")
		}
		reads, _, _ := r.src.counts()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		info, _, _ := r.src.counts()
		probes := info - reads
		r.src.setDown(false)
		if probes < 3 || probes > 5 {
			t.Fatalf("%d probes of a down server in 2 minutes at rest, want one per 30-33 s", probes)
		}
		r.p.Touch()
		synctest.Wait()
		if r.b.AWDown() {
			t.Fatal("a call at rest did not bring the probe forward")
		}
	})
}

// The bucket list and server info are reused for 10 s, but a frame whose
// bucket list had no window bucket reads them again: a watcher that
// starts is seen in the next frame, not 10 s later.
func TestNewWindowBucketIsReadInTheNextFrame(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(afkDesk, "afkstatus", `{"status":"not-afk"}`, clock.now())
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil)
	b.SetReuse(10*time.Second, 5*time.Second)
	ctx := context.Background()
	if f := b.Build(ctx); f.Now.Window.Reason != ReasonNoWindowBucket || !f.Sources.ActivityWatch.OK {
		t.Fatalf("first frame: window %+v, source %+v", f.Now.Window, f.Sources.ActivityWatch)
	}
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	clock.add(time.Second)
	f := b.Build(ctx)
	if f.Now.Window.Bucket != winDesk || f.Now.Window.App != "Code" || !f.Sources.ActivityWatch.OK {
		t.Fatalf("the frame after the window watcher started: window %+v", f.Now.Window)
	}
	// With the window bucket found, the list is reused again.
	lists := w.listReads.Load()
	clock.add(time.Second)
	if f := b.Build(ctx); f.Now.Window.App != "Code" || w.listReads.Load() != lists {
		t.Fatalf("the next frame read the bucket list again (%d reads, was %d)", w.listReads.Load(), lists)
	}
}

// A cached server info never makes a down ActivityWatch look up: the
// event reads fail, the frame reads everything again, and says the server
// is unavailable (not that it answered).
func TestCachedInfoDoesNotHideADownServer(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	w.watcher(afkDesk, "afkstatus", `{"status":"not-afk"}`, clock.now())
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil)
	b.SetReuse(10*time.Second, 5*time.Second)
	ctx := context.Background()
	if f := b.Build(ctx); !f.Sources.ActivityWatch.OK || f.Info == nil {
		t.Fatalf("first frame: %+v", f.Sources.ActivityWatch)
	}
	w.srv.CloseClientConnections()
	w.srv.Close()
	clock.add(time.Second)
	f := b.Build(ctx)
	if f.Sources.ActivityWatch.OK || f.Info != nil || f.Buckets != nil {
		t.Fatalf("a down server looks up behind the cached info: source %+v, info %v", f.Sources.ActivityWatch, f.Info)
	}
	if f.Now.Window.Reason == "" || f.Now.Window.App != "" {
		t.Fatalf("the window of a down server: %+v", f.Now.Window)
	}
	if err := b.ReadAW(ctx); err == nil || errors.As(err, new(*UnreadableError)) {
		t.Fatalf("health's read of a down server: %v", err)
	}
}
