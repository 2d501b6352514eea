//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestStageModesIgnoreUmask stages under umask 077: the files' modes, which
// mcpb pack records in the bundle, are still 0755 and 0644, so the same
// commit packs the same bytes on any machine.
func TestStageModesIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	b := bundles()[1]
	dir := stageFake(t, b, "1.2.3")
	want := map[string]os.FileMode{"manifest.json": 0o644, "icon.png": 0o644, launcher: 0o755}
	for _, arch := range b.arches {
		want[binPath(b.goos, arch)] = 0o755
	}
	for name, mode := range want {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v under umask 077, want %v", name, fi.Mode().Perm(), mode)
		}
	}
}
