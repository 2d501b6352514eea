package activity

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
)

// BenchmarkFetchWeek reads the generated week (50,000 window events, AFK,
// two browsers: ~65,000 events) from the simulator over loopback HTTP, as
// last_week: in day-sized pieces with 4 or 1 reads at once, and, for
// comparison, in one read per bucket (4 at once), which needs a body limit
// of ~10 MiB instead of the client's default 8 MiB. The simulator's own
// work (serializing events Python-style) is most of the time.
func BenchmarkFetchWeek(b *testing.B) {
	week := activitytest.WeekOptions{}
	for _, bc := range []struct {
		name     string
		parallel int
		whole    bool
		cached   bool
	}{
		{"days/parallel=4", 4, false, false},
		{"days/parallel=1", 1, false, false},
		{"whole-week/one-read-per-bucket", 4, true, false},
		// The simulator's answers replayed from memory: what is left is
		// the bridge's own cost (HTTP, decoding, clipping, joining).
		{"days/parallel=4/replayed-answers", 4, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var wrap func(http.Handler) http.Handler
			if bc.cached {
				wrap = replay
			}
			env := newSimEnv(b, envOptions{week: week, client: aw.Options{MaxBodyBytes: 64 << 20},
				fetcher: FetcherOptions{Parallel: bc.parallel}, wrap: wrap})
			ctx := context.Background()
			m, err := env.f.Meta(ctx)
			if err != nil {
				b.Fatal(err)
			}
			c := calendar(b, "Europe/Berlin", "", "")
			p := resolve(b, c, "last_week", "", "", time.Date(2026, 3, 30, 10, 0, 0, 0, c.Zone.Loc))
			if bc.cached { // record the answers once
				if _, err := env.f.Events(ctx, m, p); err != nil {
					b.Fatal(err)
				}
			}
			events := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if bc.whole {
					events = wholeWeek(b, env.client, m, p)
					continue
				}
				raw, err := env.f.Events(ctx, m, p)
				if err != nil {
					b.Fatal(err)
				}
				events = len(raw.Window) + len(raw.AFK)
				for _, w := range raw.Web {
					events += len(w.Events)
				}
			}
			b.ReportMetric(float64(events), "events/op")
		})
	}
}

// wholeWeek reads each selected bucket's events of p in one request, the
// buckets concurrently.
func wholeWeek(b *testing.B, c *aw.Client, m *Meta, p Period) int {
	ids := append([]string{m.Selection.Window, m.Selection.AFK}, m.Selection.Web...)
	var wg sync.WaitGroup
	counts := make([]int, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			evs, err := c.Events(context.Background(), id, aw.EventQuery{Start: p.Start, End: p.End})
			if err != nil {
				b.Error(err)
			}
			counts[i] = len(evs)
		})
	}
	wg.Wait()
	n := 0
	for _, k := range counts {
		n += k
	}
	return n
}

// replay answers each GET from memory after serving it once.
func replay(next http.Handler) http.Handler {
	var (
		mu    sync.Mutex
		cache = map[string][]byte{}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := cache[r.URL.RequestURI()]
		mu.Unlock()
		if !ok {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes())
				return
			}
			body = rec.Body.Bytes()
			mu.Lock()
			cache[r.URL.RequestURI()] = body
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

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
//   - raw-fetch: the period's raw events read alone (Fetcher.Events), the
//     yardstick of the cold answer;
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
			s := newService(b, env, clk, ServiceOptions{CacheBytes: -1})
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
	b.Run("raw-fetch", func(b *testing.B) {
		m, err := env.f.Meta(ctx)
		if err != nil {
			b.Fatal(err)
		}
		p, err := m.Calendar(Zone{Name: "Europe/Berlin", Loc: env.h.Start.Location()}).Resolve(mustSpec(b, "this_week"), clk.now())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := env.f.Events(ctx, m, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compute", func(b *testing.B) {
		s := newService(b, env, clk, ServiceOptions{CacheBytes: -1})
		m, err := s.f.Meta(ctx)
		if err != nil {
			b.Fatal(err)
		}
		now := clk.now()
		p, err := m.Calendar(s.opts.Zone).Resolve(mustSpec(b, "this_week"), now)
		if err != nil {
			b.Fatal(err)
		}
		in, _ := s.inputsOf(m)
		days, plans := s.plan(p, now)
		ld := newPeriodEvents(in, days, nil)
		if err := s.loadInto(ctx, ld, in, now, nil, nil); err != nil {
			b.Fatal(err)
		}
		read := make([][][]ev, len(ld.events))
		for t := range read {
			read[t] = slices.Clone(ld.events[t])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			for t := range read {
				copy(ld.events[t], read[t]) // the computer lets each day go
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

func mustSpec(b *testing.B, period string) Spec {
	s, err := ParseSpec(period, "", "")
	if err != nil {
		b.Fatal(err)
	}
	return s
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
			s := newService(b, env, clk, ServiceOptions{Revalidate: bc.every, MetaTTL: time.Hour})
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
