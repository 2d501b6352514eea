//go:build unix

package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// testOwner is the person a sudo install creates the config for: another
// account when the test runs as root (as in CI), else this one (chown to
// oneself is allowed).
func testOwner(home string) *Owner {
	if os.Getuid() == 0 {
		return &Owner{Name: "alice", Home: home, UID: 4242, GID: 4242}
	}
	return &Owner{Name: "me", Home: home, UID: os.Getuid(), GID: os.Getgid()}
}

// ownerOf is the uid and gid that own path (not following a link).
func ownerOf(t *testing.T, path string) (uid, gid int) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return int(s.Uid), int(s.Gid)
}

// TestEnsureConfigFileRefusesLinksOutOfTheHome: under sudo, root never
// creates the config (or its folders) through a symbolic link the person
// made, nor outside their home: a link to a root-only folder gets nothing
// made or given away there, and a refusal that says what to do.
func TestEnsureConfigFileRefusesLinksOutOfTheHome(t *testing.T) {
	tests := []struct {
		name string
		// plant makes the person's links in home towards target.
		plant func(t *testing.T, home, target string)
		path  func(home, target string) string
	}{
		{"~/.config is a link", func(t *testing.T, home, target string) {
			must(t, os.Symlink(target, filepath.Join(home, ".config")))
		}, func(home, _ string) string { return filepath.Join(home, ".config", "awbridge", "config.toml") }},
		{"~/.config/awbridge is a link", func(t *testing.T, home, target string) {
			must(t, os.Mkdir(filepath.Join(home, ".config"), 0o700))
			must(t, os.Symlink(target, filepath.Join(home, ".config", "awbridge")))
		}, func(home, _ string) string { return filepath.Join(home, ".config", "awbridge", "config.toml") }},
		{"config.toml is a dangling link", func(t *testing.T, home, target string) {
			must(t, os.MkdirAll(filepath.Join(home, ".config", "awbridge"), 0o700))
			must(t, os.Symlink(filepath.Join(target, "config.toml"), filepath.Join(home, ".config", "awbridge", "config.toml")))
		}, func(home, _ string) string { return filepath.Join(home, ".config", "awbridge", "config.toml") }},
		{"~/.config links up and out", func(t *testing.T, home, target string) {
			rel, err := filepath.Rel(home, target)
			must(t, err)
			must(t, os.Symlink(rel, filepath.Join(home, ".config")))
		}, func(home, _ string) string { return filepath.Join(home, ".config", "awbridge", "config.toml") }},
		{"--config outside the home", func(*testing.T, string, string) {},
			func(_, target string) string { return filepath.Join(target, "awbridge", "config.toml") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, target := t.TempDir(), t.TempDir()
			must(t, os.Chmod(target, 0o700)) // root's own folder when run as root
			tt.plant(t, home, target)
			path := tt.path(home, target)
			owner := testOwner(home)
			created, err := EnsureConfigFile(path, owner)
			var le *LinkError
			if created || !errors.As(err, &le) {
				t.Fatalf("created=%v err=%v, want a *LinkError", created, err)
			}
			for _, want := range []string{path, "create it as yourself first"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
			if ents, err := os.ReadDir(target); err != nil || len(ents) != 0 {
				t.Fatalf("made in the linked-to folder: %v %v", ents, err)
			}
			if os.Getuid() == 0 {
				if uid, _ := ownerOf(t, target); uid != 0 {
					t.Fatalf("the linked-to folder was given to uid %d", uid)
				}
			}
		})
	}
}

// TestEnsureConfigFileGivesWhatItMakesToThePerson: under sudo with no
// ~/.config yet, every folder made and the file are the person's (not
// root's, which would break their other programs), 0700 and 0600; a link
// that stays inside the home is followed; an existing file is untouched.
func TestEnsureConfigFileGivesWhatItMakesToThePerson(t *testing.T) {
	home := t.TempDir()
	owner := testOwner(home)
	path := filepath.Join(home, ".config", "awbridge", "config.toml")
	created, err := EnsureConfigFile(path, owner)
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Join(home, ".config"), 0o700}, {filepath.Dir(path), 0o700}, {path, 0o600}} {
		if uid, gid := ownerOf(t, p.path); uid != owner.UID || gid != owner.GID {
			t.Errorf("%s is owned by %d:%d, want the person's %d:%d", p.path, uid, gid, owner.UID, owner.GID)
		}
		if st, _ := os.Lstat(p.path); st.Mode().Perm() != p.mode {
			t.Errorf("%s has mode %v, want %v", p.path, st.Mode().Perm(), p.mode)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != configHeader {
		t.Fatalf("content %q", b)
	}
	if created, err := EnsureConfigFile(path, owner); created || err != nil {
		t.Fatalf("second call: created=%v err=%v", created, err)
	}

	// A link inside the home (dotfiles kept in a folder of their own).
	home2 := t.TempDir()
	must(t, os.Mkdir(filepath.Join(home2, "dotfiles"), 0o700))
	must(t, os.Symlink("dotfiles", filepath.Join(home2, ".config")))
	path2 := filepath.Join(home2, ".config", "awbridge", "config.toml")
	if created, err := EnsureConfigFile(path2, testOwner(home2)); err != nil || !created {
		t.Fatalf("link inside the home: created=%v err=%v", created, err)
	}
	if _, err := os.Stat(filepath.Join(home2, "dotfiles", "awbridge", "config.toml")); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
