package state

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// TestReviewSyncInstallsViewUnderMu: review of issue 16. When another
// process (here another Store on the same dir) replaced state.json,
// syncLocked re-reads it through readDoc -> parse, and parse assigns
// s.pers = m without holding s.mu, while a concurrent reader (Get, List,
// Dump) reads s.pers under s.mu.RLock. Under `go test -race` this is a
// data race report; in production a reader can see a half-assigned
// scopeMap (map and byte count from different versions). syncLocked
// itself installs the view under mu afterwards; the assignment in parse
// is the stray one. Fix: drop `s.pers = m` from parse.
func TestReviewSyncInstallsViewUnderMu(t *testing.T) {
	a, dir := persistentStore(t, Options{})
	b := open(t, Options{Dir: dir})
	if _, err := a.Set("seed", json.RawMessage(`0`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _, _ = a.Get("seed", ScopeAny)
				_, _ = a.List("", ScopeAny)
			}
		}()
	}
	for i := 0; i < 200; i++ {
		if _, err := b.Set(fmt.Sprintf("b%d", i), json.RawMessage(`1`), ScopePersistent); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if ents, err := a.List("", ScopePersistent); err != nil || len(ents) != 201 {
		t.Errorf("a sees %d entries, %v; want 201", len(ents), err)
	}
}
