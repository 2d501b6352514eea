//go:build unix

package artifacts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A context root or artifacts folder that another user could change is
// refused, with a warning saying what to do, never used silently.
func TestOpenRefusesFoldersOthersCanChange(t *testing.T) {
	tests := []struct {
		name     string
		rootMode os.FileMode
		artMode  os.FileMode // 0: no artifacts folder yet
		refused  string      // the folder refused, "" for none: "root" or "art"
		reason   string
	}{
		{"private root", 0o700, 0, "", ""},
		{"root readable by all", 0o755, 0o700, "", ""},
		{"root writable by all", 0o777, 0, "root", "is writable by others"},
		{"root writable by others only", 0o707, 0, "root", "is writable by others"},
		{"root writable by its group", 0o770, 0, "root", "is writable by its group"},
		{"artifacts writable by all", 0o700, 0o777, "art", "is writable by others"},
		{"artifacts writable by its group", 0o755, 0o770, "art", "is writable by its group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			art := filepath.Join(root, "artifacts")
			if tt.artMode != 0 {
				if err := os.Mkdir(art, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(art, tt.artMode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(root, tt.rootMode); err != nil {
				t.Fatal(err)
			}
			s, warn := Open(Options{Root: root})
			err := checkRoot(root)
			if tt.refused == "" {
				if warn != "" || !s.Enabled() || err != nil {
					t.Fatalf("Open = %v, %q; checkRoot = %v; want it used", s.Enabled(), warn, err)
				}
				return
			}
			path := root
			if tt.refused == "art" {
				path = art
			}
			want := "refused: " + path + " " + tt.reason + " (chmod 700 it)"
			if s.Enabled() || warn != "artifacts are off: "+want {
				t.Errorf("Open = enabled %v, warning %q; want disabled, %q", s.Enabled(), warn, "artifacts are off: "+want)
			}
			var re *RootError
			if !errors.As(err, &re) || err.Error() != want {
				t.Errorf("checkRoot = %v, want %q", err, want)
			}
			if _, _, err := s.WriteCall("t", "s", []byte("c"), []byte("{}")); !errors.Is(err, ErrDisabled) {
				t.Errorf("WriteCall into a refused root = %v", err)
			}
		})
	}
}

// A folder owned by another user is refused (needs root to chown it).
func TestOpenRefusesAnotherUsersRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	for _, which := range []string{"root", "artifacts"} {
		t.Run(which, func(t *testing.T) {
			root := t.TempDir()
			path := root
			if which == "artifacts" {
				path = filepath.Join(root, "artifacts")
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			want := "refused: " + path + " belongs to another user (uid 65534) (use a folder of your own, or chown it to yourself)"
			s, warn := Open(Options{Root: root})
			if s.Enabled() || warn != "artifacts are off: "+want {
				t.Errorf("Open = enabled %v, warning %q; want %q", s.Enabled(), warn, want)
			}
			if err := checkRoot(root); err == nil || err.Error() != want {
				t.Errorf("checkRoot = %v, want %q", err, want)
			}
		})
	}
}

// A root opened fine and opened up to others afterwards is not pruned:
// PruneIfDue checks it again.
func TestPruneRefusesARootOpenedUp(t *testing.T) {
	old := time.Now().Add(-30 * 24 * time.Hour)
	root := t.TempDir()
	plantRun(t, root, "run", 10, old)
	s := newStore(t, Options{Root: root, MaxAge: time.Hour})
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	var re *RootError
	if _, _, err := s.PruneIfDue(context.Background(), 0); !errors.As(err, &re) {
		t.Errorf("PruneIfDue = %v, want a *RootError", err)
	}
	if got := runsLeft(t, root); len(got) != 1 {
		t.Errorf("runs left %v, want the run untouched", got)
	}
}
