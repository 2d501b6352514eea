package nowframe

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// ActivityWatch answers its server info and bucket list but one
// bucket's events cannot be read: the frame says that bucket is
// unreadable while what was read stays true (no AFK bucket exists, so
// afk.reason is no_afk_bucket, not unreadable, and aw_info is there);
// ReadAW, health's check, fails the same way with an UnreadableError
// naming the bucket; and the poller's probe of an open circuit reads the
// events too, so it does not take the server for recovered.
func TestEventReadsFailWhileActivityWatchAnswers(t *testing.T) {
	clock := &faultClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	w := newSimWorld(t)
	w.watcher(winDesk, "currentwindow", `{"app":"Code","title":"main.go"}`, clock.now())
	w.handle("/api/0/buckets/"+winDesk+"/events", func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusInternalServerError)
	})
	b := faultBuilder(t, w.srv.URL, clock, 2*time.Second, nil)
	ctx := context.Background()

	f := b.Build(ctx)
	if f.Sources.ActivityWatch.OK || f.Info == nil || f.Now.Window.Reason != ReasonUnreadable || f.Now.AFK.Reason != ReasonNoAFKBucket {
		t.Fatalf("frame: info %v, sources %+v, window %q, afk %q", f.Info, f.Sources.ActivityWatch, f.Now.Window.Reason, f.Now.AFK.Reason)
	}
	if f.Now.Summary != "Unknown: the window watcher's events could not be read (see sources.activitywatch.error)" {
		t.Errorf("summary %q", f.Now.Summary)
	}

	var ue *UnreadableError
	if err := b.ReadAW(ctx); !errors.As(err, &ue) || !slices.Equal(ue.Buckets, []string{winDesk}) {
		t.Fatalf("ReadAW: %v, want an UnreadableError naming %s", err, winDesk)
	}

	// Three failures open the circuit; the probe meets the same failure.
	b.Build(ctx)
	b.Build(ctx)
	if !b.AWDown() {
		t.Fatal("three failed frames left the circuit closed")
	}
	if err := b.ProbeAW(ctx); err == nil || !b.AWDown() {
		t.Fatalf("the probe took a server whose events fail for recovered: %v, down %v", err, b.AWDown())
	}
	w.handle("/api/0/buckets/"+winDesk+"/events", nil)
	if err := b.ProbeAW(ctx); err != nil || b.AWDown() {
		t.Fatalf("the probe once the events read again: %v, down %v", err, b.AWDown())
	}
}
