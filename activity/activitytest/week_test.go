package activitytest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
)

// TestWeekShape checks the default week: exactly 50,000 window events,
// deterministic, every bucket's events in order without overlap, sessions
// covered by AFK events, browsers' tabs present, ms precision throughout.
func TestWeekShape(t *testing.T) {
	h := Week(WeekOptions{})
	if again := Week(WeekOptions{}); !reflect.DeepEqual(h, again) {
		t.Fatal("two weeks from the same options differ")
	}
	if other := Week(WeekOptions{Seed: 2}); reflect.DeepEqual(h.Window.Events[:10], other.Window.Events[:10]) {
		t.Error("another seed gives the same events")
	}
	if n := len(h.Window.Events); n != DefaultWindowEvents {
		t.Errorf("%d window events, want %d", n, DefaultWindowEvents)
	}
	if len(h.AFK.Events) < 7*3 || len(h.Chrome.Events) < 5000 || len(h.Firefox.Events) < 2000 {
		t.Errorf("afk %d, chrome %d, firefox %d events: too few", len(h.AFK.Events), len(h.Chrome.Events), len(h.Firefox.Events))
	}
	for _, b := range h.Buckets() {
		var prevEnd time.Time
		for i, e := range b.Events {
			if e.Duration <= 0 || e.Timestamp.Before(prevEnd) {
				t.Fatalf("%s event %d: %v + %vs overlaps the one before (ends %v) or is empty", b.ID, i, e.Timestamp, e.Duration, prevEnd)
			}
			if e.Timestamp.Nanosecond()%int(time.Millisecond) != 0 || e.Timestamp.Before(h.Start) || e.End().After(h.End) {
				t.Fatalf("%s event %d: %v not ms-aligned or outside the week", b.ID, i, e.Timestamp)
			}
			prevEnd = e.End()
		}
	}
	afk := 0.0
	for _, e := range h.AFK.Events {
		if e.Str("status") == "afk" {
			afk += e.Duration
		}
	}
	if afk < 5*3600 {
		t.Errorf("only %.0f s away in a week", afk)
	}
	small := Week(WeekOptions{WindowEvents: 300, Days: 2, Start: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)})
	if len(small.Window.Events) != 300 {
		t.Errorf("%d window events, want 300", len(small.Window.Events))
	}
}

// TestLoadIntoSimulator loads a small history into the simulator through
// its REST API and reads it back with the client, unchanged.
func TestLoadIntoSimulator(t *testing.T) {
	h := Week(WeekOptions{WindowEvents: 2000, Days: 2})
	sim := awsim.New(awsim.Options{Hostname: h.Host, Now: func() time.Time { return h.End.Add(time.Minute) }})
	ctx := t.Context()
	if err := h.Load(ctx, sim); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := aw.New(aw.Options{BaseURL: srv.URL, MaxBodyBytes: 64 << 20, AttemptTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	buckets, err := c.Buckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range h.Buckets() {
		meta, ok := buckets[b.ID]
		if !ok || meta.Type != b.Type || meta.Hostname != h.Host {
			t.Errorf("bucket %s: %+v", b.ID, meta)
			continue
		}
		if want := b.Events[len(b.Events)-1].End(); !meta.LastUpdated.Equal(want) {
			t.Errorf("%s last_updated %v, want %v", b.ID, meta.LastUpdated, want)
		}
		got, err := c.Events(context.Background(), b.ID, aw.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(b.Events) {
			t.Fatalf("%s: %d events read, %d written", b.ID, len(got), len(b.Events))
		}
		for i, e := range b.Events {
			g := got[len(got)-1-i]
			if !g.Timestamp.Equal(e.Timestamp) || g.Duration != e.Duration || !sameJSON(g.Data, e.Data) {
				t.Fatalf("%s event %d: read %v %v %s, wrote %v %v %s", b.ID, i, g.Timestamp, g.Duration, g.Data, e.Timestamp, e.Duration, e.Data)
			}
		}
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
