package artifacts

// The context root failing mid-run: a disk that fills up while calls
// write concurrently (an injected quota, and a real tmpfs where mounting
// is permitted), a root turning read-only, a root removed under a running
// store. Every call either stores both of its files whole or leaves
// nothing, and the store works again once the disk does.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/awbridge/awbridge/internal/tmpfstest"
)

// quotaFS is a disk with room for quota more bytes: a write that does not
// fit writes what fits and fails with ENOSPC, as a full disk does.
// Removing a file gives its bytes back. Safe for concurrent use.
type quotaFS struct {
	OSFS
	free atomic.Int64
	mu   sync.Mutex
	size map[string]int64 // bytes held per file written through the quota
}

func newQuotaFS(free int64) *quotaFS {
	q := &quotaFS{size: map[string]int64{}}
	q.free.Store(free)
	return q
}

func (q *quotaFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := q.OSFS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &quotaFile{File: f, q: q}, nil
}

func (q *quotaFS) Rename(oldpath, newpath string) error {
	if err := q.OSFS.Rename(oldpath, newpath); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free.Add(q.size[newpath]) // a replaced file's bytes come back
	q.size[newpath] = q.size[oldpath]
	delete(q.size, oldpath)
	return nil
}

func (q *quotaFS) Remove(name string) error {
	if err := q.OSFS.Remove(name); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free.Add(q.size[name])
	delete(q.size, name)
	return nil
}

type quotaFile struct {
	File
	q *quotaFS
}

func (f *quotaFile) Write(p []byte) (int, error) {
	n := int64(len(p))
	for {
		free := f.q.free.Load()
		take := min(n, max(free, 0))
		if f.q.free.CompareAndSwap(free, free-take) {
			n = take
			break
		}
	}
	w, err := f.File.Write(p[:n])
	f.q.mu.Lock()
	f.q.size[f.Name()] += int64(w)
	f.q.mu.Unlock()
	if err == nil && w < len(p) {
		err = &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return w, err
}

// callData is what call i of writer g writes: sizes vary so that the disk
// fills in the middle of a file as well as between files.
func callData(g, i int) (ctxDoc, result []byte) {
	n := 512 + (g*7919+i*104729)%6000
	ctxDoc = bytes.Repeat([]byte{byte('a' + g%26)}, n)
	result = []byte(fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("z", n/2)))
	return ctxDoc, result
}

// checkCalls asserts that every call that returned URIs has both files
// whole (the exact bytes, readable by URI), and every call that failed
// left neither, nor a temp file.
func checkCalls(t *testing.T, s *Store, root string, ok map[[2]int]bool) {
	t.Helper()
	for k, stored := range ok {
		g, i := k[0], k[1]
		ctxDoc, result := callData(g, i)
		span := fmt.Sprintf("g%d-%d", g, i)
		base := filepath.Join(root, "artifacts", "runs", "fill", "tool_calls")
		gotCtx, errCtx := os.ReadFile(filepath.Join(base, span+".context"))
		gotRes, errRes := os.ReadFile(filepath.Join(base, span, "result.json"))
		if !stored {
			if errCtx == nil || errRes == nil {
				t.Errorf("call %s failed but left a file behind (context %v, result %v)", span, errCtx == nil, errRes == nil)
			}
			continue
		}
		if !bytes.Equal(gotCtx, ctxDoc) || !bytes.Equal(gotRes, result) {
			t.Errorf("call %s stored torn files (%d/%d and %d/%d bytes)", span, len(gotCtx), len(ctxDoc), len(gotRes), len(result))
			continue
		}
		data, _, err := s.Read("artifact://runs/fill/tool_calls/"+span+"/result.json", ModeGet, 1<<20)
		if err != nil || !bytes.Equal(data, result) {
			t.Errorf("reading back %s: %v", span, err)
		}
	}
	for _, f := range files(t, root) {
		if strings.Contains(filepath.Base(f), ".tmp-") {
			t.Errorf("temp file left behind: %s", f)
		}
	}
}

// writeConcurrently runs writers goroutines of calls WriteCalls each and
// returns which stored (true) and which failed (false); every failure
// must be a *WriteError wrapping want.
func writeConcurrently(t *testing.T, s *Store, writers, calls int, want error) map[[2]int]bool {
	t.Helper()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
		ok = map[[2]int]bool{}
	)
	for g := range writers {
		wg.Go(func() {
			for i := range calls {
				ctxDoc, result := callData(g, i)
				uc, uj, err := s.WriteCall("fill", fmt.Sprintf("g%d-%d", g, i), ctxDoc, result)
				var we *WriteError
				switch {
				case err == nil && (uc == "" || uj == ""):
					t.Errorf("no error and no URI")
				case err != nil && (uc != "" || uj != ""):
					t.Errorf("URIs with an error: %v", err)
				case err != nil && (!errors.As(err, &we) || !errors.Is(err, want)):
					t.Errorf("error %v, want a *WriteError wrapping %v", err, want)
				}
				mu.Lock()
				ok[[2]int{g, i}] = err == nil
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ok
}

func count(m map[[2]int]bool, v bool) int {
	n := 0
	for _, x := range m {
		if x == v {
			n++
		}
	}
	return n
}

// The disk fills up while eight writers store calls: the calls that fit
// are whole, the others fail with ENOSPC and leave nothing; once space
// comes back every write succeeds again.
func TestDiskFillsUpDuringConcurrentWrites(t *testing.T) {
	root := t.TempDir()
	q := newQuotaFS(200 << 10)
	s := newStore(t, Options{Root: root, FS: q})
	ok := writeConcurrently(t, s, 8, 12, syscall.ENOSPC)
	stored, failed := count(ok, true), count(ok, false)
	t.Logf("%d calls stored, %d refused with ENOSPC", stored, failed)
	if stored == 0 || failed == 0 {
		t.Fatalf("the quota did not fill mid-run: %d stored, %d failed", stored, failed)
	}
	checkCalls(t, s, root, ok)

	q.free.Store(1 << 30) // space comes back
	uc, _, err := s.WriteCall("fill", "after", []byte("ctx"), []byte("{}"))
	if err != nil || uc == "" {
		t.Fatalf("write after space came back: %v", err)
	}
}

// A real device fills up under concurrent writers, then turns read-only:
// the same guarantees hold with the kernel's own errors.
func TestRealDeviceFillsUpThenTurnsReadOnly(t *testing.T) {
	root := tmpfstest.Mount(t, "256k", false)
	s := newStore(t, Options{Root: root})
	ok := writeConcurrently(t, s, 4, 20, syscall.ENOSPC)
	stored, failed := count(ok, true), count(ok, false)
	t.Logf("256 KiB tmpfs: %d calls stored, %d refused with ENOSPC", stored, failed)
	if stored == 0 || failed == 0 {
		t.Fatalf("the device did not fill mid-run: %d stored, %d failed", stored, failed)
	}
	checkCalls(t, s, root, ok)

	// Space comes back when old runs are removed.
	if err := os.RemoveAll(filepath.Join(root, "artifacts", "runs", "fill")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.WriteCall("fill", "after", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatalf("write after space came back: %v", err)
	}

	if out, err := exec.Command("mount", "-o", "remount,ro", root).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v: %s", err, out)
	}
	_, _, err := s.WriteCall("fill", "ro", []byte("ctx"), []byte("{}"))
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write on a read-only root: %v, want a *WriteError wrapping EROFS", err)
	}
	if _, err := s.Spill("fill", "after", 1, []byte("text")); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("spill on a read-only root: %v", err)
	}
	// What was written before is still readable.
	if _, _, err := s.Read("artifact://runs/fill/tool_calls/after/result.json", ModeGet, 0); err != nil {
		t.Fatalf("reading on a read-only root: %v", err)
	}
	if out, err := exec.Command("mount", "-o", "remount,rw", root).CombinedOutput(); err != nil {
		t.Fatalf("remount rw: %v: %s", err, out)
	}
	if _, _, err := s.WriteCall("fill", "rw", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatalf("write after the root is writable again: %v", err)
	}
}

// The context root is removed under a running store (a cleanup script, an
// unmounted drive): writes fail cleanly without recreating the root, reads
// say not found, and once the root exists again writes resume.
func TestRootRemovedMidRun(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Options{Root: root})
	if _, _, err := s.WriteCall("t", "before", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.WriteCall("t", "gone", []byte("ctx"), []byte("{}"))
	var we *WriteError
	if !errors.As(err, &we) || we.Op != "mkdir" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("write under a removed root: %v, want a mkdir *WriteError (not exist)", err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the store recreated the removed root: %v", err)
	}
	if _, _, err := s.Read("artifact://runs/t/tool_calls/before/result.json", ModeGet, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read under a removed root: %v, want ErrNotFound", err)
	}
	if _, _, err := s.List("t"); err == nil {
		t.Fatal("list under a removed root succeeded")
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.WriteCall("t", "back", []byte("ctx"), []byte("{}")); err != nil {
		t.Fatalf("write once the root is back: %v", err)
	}
}
