//go:build unix

package protect

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSnapshotFileModes(t *testing.T) {
	old := syscall.Umask(0) // the modes must not depend on a permissive umask
	defer syscall.Umask(old)
	w := newWorld(t)
	path := filepath.Join(w.root, "a", "b", "state", BaselineFile)
	if _, warns, err := Snapshot(w.items, path); err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("baseline mode %04o, want 0600", m)
	}
	for _, d := range []string{"a", "a/b", "a/b/state"} {
		if m := mode(t, w.path(d)); m != 0o700 {
			t.Errorf("created folder %s mode %04o, want 0700", d, m)
		}
	}
}

func TestSnapshotTightensALooseStateDir(t *testing.T) {
	w := newWorld(t)
	dir := w.path("state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, warns, err := Snapshot(w.items, w.baseline())
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "tightened it to 0700") {
		t.Fatalf("warnings %v", warns)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Fatalf("state dir %04o after the snapshot", m)
	}
}

func TestUnsafeBaselineIsNotTrusted(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(w *world)
		want   string
	}{
		{"baseline writable by others", func(w *world) { os.Chmod(w.baseline(), 0o666) }, "writable by other users"},
		{"folder writable by others", func(w *world) { os.Chmod(filepath.Dir(w.baseline()), 0o777) }, "folder is writable by other users"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.snapshot()
			c := NewChecker()
			if r := c.Check(w.items, w.baseline()); !r.OK() {
				t.Fatalf("before: %+v", r)
			}
			tc.break_(w)
			for _, r := range []Result{c.Check(w.items, w.baseline()), Check(w.items, w.baseline())} {
				if r.OK() || r.DiffCount() != -1 || r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) {
					t.Fatalf("ok=%v count=%d err=%v, want not ok, -1, %q", r.OK(), r.DiffCount(), r.Err, tc.want)
				}
			}
		})
	}
	// A folder with the sticky bit (like /tmp) is fine: others cannot
	// replace our file there.
	w := newWorld(t)
	w.snapshot()
	os.Chmod(filepath.Dir(w.baseline()), 0o777|os.ModeSticky)
	if r := Check(w.items, w.baseline()); !r.OK() {
		t.Fatalf("sticky folder: %+v", r)
	}
}

func TestAFIFOIsUnreadableNotABlock(t *testing.T) {
	w := newWorld(t)
	fifo := w.path("etc/fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	w.items.Files = []string{fifo}
	b := w.snapshot()
	e := b.Entries[len(b.Entries)-3]
	if e.Name != fifo || e.State != StateUnreadable || e.Detail != "not a regular file" {
		t.Fatalf("fifo entry %+v", e)
	}
}
