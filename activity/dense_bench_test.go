package activity

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// denseReader is an ActivityWatch holding, for host "dense", a window
// event every Every (titles cycling through a few) and one not-afk event
// per hour, generated on each read; a read of more than MaxEvents events
// is refused as too large, as the client's 8 MiB body limit refuses ~40k
// window events.
type denseReader struct {
	Every     time.Duration
	MaxEvents int
	Now       time.Time
}

const denseWindow, denseAFK = "aw-watcher-window_dense", "aw-watcher-afk_dense"

func (r *denseReader) Info(context.Context) (aw.Info, error) {
	return aw.Info{Hostname: "dense", Version: "v0.13.2"}, nil
}

func (r *denseReader) Buckets(context.Context) (map[string]aw.Bucket, error) {
	created := r.Now.AddDate(-1, 0, 0)
	return map[string]aw.Bucket{
		denseWindow: {ID: denseWindow, Type: aw.TypeWindow, Hostname: "dense", Created: created, LastUpdated: r.Now},
		denseAFK:    {ID: denseAFK, Type: aw.TypeAFK, Hostname: "dense", Created: created, LastUpdated: r.Now},
	}, nil
}

func (r *denseReader) Settings(context.Context) (aw.Settings, error) { return aw.Settings{}, nil }

func (r *denseReader) Events(_ context.Context, id string, q aw.EventQuery) ([]aw.Event, error) {
	step := r.Every
	if id == denseAFK {
		step = time.Hour
	}
	first := q.Start.Truncate(step)
	if n := int(q.End.Sub(first) / step); r.MaxEvents > 0 && n > r.MaxEvents {
		return nil, &aw.Error{Op: "events", Kind: aw.TooLarge, Message: "body exceeds the limit"}
	}
	var out []aw.Event
	for t := first; t.Before(q.End) && t.Before(r.Now); t = t.Add(step) {
		data := `{"status":"not-afk"}`
		if id == denseWindow {
			k := t.UnixNano() / int64(step) % 7
			data = fmt.Sprintf(`{"app":"App%d","title":"window %d of a dense day"}`, k, k)
		}
		n := int64(len(out))
		out = append(out, aw.Event{ID: &n, Timestamp: t.UTC(), Duration: step.Seconds(), Data: json.RawMessage(data)})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i] // newest first, as served
	}
	return out, nil
}

// peakHeap samples the live heap every millisecond until stop is called,
// which returns the highest sample in MiB.
func peakHeap() (stop func() float64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Go(func() {
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	})
	return func() float64 {
		close(done)
		wg.Wait()
		return float64(peak) / (1 << 20)
	}
}

// BenchmarkDensePeakHeap is one summary call over days anyone can fill
// with events (ActivityWatch takes them from any local process), with the
// peak live heap it took: yesterday at 2.16 M events (over the call's
// bound: refused), yesterday at 1 M, and a week at 1 M a day.
func BenchmarkDensePeakHeap(b *testing.B) {
	for _, bc := range []struct {
		name   string
		every  time.Duration
		period string
	}{
		{"yesterday/2.16M", 40 * time.Millisecond, "yesterday"},
		{"yesterday/1M", 86400 * time.Microsecond, "yesterday"},
		{"last_7d/1M-a-day", 86400 * time.Microsecond, "last_7d"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			now := time.Date(2026, 3, 24, 12, 0, 0, 0, time.UTC)
			r := &denseReader{Every: bc.every, MaxEvents: 40000, Now: now}
			var peak float64
			var err error
			for b.Loop() {
				s := NewService(ServiceOptions{AW: r, Source: testSource(), Now: func() time.Time { return now }, Zone: utc})
				stop := peakHeap()
				_, err = s.Summary(context.Background(), SummaryQuery{Period: bc.period})
				peak = max(peak, stop())
			}
			b.ReportMetric(peak, "peak-MiB")
			if err != nil {
				b.Logf("%s: %v", bc.name, err)
			}
		})
	}
}
