package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/awbridge/awbridge/internal/owner"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyTarget fails unless dir holds exactly the named files (no temp file
// left behind).
func onlyTarget(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("folder holds %q, want %q", got, names)
	}
	for i := range names {
		if got[i] != names[i] {
			t.Fatalf("folder holds %q, want %q", got, names)
		}
	}
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("one"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "two" {
		t.Fatalf("content %q", got)
	}
	onlyTarget(t, dir, "f.json")
	if runtime.GOOS != "windows" {
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", st.Mode())
		}
		if err := Write(path, []byte("three"), Options{Perm: 0o640}); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Fatalf("mode %v, want 0640", st.Mode())
		}
	}
}

func TestWriteReplacesASymlinkInsteadOfFollowingIt(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	path := filepath.Join(dir, "f")
	if err := os.Symlink(victim, path); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := Write(path, []byte("new"), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, victim); got != "precious" {
		t.Fatalf("the write went through the link: victim now %q", got)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&fs.ModeSymlink != 0 || read(t, path) != "new" {
		t.Fatal("the link was not replaced by the new file")
	}
}

func TestTempDirAndPattern(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	var created string
	fsys := &faultFS{onCreate: func(d, p string) { created = d + "|" + p }}
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("x"), Options{TempDir: tmp, Pattern: "f.part-*", FS: fsys}); err != nil {
		t.Fatal(err)
	}
	if created != tmp+"|f.part-*" {
		t.Fatalf("temp created as %q", created)
	}
	onlyTarget(t, tmp)
	onlyTarget(t, dir, "f")
}

var errInjected = errors.New("injected")

// faultFS is the OS with injected failures.
type faultFS struct {
	OS
	onCreate                                                         func(dir, pattern string)
	failCreate, failChmod, failWrite, failShort, failSync, failClose bool
	failRename, failSyncDir                                          bool
	dirSyncs                                                         int
}

func (f *faultFS) CreateTemp(dir, pattern string) (File, error) {
	if f.onCreate != nil {
		f.onCreate(dir, pattern)
	}
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
	f.dirSyncs++
	if f.failSyncDir {
		return errInjected
	}
	return f.OS.SyncDir(dir)
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (f *faultFile) Chmod(m fs.FileMode) error {
	if f.fs.failChmod {
		return errInjected
	}
	return f.File.Chmod(m)
}

func (f *faultFile) Write(p []byte) (int, error) {
	switch {
	case f.fs.failWrite:
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	case f.fs.failShort:
		return f.File.Write(p[:len(p)/2])
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if f.fs.failSync {
		return errInjected
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	err := f.File.Close()
	if f.fs.failClose {
		return errInjected
	}
	return err
}

func TestFaultsLeaveTheTargetAndNoTemp(t *testing.T) {
	tests := []struct {
		name  string
		fault faultFS
		op    string
		cause error
	}{
		{"create fails", faultFS{failCreate: true}, OpCreate, errInjected},
		{"chmod fails", faultFS{failChmod: true}, OpChmod, errInjected},
		{"disk full", faultFS{failWrite: true}, OpWrite, syscall.ENOSPC},
		{"short write", faultFS{failShort: true}, OpWrite, io.ErrShortWrite},
		{"fsync fails", faultFS{failSync: true}, OpSync, errInjected},
		{"close fails", faultFS{failClose: true}, OpClose, errInjected},
		{"rename fails", faultFS{failRename: true}, OpRename, errInjected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.op == OpChmod && !owner.Checked {
				t.Skip("a failed chmod is ignored here")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			os.WriteFile(path, []byte("old"), 0o600)
			fsys := tt.fault
			err := Write(path, []byte("new content"), Options{FS: &fsys})
			var e *Error
			if !errors.As(err, &e) || e.Op != tt.op || !errors.Is(err, tt.cause) {
				t.Fatalf("Write = %v, want *Error %q wrapping %v", err, tt.op, tt.cause)
			}
			if got := read(t, path); got != "old" {
				t.Fatalf("target now %q", got)
			}
			onlyTarget(t, dir, "f")
		})
	}
	t.Run("dir fsync fails: the file is in place, and said so", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		err := Write(path, []byte("new"), Options{FS: &faultFS{failSyncDir: true}})
		var e *Error
		if !errors.As(err, &e) || e.Op != OpSyncDir || e.Path != dir {
			t.Fatalf("Write = %v, want *Error %q on %s", err, OpSyncDir, dir)
		}
		if got := read(t, path); got != "new" {
			t.Fatalf("target now %q", got)
		}
	})
}

func TestNoSyncSyncsNothing(t *testing.T) {
	fsys := &faultFS{failSync: true, failSyncDir: true}
	path := filepath.Join(t.TempDir(), "f")
	if err := Write(path, []byte("x"), Options{FS: fsys, NoSync: true}); err != nil || fsys.dirSyncs != 0 {
		t.Fatalf("Write = %v after %d folder syncs; want neither fsync", err, fsys.dirSyncs)
	}
}

func TestWriteFuncWrapsTheWritersError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	boom := errors.New("encoder failed")
	err := WriteFunc(path, Options{}, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	var e *Error
	if !errors.As(err, &e) || e.Op != OpWrite || !errors.Is(err, boom) {
		t.Fatalf("WriteFunc = %v", err)
	}
	onlyTarget(t, dir)
}

func TestNoReplace(t *testing.T) {
	for _, name := range []string{"hard link", "rename fallback"} {
		t.Run(name, func(t *testing.T) {
			var fsys FS = OS{}
			if name == "rename fallback" {
				fsys = struct{ FS }{OS{}} // hides Link
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "token")
			if err := Write(path, []byte("first"), Options{NoReplace: true, FS: fsys}); err != nil {
				t.Fatal(err)
			}
			err := Write(path, []byte("second"), Options{NoReplace: true, FS: fsys})
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("second Write = %v, want fs.ErrExist", err)
			}
			if got := read(t, path); got != "first" {
				t.Fatalf("content %q: an existing file was replaced", got)
			}
			onlyTarget(t, dir, "token")
		})
	}
}
