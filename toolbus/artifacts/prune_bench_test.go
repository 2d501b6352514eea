package artifacts

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPruneNothingToDo is the cost of the periodic prune that finds
// everything within bounds: 1,000 runs of 4 calls each (8,000 files) are
// measured and kept.
func BenchmarkPruneNothingToDo(b *testing.B) {
	root := b.TempDir()
	s := newStore(b, Options{Root: root, MaxAge: time.Hour, MaxBytes: 1 << 40})
	for r := range 1000 {
		for c := range 4 {
			if _, _, err := s.WriteCall("run-"+strconv.Itoa(r), "call-"+strconv.Itoa(c), []byte("[LEGEND]\n"), []byte(`{}`)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		st, err := s.prune(context.Background())
		if err != nil || st.Removed != 0 || st.Runs != 1000 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// BenchmarkPruneIfDueNotDue is what a process pays at start when another
// pass ended less than the interval ago: open, lock and stat the stamp.
func BenchmarkPruneIfDueNotDue(b *testing.B) {
	root := b.TempDir()
	s := newStore(b, Options{Root: root, MaxAge: time.Hour})
	if _, _, err := s.WriteCall("run", "call", []byte("[LEGEND]\n"), []byte(`{}`)); err != nil {
		b.Fatal(err)
	}
	if _, ran, err := s.PruneIfDue(b.Context(), time.Hour); !ran || err != nil {
		b.Fatal(ran, err)
	}
	for b.Loop() {
		if _, ran, err := s.PruneIfDue(b.Context(), time.Hour); ran || err != nil {
			b.Fatal(ran, err)
		}
	}
}
