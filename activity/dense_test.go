package activity

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/nowframe"
)

// TestDensePeriodRefused: a period holding more events than a call may
// hold (a smaller bound here: 500 for a week of 6,000 window events) fails
// with a *DenseError naming the period and asking a shorter one, and lets
// a period within the bound answer.
func TestDensePeriodRefused(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: env.h.End.Add(time.Hour)}
	s := newService(t, env, clk, ServiceOptions{maxEvents: 500})
	ctx := context.Background()
	_, err := s.Summary(ctx, SummaryQuery{Period: "last_7d"})
	var de *DenseError
	if !errors.As(err, &de) || de.Max != 500 || !strings.Contains(err.Error(), "period too dense") ||
		!strings.Contains(err.Error(), "ask a shorter period") || !de.End.After(de.Start) {
		t.Fatalf("a week of 6,000 events with a bound of 500: %v", err)
	}
	if _, err := s.Summary(ctx, SummaryQuery{Period: "last_1h"}); err != nil {
		t.Fatalf("an hour within the bound: %v", err)
	}
}

// TestCallsTakeTurns: beyond MaxCalls (1 here) a call waits for the one
// computing, saying so through its progress, and gives up when its ctx
// ends; once the first is done the next one runs.
func TestCallsTakeTurns(t *testing.T) {
	block, blocked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				once.Do(func() { close(blocked) })
				<-block
			}
			h.ServeHTTP(w, r)
		})
	}
	env := newSimEnv(t, envOptions{week: smallWeek, wrap: wrap})
	unblock := sync.OnceFunc(func() { close(block) })
	t.Cleanup(unblock) // before the server closes
	clk := &clock{t: env.h.End.Add(time.Hour)}
	s := newService(t, env, clk, ServiceOptions{maxCalls: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"})
		first <- err
	}()
	<-blocked // the first call is reading
	waiting := make(chan struct{})
	var wonce sync.Once
	wctx, wcancel := context.WithCancel(ctx)
	second := make(chan error, 1)
	go func() {
		_, err := s.Summary(wctx, SummaryQuery{Period: "yesterday", Progress: func(_, _ float64, msg string) {
			if strings.Contains(msg, "waiting for another activity call") {
				wonce.Do(func() { close(waiting) })
			}
		}})
		second <- err
	}()
	select {
	case <-waiting:
	case <-ctx.Done():
		t.Fatal("the second call never waited for the first")
	}
	wcancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting call, cancelled: %v", err)
	}
	unblock()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summary(ctx, SummaryQuery{Period: "yesterday"}); err != nil {
		t.Fatalf("after the first: %v", err)
	}
}

// TestDaysLetGo: once a call's units are computed, no day's raw events
// are held by it any more (each went as the last unit reading it was
// computed), and the budget counts none.
func TestDaysLetGo(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: env.h.End.Add(time.Hour)}
	s := newService(t, env, clk, ServiceOptions{cacheBytes: -1})
	ctx := context.Background()
	m, err := s.readMeta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := clk.now()
	spec, err := ParseSpec("last_7d", "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewCalendar(s.opts.Zone(), m.Settings).Resolve(spec, now)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := s.inputsOf(m, []nowframe.Selection{m.Selection}, false)
	days, plans := s.plan(p, now)
	b := &budget{max: 1 << 40, cancel: func(error) {}}
	ld := newPeriodEvents(in, days, b)
	c := s.newComputer(ctx, in, ld, plans, now, nil)
	if err := s.loadInto(ctx, ld, in, now, nil, c.dayDone); err != nil {
		t.Fatal(err)
	}
	units, read := c.finish(), 0
	for t := range ld.reads {
		for d := range ld.reads[t] {
			read += ld.reads[t][d].count
		}
	}
	for _, u := range units {
		if u == nil {
			t.Fatal("a unit was not computed")
		}
	}
	for tg := range ld.reads {
		for d, r := range ld.reads[tg] {
			if r.events != nil {
				t.Errorf("target %d day %d: %d events still held", tg, d, len(r.events))
			}
		}
	}
	if read == 0 || b.held.Load() != 0 {
		t.Errorf("%d events read, %d still counted", read, b.held.Load())
	}
}

// TestPieceTooLarge: when even the smallest piece of a day (22.5 min)
// holds more than the body limit of events (anything can write them), the
// period still answers: that stretch is left out, with a note saying so
// and when, never a failure of the whole period.
func TestPieceTooLarge(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek, client: aw.Options{MaxBodyBytes: 4 << 10}})
	clk := &clock{t: env.h.End.Add(time.Hour)}
	s := newService(t, env, clk, ServiceOptions{})
	sum, err := s.Summary(context.Background(), SummaryQuery{Period: "yesterday"})
	if err != nil {
		t.Fatalf("a piece over the body limit failed the period: %v", err)
	}
	left := 0
	for _, n := range sum.Notes {
		if strings.Contains(n, "than awbridge reads in so short a time (activitywatch.max_body_bytes): that time is left out") {
			left++
		}
	}
	if left == 0 || left > maxHoleNotes || sum.ActiveS <= 0 {
		t.Fatalf("active %.1f s, notes %q: want some time read and the stretches left out said", sum.ActiveS, sum.Notes)
	}
	// Kept days keep their note.
	again, err := s.Summary(context.Background(), SummaryQuery{Period: "yesterday"})
	if err != nil || !slices.Equal(again.Notes, sum.Notes) || again.ActiveS != sum.ActiveS {
		t.Fatalf("asked again: %v, notes %q, active %.1f s", err, again.Notes, again.ActiveS)
	}
}
