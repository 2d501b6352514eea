//go:build unix

package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSyncInstallsViewUnderMu: when another process (here another Store
// on the same dir) replaced state.json, the re-read view is installed
// under mu only, so a concurrent reader (Get, List, Dump) never sees a
// half-assigned scope (a data race under go test -race).
func TestSyncInstallsViewUnderMu(t *testing.T) {
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

// TestReadDoesNotWaitForAHeldLock: while another process holds
// state.json.lock (stopped inside a write, stuck in fsync on a failing
// disk), a read of the persistent scope whose view is stale does not wait
// for it (a rename never tears the file), and Close is not held behind it.
func TestReadDoesNotWaitForAHeldLock(t *testing.T) {
	a, dir := persistentStore(t, Options{})
	b := open(t, Options{Dir: dir})
	if _, err := a.Set("k", json.RawMessage(`1`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Set("k", json.RawMessage(`22`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	// Another process holds the lock (here: a separate open file
	// description of the lock file, as another process's would be).
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		v, _, _, _ := a.Get("k", ScopePersistent)
		got <- string(v)
	}()
	select {
	case v := <-got:
		if v != "22" {
			t.Errorf("Get = %s, want 22", v)
		}
		return
	case <-time.After(2 * time.Second):
		t.Errorf("Get of the persistent scope still waiting after 2 s while another process holds the lock")
		closed := make(chan struct{})
		go func() { a.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(time.Second):
			t.Errorf("Close hangs too (behind the read holding wmu)")
		}
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	<-got
}
