package activity

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/nowframe"
)

// BenchmarkSummaryWeek answers activity_summary for this_week over the
// generated week (50,000 window events, AFK, two browsers) from the
// simulator over loopback HTTP, at the end of the week's last day (six
// closed days and one open):
//
//   - cold: a new service each time, nothing kept: every day read and
//     computed;
//   - warm: the same service again: closed days and hours from the store,
//     the open day's newest minutes read again and its last hours
//     computed;
//   - raw-fetch: the period's events read as a cold call reads them (by
//     days, decoded, stitched) and nothing computed, the yardstick of
//     the cold answer;
//   - compute: the canonical computation of the period's units from
//     events in memory, nothing kept.
func BenchmarkSummaryWeek(b *testing.B) {
	env := newSimEnv(b, envOptions{client: aw.Options{MaxBodyBytes: 64 << 20}})
	clk := &clock{t: env.now}
	ctx := context.Background()
	q := SummaryQuery{Period: "this_week"}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := newService(b, env, clk, ServiceOptions{cacheBytes: -1})
			if _, err := s.Summary(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		s := newService(b, env, clk, ServiceOptions{})
		if _, err := s.Summary(ctx, q); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := s.Summary(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	// week is a cold service's plan of this_week.
	week := func(b *testing.B) (*Service, Period, inputs, []dayPlan, []unitPlan) {
		s := newService(b, env, clk, ServiceOptions{cacheBytes: -1})
		m, err := s.readMeta(ctx)
		if err != nil {
			b.Fatal(err)
		}
		spec, err := ParseSpec("this_week", "", "")
		if err != nil {
			b.Fatal(err)
		}
		p, err := NewCalendar(s.opts.Zone(), m.Settings).Resolve(spec, clk.now())
		if err != nil {
			b.Fatal(err)
		}
		in, _ := s.inputsOf(m, []nowframe.Selection{m.Selection}, false)
		days, plans := s.plan(p, clk.now())
		return s, p, in, days, plans
	}
	b.Run("raw-fetch", func(b *testing.B) {
		s, _, in, days, _ := week(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := s.loadInto(ctx, newPeriodEvents(in, days, nil), in, clk.now(), nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compute", func(b *testing.B) {
		s, p, in, days, plans := week(b)
		now := clk.now()
		ld := newPeriodEvents(in, days, nil)
		if err := s.loadInto(ctx, ld, in, now, nil, nil); err != nil {
			b.Fatal(err)
		}
		read := make([][]dayRead, len(ld.reads))
		for t := range read {
			read[t] = slices.Clone(ld.reads[t])
		}
		b.ReportAllocs()
		for b.Loop() {
			for t := range read {
				copy(ld.reads[t], read[t]) // the computer lets each day go
			}
			c := s.newComputer(ctx, in, ld, plans, now, nil)
			for d := range days {
				c.dayDone(d, false)
			}
			units := c.finish()
			pr := &prepared{period: p, now: now, units: units}
			_ = pr.summary(GroupByApp, 10, false)
		}
	})
}

// BenchmarkWarmWeekRevalidate is a repeated this_week in serve over the
// generated week (50,000 window events, six closed days kept), with the
// requests each call sends: within Revalidate of the last check (what
// almost every call is), and with a check on every call (Revalidate
// 1 ns; nothing changed: one count per bucket), the cost a call pays once
// every Revalidate.
func BenchmarkWarmWeekRevalidate(b *testing.B) {
	var requests atomic.Int64
	env := newSimEnv(b, envOptions{client: aw.Options{MaxBodyBytes: 64 << 20},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				next.ServeHTTP(w, r)
			})
		}})
	clk := &clock{t: env.now}
	ctx := context.Background()
	q := SummaryQuery{Period: "this_week"}
	for _, bc := range []struct {
		name  string
		every time.Duration
	}{{"within-interval", 0}, {"check-every-call", time.Nanosecond}} {
		b.Run(bc.name, func(b *testing.B) {
			s := newService(b, env, clk, ServiceOptions{revalidate: bc.every, MetaTTL: time.Hour})
			if _, err := s.Summary(ctx, q); err != nil {
				b.Fatal(err)
			}
			requests.Store(0)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Summary(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
		})
	}
}
