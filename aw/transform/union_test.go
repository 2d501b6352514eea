package transform

import (
	"context"
	"testing"
)

// TestUnionNoOverlap: the cases of aw-core's test_union_no_overlap (an
// hour as 60 here), event by event, and those where aw-core's loop counts
// time twice.
func TestUnionNoOverlap(t *testing.T) {
	const h = 60
	alt := func(data string, offset int64) []Event { // three hours apart by two, from offset
		return []Event{ev(offset, h, "d", data), ev(offset+2*h, h, "d", data), ev(offset+4*h, h, "d", data)}
	}
	for _, tc := range []struct {
		name  string
		a, b  []Event
		want  []Event
		total int64
	}{
		{"b half an hour later", alt("1", 0), alt("2", h/2), []Event{
			ev(0, h, "d", "1"), ev(h, h/2, "d", "2"), ev(2*h, h, "d", "1"), ev(3*h, h/2, "d", "2"),
			ev(4*h, h, "d", "1"), ev(5*h, h/2, "d", "2")}, 4*h + h/2},
		{"b half an hour earlier", alt("2", h/2), alt("1", 0), []Event{
			ev(0, h/2, "d", "1"), ev(h/2, h, "d", "2"), ev(2*h, h/2, "d", "1"), ev(2*h+h/2, h, "d", "2"),
			ev(4*h, h/2, "d", "1"), ev(4*h+h/2, h, "d", "2")}, 4*h + h/2},
		{"b one long event", alt("1", 0), []Event{ev(0, 5*h, "d", "2")}, []Event{
			ev(0, h, "d", "1"), ev(h, h, "d", "2"), ev(2*h, h, "d", "1"), ev(3*h, h, "d", "2"), ev(4*h, h, "d", "1")}, 5 * h},
		{"b within a", []Event{ev(0, 10, "d", "1")}, []Event{ev(2, 3, "d", "2")}, []Event{ev(0, 10, "d", "1")}, 10},
		{"touching", []Event{ev(0, 10, "d", "1")}, []Event{ev(10, 5, "d", "2")}, []Event{ev(0, 10, "d", "1"), ev(10, 5, "d", "2")}, 15},
		// aw-core keeps B2 whole here (counted twice) and B3 from 100.
		{"one event of a covers several of b", []Event{ev(0, 100, "d", "1")},
			[]Event{ev(50, 10, "d", "2"), ev(70, 10, "d", "2"), ev(90, 30, "d", "2")},
			[]Event{ev(0, 100, "d", "1"), ev(100, 20, "d", "2")}, 120},
		{"b between events of a", []Event{ev(0, 10, "d", "1"), ev(20, 10, "d", "1")}, []Event{ev(5, 30, "d", "2")},
			[]Event{ev(0, 10, "d", "1"), ev(10, 10, "d", "2"), ev(20, 10, "d", "1"), ev(30, 5, "d", "2")}, 35},
		{"a empty", nil, []Event{ev(3, 4, "d", "2")}, []Event{ev(3, 4, "d", "2")}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UnionNoOverlap(tc.a, tc.b)
			if !sameEvents(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			var total int64
			for _, d := range durations(got) {
				total += d
			}
			if total != tc.total {
				t.Errorf("total %d, want %d", total, tc.total)
			}
		})
	}
}

// TestCanonicalHosts: two devices active at once count once, the first
// host's events win the overlap; a host without an AFK watcher (the
// Android app) counts its window time as active.
func TestCanonicalHosts(t *testing.T) {
	desk := Input{Window: []Event{ev(0, 100*Second, "app", "Code", "title", "a")},
		AFK: []Event{ev(0, 100*Second, "status", "not-afk")}}
	phone := Input{Window: []Event{ev(50*Second, 100*Second, "app", "Chrome", "title", "b")}, NoAFK: true}
	res, err := CanonicalHosts(context.Background(), []Input{desk, phone}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := durations(res.Events); len(got) != 2 || got[0] != 100*Second || got[1] != 50*Second {
		t.Fatalf("events %v: want Code 100 s then Chrome's last 50 s", res.Events)
	}
	if app, _ := res.Events[1].Data.Str("app"); app != "Chrome" || res.Events[1].Start != 100*Second {
		t.Errorf("second event %v: want Chrome from 100 s", res.Events[1])
	}
	var active int64
	for _, e := range res.NotAFK {
		active += e.Duration
	}
	if active != 150*Second {
		t.Errorf("active time %d, want 150 s", active)
	}
	phone.NoAFK = false
	if res, _ := CanonicalContext(context.Background(), phone, Options{}); len(res.Events) != 0 {
		t.Errorf("without NoAFK, a host without AFK events counts %v", res.Events)
	}
}
