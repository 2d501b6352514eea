package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// newStore opens a store on a fresh root.
func newStore(t testing.TB, o Options) *Store {
	t.Helper()
	if o.Root == "" {
		o.Root = t.TempDir()
	}
	s, warn := Open(o)
	if warn != "" || !s.Enabled() {
		t.Fatalf("Open(%q) = enabled %v, warning %q", o.Root, s.Enabled(), warn)
	}
	return s
}

// files lists every non-folder below root, slash-separated and sorted.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

func TestWriteCall(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	ctxDoc := []byte("[LEGEND]\nA = x\n\n[CONTENT]\nA: . = 1\n")
	result := []byte("{\"success\":true,\"result\":\"caf\xc3\xa9\\u0000\",\"x\":[1, 2 ]}\n")
	uc, uj, err := s.WriteCall("0190b1c2-7d1e-7a3b", "span.1", ctxDoc, result)
	if err != nil {
		t.Fatal(err)
	}
	if want := "artifact://runs/0190b1c2-7d1e-7a3b/tool_calls/span.1.context"; uc != want {
		t.Errorf("context uri = %q, want %q", uc, want)
	}
	if want := "artifact://runs/0190b1c2-7d1e-7a3b/tool_calls/span.1/result.json"; uj != want {
		t.Errorf("json uri = %q, want %q", uj, want)
	}
	calls := filepath.Join(root, "artifacts", "runs", "0190b1c2-7d1e-7a3b", "tool_calls")
	for path, want := range map[string][]byte{
		filepath.Join(calls, "span.1.context"):        ctxDoc,
		filepath.Join(calls, "span.1", "result.json"): result,
	} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
		wantMode(t, path, 0o600)
	}
	for _, d := range []string{"artifacts", "artifacts/runs", "artifacts/runs/0190b1c2-7d1e-7a3b", "artifacts/runs/0190b1c2-7d1e-7a3b/tool_calls", "artifacts/runs/0190b1c2-7d1e-7a3b/tool_calls/span.1"} {
		wantMode(t, filepath.Join(root, filepath.FromSlash(d)), 0o700)
	}
	if got, want := files(t, root), []string{
		"artifacts/runs/0190b1c2-7d1e-7a3b/tool_calls/span.1.context",
		"artifacts/runs/0190b1c2-7d1e-7a3b/tool_calls/span.1/result.json",
	}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}

	// The same span again replaces both files whole.
	if _, _, err := s.WriteCall("0190b1c2-7d1e-7a3b", "span.1", []byte("second"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(calls, "span.1", "result.json")); string(got) != "{}" {
		t.Errorf("after rewrite result.json = %q", got)
	}
	if n := len(files(t, root)); n != 2 {
		t.Errorf("after rewrite %d files, want 2", n)
	}
}

func TestWriteCallEmptyAndRead(t *testing.T) {
	s := newStore(t, Options{})
	_, uj, err := s.WriteCall("t", "s", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, info, err := s.Read(uj, ModeGet, 0)
	if err != nil || len(data) != 0 || info.Bytes != 0 || info.Truncated {
		t.Errorf("Read(empty) = %q, %+v, %v", data, info, err)
	}
}

func TestSpill(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	text := bytes.Repeat([]byte("secret-free text\n"), 1000)
	uri, err := s.Spill("t", "s", 3, text)
	if err != nil {
		t.Fatal(err)
	}
	if want := "artifact://runs/t/tool_calls/s/spill-3.txt"; uri != want {
		t.Errorf("uri = %q, want %q", uri, want)
	}
	path := filepath.Join(root, "artifacts", "runs", "t", "tool_calls", "s", "spill-3.txt")
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("spill file: %d bytes, %v", len(got), err)
	}
	wantMode(t, path, 0o600)
	for _, n := range []int{-1, maxSpill + 1} {
		if _, err := s.Spill("t", "s", n, text); err == nil {
			t.Errorf("Spill(n=%d) succeeded", n)
		}
	}
}

func TestWriteRefusesInvalidNames(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	for _, tc := range [][2]string{
		{"..", "s"}, {"t", ".."}, {".", "s"}, {"", "s"}, {"t", ""}, {"a/b", "s"}, {"t", "../../x"},
		{"t", "/etc/passwd"}, {`t\..`, "s"}, {strings.Repeat("a", 129), "s"}, {"t", "s%2f"},
	} {
		_, _, err := s.WriteCall(tc[0], tc[1], []byte("x"), []byte("{}"))
		var we *WriteError
		if !errors.As(err, &we) || we.Op != "validate" || !errors.Is(err, ErrInvalidName) {
			t.Errorf("WriteCall(%q, %q) = %v, want a validate *WriteError", tc[0], tc[1], err)
		}
		if _, err := s.Spill(tc[0], tc[1], 0, []byte("x")); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Spill(%q, %q) = %v, want ErrInvalidName", tc[0], tc[1], err)
		}
	}
	if got := files(t, root); len(got) != 0 {
		t.Errorf("files written: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "artifacts")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("artifacts folder created for invalid names: %v", err)
	}
}

func TestWriteTooLarge(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	over, at := make([]byte, MaxFileBytes+1), make([]byte, MaxFileBytes)
	for _, tc := range []struct{ ctx, res []byte }{{over, []byte("{}")}, {[]byte("x"), over}} {
		_, _, err := s.WriteCall("t", "s", tc.ctx, tc.res)
		var we *WriteError
		if !errors.Is(err, ErrTooLarge) || !errors.As(err, &we) {
			t.Errorf("WriteCall(%d, %d bytes) = %v, want ErrTooLarge", len(tc.ctx), len(tc.res), err)
		}
	}
	if _, err := s.Spill("t", "s", 0, over); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Spill = %v, want ErrTooLarge", err)
	}
	if _, _, err := s.WriteCall("t", "s", at, []byte("{}")); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func TestWriteRefusesSymlinkedFolder(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s := newStore(t, Options{Root: root})
	runs := filepath.Join(root, "artifacts", "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(runs, "t")); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.WriteCall("t", "s", []byte("x"), []byte("{}"))
	var we *WriteError
	if !errors.As(err, &we) || we.Op != "mkdir" {
		t.Fatalf("WriteCall through a symlinked trace folder = %v, want a mkdir *WriteError", err)
	}
	if got := files(t, outside); len(got) != 0 {
		t.Errorf("written outside the root: %q", got)
	}
}

func TestWriteCallConcurrent(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			_, _, errs[i] = s.WriteCall("t", fmt.Sprintf("s%d", i), []byte("ctx"), []byte("{}"))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if n := len(files(t, root)); n != 32 {
		t.Errorf("%d files, want 32", n)
	}
}

// faultFS fails one operation on files whose name contains target.
type faultFS struct {
	OSFS
	op     string // mkdir, create, chmod, write, sync, close, rename
	target string // part of the final file's name; "" matches every file
	err    error
}

func (f *faultFS) hit(op, name string) bool {
	return f.op == op && strings.Contains(name, f.target)
}

func (f *faultFS) Mkdir(name string, perm fs.FileMode) error {
	if f.hit("mkdir", filepath.Base(name)) {
		return &fs.PathError{Op: "mkdir", Path: name, Err: f.err}
	}
	return f.OSFS.Mkdir(name, perm)
}

func (f *faultFS) CreateTemp(dir, pattern string) (File, error) {
	if f.hit("create", pattern) {
		return nil, &fs.PathError{Op: "createtemp", Path: dir, Err: f.err}
	}
	file, err := f.OSFS.CreateTemp(dir, pattern)
	if err != nil || !strings.Contains(pattern, f.target) {
		return file, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	if f.hit("rename", filepath.Base(newpath)) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: f.err}
	}
	return f.OSFS.Rename(oldpath, newpath)
}

type faultFile struct {
	File
	fs *faultFS
}

func (w *faultFile) Write(p []byte) (int, error) {
	if w.fs.op == "write" { // a disk that fills up half-way
		n, _ := w.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: w.Name(), Err: w.fs.err}
	}
	return w.File.Write(p)
}

func (w *faultFile) Sync() error {
	if w.fs.op == "sync" {
		return &fs.PathError{Op: "sync", Path: w.Name(), Err: w.fs.err}
	}
	return w.File.Sync()
}

func (w *faultFile) Chmod(m fs.FileMode) error {
	if w.fs.op == "chmod" {
		return &fs.PathError{Op: "chmod", Path: w.Name(), Err: w.fs.err}
	}
	return w.File.Chmod(m)
}

func (w *faultFile) Close() error {
	err := w.File.Close()
	if w.fs.op == "close" {
		return &fs.PathError{Op: "close", Path: w.Name(), Err: w.fs.err}
	}
	return err
}

// shortFile reports writing less than it was given, without an error.
type shortFile struct{ File }

func (w shortFile) Write(p []byte) (int, error) { return w.File.Write(p[:len(p)/2]) }

type shortFS struct{ OSFS }

func (shortFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := OSFS{}.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return shortFile{f}, nil
}

func TestWriteFailuresLeaveNothing(t *testing.T) {
	for _, op := range []string{"mkdir", "create", "chmod", "write", "close", "rename"} {
		for _, target := range []string{"result.json", ".context", "spill-"} {
			if op == "mkdir" && target != "result.json" {
				continue
			}
			t.Run(op+"/"+target, func(t *testing.T) {
				root := t.TempDir()
				target := target
				if op == "mkdir" {
					target = "tool_calls"
				}
				ffs := &faultFS{op: op, target: target, err: syscall.ENOSPC}
				s := newStore(t, Options{Root: root, FS: ffs})
				var err error
				if target == "spill-" {
					var uri string
					uri, err = s.Spill("t", "s", 1, bytes.Repeat([]byte("x"), 4096))
					if uri != "" {
						t.Errorf("uri %q returned with an error", uri)
					}
				} else {
					var uc, uj string
					uc, uj, err = s.WriteCall("t", "s", bytes.Repeat([]byte("c"), 4096), bytes.Repeat([]byte("j"), 4096))
					if uc != "" || uj != "" {
						t.Errorf("uris %q, %q returned with an error", uc, uj)
					}
				}
				var we *WriteError
				if !errors.As(err, &we) || we.Op != op {
					t.Fatalf("err = %v, want a *WriteError with Op %q", err, op)
				}
				if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("err = %v, does not wrap ENOSPC", err)
				}
				if got := files(t, root); len(got) != 0 {
					t.Errorf("left behind: %q", got)
				}
				// A later write with a healthy disk works.
				ffs.op = ""
				if _, _, err := s.WriteCall("t", "s", []byte("c"), []byte("{}")); err != nil {
					t.Errorf("write after the failure: %v", err)
				}
			})
		}
	}
	t.Run("short write", func(t *testing.T) {
		root := t.TempDir()
		s := newStore(t, Options{Root: root, FS: shortFS{}})
		_, _, err := s.WriteCall("t", "s", []byte("context"), []byte("result"))
		var we *WriteError
		if !errors.As(err, &we) || we.Op != "write" {
			t.Fatalf("err = %v, want a write *WriteError", err)
		}
		if got := files(t, root); len(got) != 0 {
			t.Errorf("left behind: %q", got)
		}
	})
}

// A failure of the second file removes the first, leaving an older call's
// files of another span alone.
func TestWriteCallRollbackKeepsOtherSpans(t *testing.T) {
	root := t.TempDir()
	ffs := &faultFS{target: ".context", err: syscall.EIO}
	s := newStore(t, Options{Root: root, FS: ffs})
	if _, _, err := s.WriteCall("t", "old", []byte("c"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	ffs.op = "rename"
	if _, _, err := s.WriteCall("t", "new", []byte("c"), []byte("{}")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want EIO", err)
	}
	want := []string{"artifacts/runs/t/tool_calls/old.context", "artifacts/runs/t/tool_calls/old/result.json"}
	if got := files(t, root); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

func TestOpen(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	artFile := filepath.Join(base, "artfile")
	if err := os.MkdirAll(artFile, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artFile, "artifacts"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	artLink := filepath.Join(base, "artlink")
	if err := os.MkdirAll(artLink, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(artLink, "artifacts")); err != nil {
		t.Fatal(err)
	}
	unwritable := t.TempDir()
	tests := []struct {
		name string
		o    Options
		warn string // "" means enabled and no warning
	}{
		{"missing", Options{Root: filepath.Join(base, "nope")}, "does not exist"},
		{"a file", Options{Root: file}, "is not a folder"},
		{"artifacts is a file", Options{Root: artFile}, "not a folder"},
		{"artifacts is a symlink", Options{Root: artLink}, "symbolic link"},
		{"unwritable", Options{Root: unwritable, FS: &faultFS{op: "create", err: syscall.EACCES}}, "not writable"},
		{"read-only fs", Options{Root: unwritable, FS: &faultFS{op: "create", err: syscall.EROFS}}, "not writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, warn := Open(tt.o)
			if s.Enabled() || s.root != "" {
				t.Errorf("enabled with root %q", s.root)
			}
			if !strings.HasPrefix(warn, "artifacts are off: ") || !strings.Contains(warn, tt.warn) {
				t.Errorf("warning = %q, want one containing %q", warn, tt.warn)
			}
			if strings.Contains(warn, "\n") {
				t.Errorf("warning spans lines: %q", warn)
			}
			if _, _, err := s.WriteCall("t", "s", nil, nil); !errors.Is(err, ErrDisabled) {
				t.Errorf("WriteCall = %v, want ErrDisabled", err)
			}
			if _, err := s.Spill("t", "s", 0, nil); !errors.Is(err, ErrDisabled) {
				t.Errorf("Spill = %v, want ErrDisabled", err)
			}
			if _, _, err := s.Read("artifact://runs/t/tool_calls/s.context", ModeGet, 0); !errors.Is(err, ErrDisabled) {
				t.Errorf("Read = %v, want ErrDisabled", err)
			}
			if _, _, err := s.List("t"); !errors.Is(err, ErrDisabled) {
				t.Errorf("List = %v, want ErrDisabled", err)
			}
		})
	}
	if got := files(t, unwritable); len(got) != 0 {
		t.Errorf("probe left %q", got)
	}

	t.Run("newline in the root", func(t *testing.T) {
		_, warn := Open(Options{Root: filepath.Join(base, "a\nb")})
		if warn == "" || strings.ContainsAny(warn, "\n\r") {
			t.Errorf("warning = %q", warn)
		}
	})
	t.Run("nil store", func(t *testing.T) {
		var s *Store
		if s.Enabled() {
			t.Error("a nil store is enabled")
		}
		if _, _, err := s.WriteCall("t", "s", nil, nil); !errors.Is(err, ErrDisabled) {
			t.Errorf("WriteCall = %v", err)
		}
	})
	t.Run("not configured", func(t *testing.T) {
		s, warn := Open(Options{})
		if s.Enabled() || warn != "" {
			t.Errorf("Open(no root) = enabled %v, warning %q", s.Enabled(), warn)
		}
	})
	t.Run("symlinked root", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		s := newStore(t, Options{Root: link})
		want, _ := filepath.EvalSymlinks(real)
		if s.root != want {
			t.Errorf("root = %q, want %q", s.root, want)
		}
		if _, _, err := s.WriteCall("t", "s", nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := files(t, real); len(got) != 2 {
			t.Errorf("files under the real root: %q", got)
		}
	})
	t.Run("probe leaves nothing", func(t *testing.T) {
		root := t.TempDir()
		newStore(t, Options{Root: root})
		if err := os.Mkdir(filepath.Join(root, "artifacts"), 0o700); err != nil {
			t.Fatal(err)
		}
		newStore(t, Options{Root: root})
		entries, _ := os.ReadDir(root)
		inner, _ := os.ReadDir(filepath.Join(root, "artifacts"))
		if len(entries) != 1 || len(inner) != 0 {
			t.Errorf("after Open the root holds %v and artifacts %v", entries, inner)
		}
	})
}
