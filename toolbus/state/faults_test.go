package state

// The state file under faults: torn at every length when the process
// starts, a disk that fills up while writers change it concurrently, a
// real device that fills up or turns read-only, and a corrupted file that
// cannot even be kept aside. The file always holds a whole document equal
// to what the Store reports, and nothing is lost.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/internal/tmpfstest"
)

// goodStateFile writes a state file with a few entries through a Store
// and returns its bytes.
func goodStateFile(t *testing.T) []byte {
	t.Helper()
	s, dir := persistentStore(t, Options{})
	for i, v := range []string{`{"app":"Code","title":"main.go"}`, `[1,2,3]`, `"text with \"quotes\""`} {
		if _, err := s.Set(fmt.Sprintf("k%d", i), json.RawMessage(v), ScopePersistent); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A state file torn at any length (a crash of an older version without
// atomic writes, a copy cut short, a full disk under another tool) is
// never loaded in part: either the whole document is there and loads, or
// the file is kept aside byte for byte with exactly one warning and the
// store starts empty and works.
func TestTornStateFileAtEveryLength(t *testing.T) {
	good := goodStateFile(t)
	base := t.TempDir()
	loaded, aside := 0, 0
	for n := 0; n < len(good); n++ {
		dir := filepath.Join(base, fmt.Sprint(n))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		torn := good[:n]
		if err := os.WriteFile(filepath.Join(dir, FileName), torn, 0o600); err != nil {
			t.Fatal(err)
		}
		s, warnings, err := Open(Options{Dir: dir, now: clock()})
		if err != nil {
			t.Fatalf("length %d: Open: %v", n, err)
		}
		ents, _ := s.List("", ScopePersistent)
		switch {
		case len(warnings) == 0:
			// Only the whole document (perhaps without its final
			// newline) may load, and then all of it.
			loaded++
			if len(ents) != 3 || !bytes.Equal(bytes.TrimSpace(torn), bytes.TrimSpace(good)) {
				t.Fatalf("length %d of %d loaded %d entries without a warning", n, len(good), len(ents))
			}
		case len(warnings) == 1 && strings.Contains(warnings[0], "kept it as"):
			aside++
			if len(ents) != 0 {
				t.Fatalf("length %d: %d entries loaded from a torn file", n, len(ents))
			}
			kept, err := os.ReadFile(filepath.Join(dir, FileName+".corrupt-20260102T150405Z"))
			if err != nil || !bytes.Equal(kept, torn) {
				t.Fatalf("length %d: the file kept aside holds %q (%v), want the torn bytes", n, kept, err)
			}
			if _, err := s.Set("new", json.RawMessage(`1`), ScopePersistent); err != nil {
				t.Fatalf("length %d: a write after starting empty: %v", n, err)
			}
		default:
			t.Fatalf("length %d: warnings %q", n, warnings)
		}
		s.Close()
	}
	t.Logf("%d torn lengths: %d kept aside, %d loaded whole", len(good), aside, loaded)
	if loaded > 1 {
		t.Fatalf("%d prefixes loaded; only the document without its final newline may", loaded)
	}
}

// quotaDisk is the OS file system with room for a limited number of bytes:
// a write that does not fit writes what fits and fails with ENOSPC.
// Removing or replacing a file gives its bytes back. Safe for concurrent
// use.
type quotaDisk struct {
	atomicfile.OS
	free atomic.Int64
	mu   sync.Mutex
	size map[string]int64
}

func (q *quotaDisk) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &quotaTemp{File: f, q: q}, nil
}

func (q *quotaDisk) Rename(o, n string) error {
	if err := os.Rename(o, n); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free.Add(q.size[n])
	q.size[n] = q.size[o]
	delete(q.size, o)
	return nil
}

func (q *quotaDisk) Remove(name string) error {
	if err := os.Remove(name); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free.Add(q.size[name])
	delete(q.size, name)
	return nil
}

type quotaTemp struct {
	*os.File
	q *quotaDisk
}

func (f *quotaTemp) Write(p []byte) (int, error) {
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

// dumpFile reads the state file's entries (values compacted).
func dumpFile(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var doc fileDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("state file torn: %v: %.200q", err, data)
	}
	out := map[string]string{}
	for k, e := range doc.Entries {
		out[k] = string(e.Value)
	}
	return out
}

func dumpStore(t *testing.T, s *Store) map[string]string {
	t.Helper()
	d, err := s.Dump(ScopePersistent)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range d[ScopePersistent] {
		out[k] = string(v)
	}
	return out
}

func sameEntries(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The disk fills up while eight writers set, replace and unset keys: each
// change either succeeds or fails with a StorageError wrapping ENOSPC and
// leaves the Store's view unchanged; the file is always one whole
// document equal to that view; once space comes back, writes succeed.
func TestDiskFillsUpDuringConcurrentChanges(t *testing.T) {
	dir := stateDir(t)
	q := &quotaDisk{size: map[string]int64{}}
	q.free.Store(1 << 30)
	s := open(t, Options{Dir: dir, fs: q})
	// The file is rewritten whole at every change: let it grow past what
	// the disk has left, mid-run.
	q.free.Store(96 << 10)
	var (
		wg              sync.WaitGroup
		okN, failN, bad atomic.Int64
	)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				key := fmt.Sprintf("g%d-%d", g, i%10)
				var err error
				switch i % 5 {
				case 4:
					_, err = s.Unset(fmt.Sprintf("g%d-%d", g, (i+3)%10), ScopePersistent)
				default:
					_, err = s.Set(key, json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 200+i*40))), ScopePersistent)
				}
				var se *StorageError
				switch {
				case err == nil:
					okN.Add(1)
				case errors.As(err, &se) && errors.Is(err, syscall.ENOSPC):
					failN.Add(1)
				default:
					bad.Add(1)
					t.Errorf("change: %v, want nil or a StorageError wrapping ENOSPC", err)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d changes stored, %d refused with ENOSPC", okN.Load(), failN.Load())
	if okN.Load() == 0 || failN.Load() == 0 {
		t.Fatalf("the disk did not fill mid-run: %d stored, %d refused", okN.Load(), failN.Load())
	}
	if file, mem := dumpFile(t, dir), dumpStore(t, s); !sameEntries(file, mem) {
		t.Fatalf("the file (%d entries) and the Store (%d entries) disagree after the disk filled", len(file), len(mem))
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
	q.free.Store(1 << 30)
	if _, err := s.Set("after", json.RawMessage(`1`), ScopePersistent); err != nil {
		t.Fatalf("a write after space came back: %v", err)
	}
	mem := dumpStore(t, s)
	s.Close()
	s2 := open(t, Options{Dir: dir})
	if got := dumpStore(t, s2); !sameEntries(got, mem) {
		t.Fatalf("reopened: %d entries, want the %d the Store had", len(got), len(mem))
	}
}

// A real device: the state dir fills up, then turns read-only. Failed
// changes are StorageErrors with the kernel's ENOSPC or EROFS, the file
// keeps its last good document, and a corrupted file found on a read-only
// device cannot be kept aside: Open fails (the engine then runs with
// session state only) and the file is left as it was.
func TestRealStateDeviceFullThenReadOnly(t *testing.T) {
	dir := tmpfstest.Mount(t, "64k", false)
	s := open(t, Options{Dir: dir})
	val := json.RawMessage(`"` + strings.Repeat("v", 6000) + `"`)
	var err error
	stored := 0
	for i := 0; i < 100 && err == nil; i++ {
		if _, err = s.Set(fmt.Sprintf("k%d", i), val, ScopePersistent); err == nil {
			stored++
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling a 64 KiB device: %v after %d values, want ENOSPC", err, stored)
	}
	t.Logf("64 KiB tmpfs: %d values of 6 KB stored before ENOSPC", stored)
	if file, mem := dumpFile(t, dir), dumpStore(t, s); len(file) != stored || !sameEntries(file, mem) {
		t.Fatalf("after ENOSPC the file has %d entries, the Store %d, want %d", len(file), len(mem), stored)
	}
	// Removing values frees space on the device: the smaller file fits.
	if _, err := s.Unset("k0", ScopePersistent); err != nil {
		t.Fatalf("unset on a full device: %v", err)
	}

	tmpfstest.Remount(t, dir, "ro")
	if _, err := s.Set("ro", json.RawMessage(`1`), ScopePersistent); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("set on a read-only device: %v, want EROFS", err)
	}
	if file := dumpFile(t, dir); len(file) != stored-1 {
		t.Fatalf("the file changed on a read-only device: %d entries", len(file))
	}
	s.Close()

	// A corrupted file on a read-only device cannot be kept aside.
	tmpfstest.Remount(t, dir, "rw")
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version":1,"entr`), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpfstest.Remount(t, dir, "ro")
	_, _, err = Open(Options{Dir: dir})
	var se *StorageError
	if !errors.As(err, &se) || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Open with a corrupted file on a read-only device: %v, want a StorageError (EROFS)", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, FileName)); string(got) != `{"version":1,"entr` {
		t.Fatalf("the corrupted file was changed: %q", got)
	}
	tmpfstest.Remount(t, dir, "rw")
}

// The state dir is removed under a running store (rm -rf of the state
// folder): a change fails with a StorageError and leaves the view as it
// was; once the folder exists again, the next change writes the whole
// persistent view, so nothing the Store held is lost.
func TestStateDirRemovedMidRun(t *testing.T) {
	s, dir := persistentStore(t, Options{})
	if _, err := s.Set("a", json.RawMessage(`1`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, err := s.Set("b", json.RawMessage(`2`), ScopePersistent)
	var se *StorageError
	if !errors.As(err, &se) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("set with the state dir gone: %v, want a StorageError (not exist)", err)
	}
	if got := dumpStore(t, s); !sameEntries(got, map[string]string{"a": "1"}) {
		t.Fatalf("the view changed on a failed write: %v", got)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("b", json.RawMessage(`2`), ScopePersistent); err != nil {
		t.Fatalf("set once the dir is back: %v", err)
	}
	if got := dumpFile(t, dir); !sameEntries(got, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("the rewritten file holds %v, want both entries", got)
	}
}
