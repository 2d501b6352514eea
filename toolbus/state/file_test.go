package state

import (
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestFileFormatGolden(t *testing.T) {
	s, dir := persistentStore(t, Options{})
	s.Set("b/2", json.RawMessage(`{"list": [1, 2], "s": "x\"y"}`), ScopePersistent)
	s.Set("a:1", json.RawMessage(`null`), ScopePersistent)
	s.Set("session", json.RawMessage(`true`), ScopeSession)
	got, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "state.json.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("state file:\n%s\nwant (go test -update to accept):\n%s", got, want)
	}
}

// stateDir returns a fresh 0700 folder for a state file.
func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	t.Run("created", func(t *testing.T) {
		s, dir := persistentStore(t, Options{})
		if _, err := s.Set("k", json.RawMessage(`1`), ScopePersistent); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, dir); m != 0o700 {
			t.Errorf("dir mode %04o, want 0700", m)
		}
		if m := mode(t, filepath.Join(dir, FileName)); m != 0o600 {
			t.Errorf("file mode %04o, want 0600", m)
		}
	})

	tests := []struct {
		name      string
		otherFile bool // the dir holds a file that is not ours
		otherUser bool // the dir belongs to another user
		wantDir   fs.FileMode
		wantWarn  string
	}{
		{"ours: tightened", false, false, 0o700, "tightened it to 0700"},
		{"shared with other files: left, warned", true, false, 0o755, "left as it is"},
		{"another user's: left, warned", false, true, 0o755, "left as it is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			os.Mkdir(dir, 0o755)
			os.Chmod(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version":1,"entries":{"k":{"value":1}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(dir, FileName), 0o644)
			if tt.otherFile {
				os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
			}
			if tt.otherUser {
				if os.Geteuid() != 0 {
					t.Skip("needs root to chown")
				}
				if err := os.Chown(dir, 12345, 12345); err != nil {
					t.Fatal(err)
				}
			}
			s, warnings, err := Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if m := mode(t, dir); m != tt.wantDir {
				t.Errorf("dir mode %04o, want %04o", m, tt.wantDir)
			}
			if m := mode(t, filepath.Join(dir, FileName)); m != 0o600 {
				t.Errorf("file mode %04o, want 0600 (the file is ours)", m)
			}
			if len(warnings) != 2 || !strings.Contains(warnings[0], tt.wantWarn) || !strings.Contains(warnings[1], "tightened it to 0600") {
				t.Errorf("warnings %q, want one about the dir (%q) and one about the file", warnings, tt.wantWarn)
			}
			if _, _, ok, _ := s.Get("k", ""); !ok {
				t.Error("the file was not loaded")
			}
		})
	}
}

func TestOpenStorageErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns Dir
	}{
		{"state.json is a folder", func(t *testing.T) string {
			dir := stateDir(t)
			os.Mkdir(filepath.Join(dir, FileName), 0o700)
			return dir
		}},
		{"dir is a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			os.WriteFile(p, nil, 0o600)
			return p
		}},
		{"dir cannot be created", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			os.WriteFile(p, nil, 0o600)
			return filepath.Join(p, "state")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Open(Options{Dir: tt.setup(t)})
			var se *StorageError
			if !errors.As(err, &se) || se.Err == nil {
				t.Fatalf("Open = %v, want *StorageError with a cause", err)
			}
		})
	}
}

func TestCorruptFileKeptAside(t *testing.T) {
	tests := []struct {
		name, content, reason string
	}{
		{"empty", "", "empty or cut short"},
		{"not JSON", "hello", "syntax error"},
		{"cut short", `{"version":1,"entries":{"k":{"value":`, "cut short"},
		{"an array", `[1,2]`, "shape"},
		{"wrong version", `{"version":2,"entries":{}}`, "version 2"},
		{"no version", `{"entries":{}}`, "version 0"},
		{"no entries", `{"version":1}`, "no entries"},
		{"entries null", `{"version":1,"entries":null}`, "no entries"},
		{"unknown field", `{"version":1,"entries":{},"extra":1}`, "shape"},
		{"entry not an object", `{"version":1,"entries":{"k":1}}`, "shape"},
		{"entry without value", `{"version":1,"entries":{"k":{}}}`, "no value"},
		{"bad key", `{"version":1,"entries":{"a b":{"value":1}}}`, "invalid key"},
		{"empty key", `{"version":1,"entries":{"":{"value":1}}}`, "invalid key"},
		{"bad time", `{"version":1,"entries":{"k":{"value":1,"updated_at":"yesterday"}}}`, "updated_at"},
		{"trailing data", `{"version":1,"entries":{}} {}`, "data after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			path := filepath.Join(dir, FileName)
			os.WriteFile(path, []byte(tt.content), 0o600)
			s, warnings, err := Open(Options{Dir: dir, now: clock()})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			aside := path + ".corrupt-20260102T150405Z"
			if len(warnings) != 1 || !strings.Contains(warnings[0], tt.reason) || !strings.Contains(warnings[0], aside) {
				t.Fatalf("warnings %q, want one naming %q and %s", warnings, tt.reason, aside)
			}
			if strings.Contains(warnings[0], "a b") {
				t.Fatalf("warning quotes a key: %q", warnings[0])
			}
			kept, err := os.ReadFile(aside)
			if err != nil || string(kept) != tt.content {
				t.Fatalf("kept aside: %q, %v; want the original bytes", kept, err)
			}
			if ents, _ := s.List("", ScopePersistent); len(ents) != 0 {
				t.Fatalf("started with %d entries, want none", len(ents))
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("state.json still there: %v", err)
			}
			if _, err := s.Set("new", json.RawMessage(`1`), ScopePersistent); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("second corruption in the same second gets its own name", func(t *testing.T) {
		dir := stateDir(t)
		path := filepath.Join(dir, FileName)
		for i, content := range []string{"first", "second"} {
			os.WriteFile(path, []byte(content), 0o600)
			s, warnings, err := Open(Options{Dir: dir, now: clock()})
			if err != nil || len(warnings) != 1 {
				t.Fatalf("Open %d: %v, %q", i, err, warnings)
			}
			s.Close()
		}
		for name, want := range map[string]string{".corrupt-20260102T150405Z": "first", ".corrupt-20260102T150405Z-2": "second"} {
			if got, _ := os.ReadFile(path + name); string(got) != want {
				t.Errorf("%s holds %q, want %q", name, got, want)
			}
		}
	})

	t.Run("too large", func(t *testing.T) {
		dir := stateDir(t)
		small := lowered(func(l *limits) { l.scopeBytes, l.entries = 10, 1 })
		s0 := &Store{o: Options{lim: small}}
		big := `{"version":1,"entries":{"k":{"value":"` + strings.Repeat("x", int(s0.readCap())) + `"}}}`
		os.WriteFile(filepath.Join(dir, FileName), []byte(big), 0o600)
		s, warnings, err := Open(Options{Dir: dir, lim: small})
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "larger than") {
			t.Fatalf("Open = %v, %q", err, warnings)
		}
		s.Close()
	})

	t.Run("aside fails: Open fails and the file stays", func(t *testing.T) {
		dir := stateDir(t)
		path := filepath.Join(dir, FileName)
		os.WriteFile(path, []byte("junk"), 0o600)
		ffs := &faultFS{failRename: true}
		_, _, err := Open(Options{Dir: dir, fs: ffs})
		var se *StorageError
		if !errors.As(err, &se) {
			t.Fatalf("Open = %v, want *StorageError", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "junk" {
			t.Fatalf("state.json now %q", got)
		}
	})
}

func TestOverLimitFileLoads(t *testing.T) {
	dir := stateDir(t)
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version":1,"entries":{"a":{"value":"0123456789"},"b":{"value":2},"c":{"value":3}}}`), 0o600)
	s, warnings, err := Open(Options{Dir: dir, lim: lowered(func(l *limits) { l.entries, l.valueBytes = 2, 4 })})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "limits") {
		t.Fatalf("Open = %v, %q; want one warning about limits", err, warnings)
	}
	defer s.Close()
	if v, _ := mustGet(t, s, "a", ""); v != `"0123456789"` {
		t.Fatalf("a = %s", v)
	}
	var le *LimitError
	if _, err := s.Set("d", json.RawMessage(`4`), ScopePersistent); !errors.As(err, &le) || le.Limit != "MaxEntries" {
		t.Fatalf("growing an over-full scope = %v, want MaxEntries", err)
	}
	if _, err := s.Set("b", json.RawMessage(`5`), ScopePersistent); err != nil {
		t.Fatalf("replacing in an over-full scope: %v", err)
	}
}

// Open removes temp files a crash left behind, but only stale ones: a
// fresh temp file is another process's write in progress (it renames it
// over state.json in a moment), and a file of another name is not ours.
func TestStaleTempsRemoved(t *testing.T) {
	dir := stateDir(t)
	old := time.Now().Add(-staleTempAge - time.Minute)
	tests := []struct {
		name     string
		age      time.Time // zero: just written
		wantGone bool
	}{
		{FileName + ".tmp-111", old, true},
		{FileName + ".tmp-222", time.Time{}, false},
		{FileName + ".tmp-333", time.Now().Add(-staleTempAge / 2), false},
		{"other.tmp-444", old, false},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !tt.age.IsZero() {
			if err := os.Chtimes(p, tt.age, tt.age); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, _, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(dir, tt.name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != tt.wantGone {
			t.Errorf("%s: removed %v, want %v (%v)", tt.name, gone, tt.wantGone, err)
		}
	}
}

// faultFS is the OS file system with injected failures.
type faultFS struct {
	atomicfile.OS
	failCreate, failWrite, failSync, failRename, failSyncDir bool
}

var errInjected = errors.New("injected failure")

func (f *faultFS) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	if f.failCreate {
		return nil, errInjected
	}
	tf, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: tf, fs: f}, nil
}

func (f *faultFS) Rename(o, n string) error {
	if f.failRename {
		return errInjected
	}
	return os.Rename(o, n)
}

func (f *faultFS) SyncDir(dir string) error {
	if f.failSyncDir {
		return errInjected
	}
	return f.OS.SyncDir(dir)
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.fs.failWrite {
		// Write half, as a full disk would.
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if f.fs.failSync {
		return errInjected
	}
	return f.File.Sync()
}

func TestAtomicWrites(t *testing.T) {
	tests := []struct {
		name  string
		fault faultFS
		op    string
		cause error
	}{
		{"create temp fails", faultFS{failCreate: true}, "create temp file in", errInjected},
		{"disk full while writing", faultFS{failWrite: true}, "write", syscall.ENOSPC},
		{"fsync fails", faultFS{failSync: true}, "sync", errInjected},
		{"crash at rename", faultFS{failRename: true}, "rename", errInjected},
		{"dir fsync fails", faultFS{failSyncDir: true}, "sync dir", errInjected},
	}
	changes := []struct {
		name string
		do   func(s *Store) error
	}{
		{"set new", func(s *Store) error {
			_, err := s.Set("new", json.RawMessage(`{"big":"`+strings.Repeat("y", 200<<10)+`"}`), ScopePersistent)
			return err
		}},
		{"set replace", func(s *Store) error {
			_, err := s.Set("old", json.RawMessage(`"changed"`), ScopePersistent)
			return err
		}},
		{"unset", func(s *Store) error { _, err := s.Unset("old", ScopeAny); return err }},
		{"clear", func(s *Store) error { _, err := s.Clear("", ScopeAny); return err }},
	}
	for _, tt := range tests {
		for _, ch := range changes {
			t.Run(tt.name+"/"+ch.name, func(t *testing.T) {
				dir := stateDir(t)
				ffs := &faultFS{}
				s := open(t, Options{Dir: dir, fs: ffs})
				if _, err := s.Set("old", json.RawMessage(`"original"`), ScopePersistent); err != nil {
					t.Fatal(err)
				}
				s.Set("sess", json.RawMessage(`1`), ScopeSession)
				path := filepath.Join(dir, FileName)
				before, _ := os.ReadFile(path)

				ffs.failCreate, ffs.failWrite, ffs.failSync, ffs.failRename, ffs.failSyncDir =
					tt.fault.failCreate, tt.fault.failWrite, tt.fault.failSync, tt.fault.failRename, tt.fault.failSyncDir
				err := ch.do(s)
				var se *StorageError
				if !errors.As(err, &se) || se.Op != tt.op || !errors.Is(err, tt.cause) {
					t.Fatalf("change = %v, want *StorageError %q wrapping %v", err, tt.op, tt.cause)
				}
				// Nothing changed, in memory (not even the session half of an "any" change)...
				if v, from := mustGet(t, s, "old", ScopeAny); v != `"original"` || from != ScopePersistent {
					t.Fatalf("after a failed write Get = %s from %s", v, from)
				}
				if _, _, ok, _ := s.Get("new", ScopeAny); ok {
					t.Fatal("a failed Set is visible")
				}
				if _, _, ok, _ := s.Get("sess", ScopeSession); !ok {
					t.Fatal("a failed clear removed session entries")
				}
				// ...and on disk the file parses and is the old one, unless the rename
				// already happened (dir fsync), when it is the new one, whole.
				after, _ := os.ReadFile(path)
				if !json.Valid(after) {
					t.Fatalf("state file torn: %q", after)
				}
				if tt.op != "sync dir" && string(after) != string(before) {
					t.Fatalf("state file changed by a failed write:\n%s\nwas\n%s", after, before)
				}
				if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(tmps) != 0 {
					t.Fatalf("temp files left: %v", tmps)
				}
				// Once the disk recovers, the next write makes the file match memory.
				*ffs = faultFS{}
				if _, err := s.Set("later", json.RawMessage(`2`), ScopePersistent); err != nil {
					t.Fatal(err)
				}
				s2 := open(t, Options{Dir: dir})
				if v, _ := mustGet(t, s2, "old", ScopePersistent); v != `"original"` {
					t.Fatalf("reopened old = %s", v)
				}
				if _, _, ok, _ := s2.Get("new", ScopePersistent); ok {
					t.Fatal("a failed Set reached the file")
				}
			})
		}
	}
}

// Another program replaces state.json with something that is not a state
// document while a store runs: reads keep the view they had; the next
// change keeps the junk aside (as Open does) and writes the view with the
// change, so neither the junk nor the view is lost.
func TestFileCorruptedMidRun(t *testing.T) {
	s, dir := persistentStore(t, Options{})
	if _, err := s.Set("a", json.RawMessage(`1`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, _ := mustGet(t, s, "a", ScopePersistent); v != "1" {
		t.Fatalf("a = %s after the file was corrupted", v)
	}
	if _, err := s.Set("b", json.RawMessage(`2`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if got := dumpFile(t, dir); !sameEntries(got, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("the file holds %v, want a and b", got)
	}
	aside, _ := filepath.Glob(path + corruptInfix + "*")
	if len(aside) != 1 {
		t.Fatalf("kept aside: %v, want one file", aside)
	}
	if got, _ := os.ReadFile(aside[0]); string(got) != "junk" {
		t.Fatalf("%s holds %q", aside[0], got)
	}
}
