package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
)

// BenchmarkFreshFrameSlowSources: ActivityWatch answers every request in
// 50 ms and the sidecar in 80 ms; a fresh frame should cost about the
// slowest source, not the sum.
func BenchmarkFreshFrameSlowSources(b *testing.B) {
	xs, err := awfixture.Load()
	if err != nil {
		b.Fatal(err)
	}
	fs := awfixture.NewServer(xs)
	aw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		fs.ServeHTTP(w, r)
	}))
	defer aw.Close()
	sc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(80 * time.Millisecond)
		w.Write([]byte(`{"ok":true,"preflight_ok":true}`))
	}))
	defer sc.Close()
	c := config.Defaults()
	c.AW.URL, c.Sidecar.URL = aw.URL, sc.URL
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	req := toolbus.Request{Direct: true, Name: "nowframe.build", Args: json.RawMessage(`{"reason":"bench"}`)}
	e.Call(ctx, req) // first build learns the buckets
	b.ResetTimer()
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		out := e.Call(ctx, req)
		total += time.Since(t0)
		if out.Err != nil {
			b.Fatal(out.Err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/frame")
}

func benchEngine(b *testing.B, req toolbus.Request) {
	xs, err := awfixture.Load()
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(awfixture.NewServer(xs))
	defer srv.Close()
	c := config.Defaults()
	c.AW.URL = srv.URL
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
	e.Call(ctx, req)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if out := e.Call(ctx, req); out.Err != nil {
			b.Fatal(out.Err)
		}
	}
}

// BenchmarkCallWarmNowframe is the in-process cost of a warm
// nowframe_build through the whole pipeline (envelope included).
func BenchmarkCallWarmNowframe(b *testing.B) {
	benchEngine(b, toolbus.Request{Name: "nowframe_build", Args: json.RawMessage(`{"reason":"bench","max_age_ms":3600000}`)})
}

// BenchmarkCallSystemHealth is the in-process cost of system_health.
func BenchmarkCallSystemHealth(b *testing.B) {
	benchEngine(b, toolbus.Request{Name: "system_health", Args: json.RawMessage(`{}`)})
}
