//go:build unix

package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link planted where the state file goes (by another program,
// or to make awbridge loosen or read another file of the user's) is
// refused: its target is neither read nor chmodded nor replaced, and the
// error says why.
func TestStateFileLinkRefused(t *testing.T) {
	dir := stateDir(t)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	doc := []byte(`{"version":1,"entries":{"planted":{"value":"from the link's target"}}}`)
	if err := os.WriteFile(target, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, FileName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	if err := CheckFile(dir); !errors.Is(err, ErrSymlink) {
		t.Errorf("CheckFile = %v, want ErrSymlink", err)
	}
	s, _, err := Open(Options{Dir: dir})
	var se *StorageError
	if !errors.As(err, &se) || !errors.Is(err, ErrSymlink) || se.Path != link {
		t.Fatalf("Open = %v, want a *StorageError for %s caused by ErrSymlink", err, link)
	}
	if s != nil {
		t.Error("Open returned a store for a linked state file")
	}
	want := "state: open " + link + ": is a symbolic link; awbridge never reads or changes state through a link"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if m := mode(t, target); m != 0o644 {
		t.Errorf("the link's target was chmodded to %04o", m)
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, doc) {
		t.Errorf("the link's target changed: %q %v", got, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}

// A state dir that is itself a link to a folder open to others is used
// (a person may keep it elsewhere) but never chmodded through the link.
func TestStateDirLinkNeverChmodded(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(real, dir); err != nil {
		t.Fatal(err)
	}
	s, warnings, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := mode(t, real); m != 0o755 {
		t.Errorf("the folder behind the link was chmodded to %04o", m)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "is a symbolic link") || !strings.Contains(warnings[0], "left as it is") {
		t.Errorf("warnings %q, want one saying the linked dir was left as it is", warnings)
	}
	if _, err := s.Set("k", []byte(`1`), ScopePersistent); err != nil {
		t.Fatalf("a persistent write into the linked dir: %v", err)
	}
	if m := mode(t, filepath.Join(real, FileName)); m != 0o600 {
		t.Errorf("state file mode %04o, want 0600", m)
	}
}
