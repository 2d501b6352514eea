// Package tmpfstest gives tests a small, real device to fill up or turn
// read-only: a tmpfs mounted for one test (Linux, as root) and unmounted
// at its end. Where mounting is not permitted the test is skipped, never
// failed. For tests only.
package tmpfstest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (e.g. "64k"), mode 0700, read-only when
// asked, on a new temp dir and returns it. The unmount is registered after
// the temp dir's own cleanup, so it runs first.
func Mount(t testing.TB, size string, readOnly bool) string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs Linux and root")
	}
	dir := t.TempDir()
	opts := "size=" + size + ",mode=0700"
	if readOnly {
		opts += ",ro"
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
	return dir
}

// Remount remounts dir with mode "ro" or "rw".
func Remount(t testing.TB, dir, mode string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", mode, dir, err, out)
	}
}

// FillUp writes dir/filler until the device is full and returns its path.
func FillUp(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}
