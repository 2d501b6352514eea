package tmpfstest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestMountFillRemount(t *testing.T) {
	dir := Mount(t, "64k", false)
	filler := FillUp(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "more"), make([]byte, 8192), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on the full device: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	Remount(t, dir, "ro")
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o600); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("a write on the read-only device: %v", err)
	}
	Remount(t, dir, "rw")
}
