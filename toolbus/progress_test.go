package toolbus

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// step is one moment of a scripted tool: it sleeps, then reports.
type step struct {
	after       time.Duration
	done, total float64
	msg         string
}

// seen is one update as the caller received it, with when (in the
// bubble's fake time, from the call's start).
type seen struct {
	at time.Duration
	u  ProgressUpdate
}

// runScripted runs a tool that follows script then returns after ret,
// inside a synctest bubble, and returns the updates the caller received.
func runScripted(t *testing.T, script []step, ret time.Duration) []seen {
	t.Helper()
	var got []seen
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Options{}, &Tool{Name: "scripted", Timeout: time.Minute, Run: func(_ context.Context, c *Call) (Result, error) {
			for _, s := range script {
				time.Sleep(s.after)
				c.Progress(s.done, s.total, s.msg)
			}
			time.Sleep(ret)
			return Result{Body: []byte(`{}`)}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var mu sync.Mutex
		out := b.Call(context.Background(), Request{Name: "scripted", Progress: func(u ProgressUpdate) {
			mu.Lock()
			got = append(got, seen{time.Since(start), u})
			mu.Unlock()
		}})
		if out.Err != nil {
			t.Fatalf("call: %v", out.Err)
		}
		returned := len(got)
		synctest.Wait() // any timer left would fire now, in the bubble
		time.Sleep(time.Hour)
		if len(got) != returned {
			t.Fatalf("an update came after the call returned: %+v", got[returned:])
		}
	})
	return got
}

// TestProgressGate: what a caller receives of a tool's reports: nothing
// from a call quicker than a second, the latest report at one second, then
// at most four a second, growing, never after the call returned.
func TestProgressGate(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		script []step
		ret    time.Duration
		want   []seen
	}{
		{"quick call: nothing", []step{{0, 1, 3, "a"}, {500 * ms, 2, 3, "b"}}, 300 * ms, nil},
		{"the latest report at one second", []step{{0, 1, 4, "fetching"}, {500 * ms, 2, 4, "day 2"}}, time.Second,
			[]seen{{time.Second, ProgressUpdate{2, 4, "day 2"}}}},
		{"a report after one second goes at once", []step{{1500 * ms, 1, 0, "x"}}, time.Second,
			[]seen{{1500 * ms, ProgressUpdate{1, 0, "x"}}}},
		{"then at most one per 250 ms, the latest winning", []step{
			{1100 * ms, 1, 10, "1"}, {10 * ms, 2, 10, "2"}, {100 * ms, 3, 10, "3"}, {200 * ms, 4, 10, "4"}, {300 * ms, 5, 10, "5"},
		}, time.Second, []seen{
			{1100 * ms, ProgressUpdate{1, 10, "1"}}, {1350 * ms, ProgressUpdate{3, 10, "3"}},
			{1600 * ms, ProgressUpdate{4, 10, "4"}}, {1850 * ms, ProgressUpdate{5, 10, "5"}},
		}},
		{"only growing progress", []step{{1100 * ms, 5, 0, "5"}, {300 * ms, 3, 0, "3"}, {300 * ms, 5, 0, "5 again"}, {300 * ms, 6, 0, "6"}}, 0,
			[]seen{{1100 * ms, ProgressUpdate{5, 0, "5"}}, {2000 * ms, ProgressUpdate{6, 0, "6"}}}},
		{"a report held back when the call returns is dropped", []step{{1100 * ms, 1, 2, "1"}, {50 * ms, 2, 2, "2"}}, 100 * ms,
			[]seen{{1100 * ms, ProgressUpdate{1, 2, "1"}}}},
		{"numbers that are none", []step{{1100 * ms, math.NaN(), 1, "nan"}, {0, math.Inf(1), 1, "inf"}, {0, 2, -5, "negative total"}, {0, 3, math.NaN(), "nan total"}}, time.Second,
			[]seen{{1100 * ms, ProgressUpdate{2, 0, "negative total"}}, {1350 * ms, ProgressUpdate{3, 0, "nan total"}}}},
		{"the message cleaned and bounded", []step{{1100 * ms, 1, 0, "\x1b[31mred\u202e " + strings.Repeat("é", 150)}}, 0,
			[]seen{{1100 * ms, ProgressUpdate{1, 0, "[31mred " + strings.Repeat("é", 94) + "…"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runScripted(t, tc.script, tc.ret)
			if len(got) != len(tc.want) {
				t.Fatalf("updates %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("update %d: %+v, want %+v (all: %+v)", i, got[i], tc.want[i], got)
				}
			}
		})
	}
}

// TestProgressNobodyListens: without a sink, Progress is a nil check, and
// a Call built by hand (tests, help) may report too.
func TestProgressNobodyListens(t *testing.T) {
	b, err := New(Options{}, &Tool{Name: "reports", Run: func(_ context.Context, c *Call) (Result, error) {
		c.Progress(1, 2, "x")
		return Result{Body: []byte(`{}`)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out := b.Call(context.Background(), Request{Name: "reports"}); out.Err != nil {
		t.Fatal(out.Err)
	}
	c := &Call{}
	c.Progress(1, 2, "x")
	if n := testing.AllocsPerRun(100, func() { c.Progress(1, 2, "x") }); n != 0 {
		t.Fatalf("Progress with nobody listening allocates %v times", n)
	}
}

// TestProgressAfterReturn: a goroutine the tool left behind reports after
// Run returned: the caller hears nothing of it.
func TestProgressAfterReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := make(chan *Call, 1)
		b, err := New(Options{}, &Tool{Name: "leaves", Run: func(_ context.Context, c *Call) (Result, error) {
			time.Sleep(2 * time.Second)
			c.Progress(1, 0, "in time")
			late <- c
			return Result{Body: []byte(`{}`)}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		var got []ProgressUpdate
		b.Call(context.Background(), Request{Name: "leaves", Progress: func(u ProgressUpdate) { got = append(got, u) }})
		c := <-late
		c.Progress(2, 0, "too late")
		synctest.Wait()
		if len(got) != 1 || got[0].Message != "in time" {
			t.Fatalf("updates %+v, want only the one before the return", got)
		}
	})
}
