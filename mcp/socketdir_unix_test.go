//go:build unix

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketFolderRefusalSaysWhatToDo: a socket folder another user made
// first (a squat in a shared temp folder) or one open to others keeps the
// service from starting; the refusal must say how to get going again, not
// only what is wrong.
func TestSocketFolderRefusalSaysWhatToDo(t *testing.T) {
	t.Run("open to others", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := ListenSocket(filepath.Join(dir, "awbridge.sock"))
		if err == nil || !strings.Contains(err.Error(), "chmod 700 "+dir) || !strings.Contains(err.Error(), "AWBRIDGE_SOCKET") {
			t.Fatalf("ListenSocket = %v, want a refusal naming chmod 700 and AWBRIDGE_SOCKET", err)
		}
	})
	t.Run("another user's folder", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give a folder to another user")
		}
		dir := filepath.Join(t.TempDir(), "awbridge-1000")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := ListenSocket(filepath.Join(dir, "awbridge.sock"))
		if err == nil || !strings.Contains(err.Error(), "belongs to another user") || !strings.Contains(err.Error(), "AWBRIDGE_SOCKET") {
			t.Fatalf("ListenSocket = %v, want a refusal naming the squat and AWBRIDGE_SOCKET", err)
		}
	})
}
