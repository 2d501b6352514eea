package state

import (
	"encoding/json"
	"fmt"
	"testing"
)

var benchValue = json.RawMessage(`{"app":"firefox","title":"Issue 3","duration":12.5,"tags":["a","b"]}`)

func BenchmarkSetSession(b *testing.B) {
	s := open(b, Options{})
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("run/%d/result", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Set(keys[i%len(keys)], benchValue, ScopeSession); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetSession(b *testing.B) {
	s := open(b, Options{})
	s.Set("k", benchValue, ScopeSession)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, err := s.Get("k", ScopeAny); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkSetPersistent includes the fsyncs of the file and the folder, so
// it measures the disk more than the code.
func BenchmarkSetPersistent(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s, _ := persistentStore(b, Options{})
			for i := range n - 1 {
				s.Set(fmt.Sprintf("pre/%d", i), benchValue, ScopePersistent)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Set("k", benchValue, ScopePersistent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetPersistent reads a persistent value that no other process
// changed: the store checks the file is unchanged before answering.
func BenchmarkGetPersistent(b *testing.B) {
	s, _ := persistentStore(b, Options{})
	s.Set("k", benchValue, ScopePersistent)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, err := s.Get("k", ScopeAny); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
