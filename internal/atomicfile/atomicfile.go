// Package atomicfile replaces a file's content all at once: the data goes
// to a new temp file (mode 0600 unless told otherwise), is fsynced, and is
// renamed over the target, whose folder is then fsynced. A reader, or the
// file after a crash, has the old content or the new, never a part.
//
// The write never goes through a symbolic link: the temp file is created
// new (O_EXCL), and rename replaces a link at the target path instead of
// following it. The folder itself is the caller's to check.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/awbridge/awbridge/internal/owner"
)

// File is a temp file being written. *os.File implements it.
type File interface {
	io.Writer
	Name() string
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// FS is every file-system operation a write performs. OS is the real one;
// a test embeds OS and overrides a method to inject a failure (a full
// disk, a failed rename), which chmod cannot do for root.
type FS interface {
	// CreateTemp creates a new file like os.CreateTemp; File.Name is its
	// full path.
	CreateTemp(dir, pattern string) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir makes a folder's entries durable (a no-op where folders
	// cannot be synced).
	SyncDir(dir string) error
}

// OS is the real file system. The zero value is ready to use.
type OS struct{}

// CreateTemp is os.CreateTemp (mode 0600).
func (OS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return f, nil
}

// Rename is os.Rename.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove is os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// SyncDir fsyncs the folder dir (Unix); elsewhere it does nothing.
func (OS) SyncDir(dir string) error { return syncDir(dir) }

// Link is os.Link (for Options.NoReplace).
func (OS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Options tune a write. The zero value writes the target 0600 through a
// temp file beside it, durably.
type Options struct {
	// Perm is the file's mode (default 0600), set exactly whatever the
	// umask. Where modes mean nothing (Windows) a failed chmod is ignored.
	Perm fs.FileMode
	// TempDir holds the temp file (default: the target's folder). It must
	// be on the target's file system.
	TempDir string
	// Pattern names the temp file as in os.CreateTemp (default
	// "."+<target's name>+".tmp-*").
	Pattern string
	// NoSync skips both fsyncs: the new content may be lost in a crash
	// (never half of it). For caches and artifacts that may go missing.
	NoSync bool
	// NoReplace publishes the file only if the target does not exist (an
	// error wrapping fs.ErrExist otherwise): a hard link instead of a
	// rename, or, where the file system has no hard links (or FS has no
	// Link method), a check then a rename.
	NoReplace bool
	// FS is the file system (default OS).
	FS FS
}

// Operations an *Error names.
const (
	OpCreate  = "create"   // Path: the temp folder
	OpChmod   = "chmod"    // Path: the temp file
	OpWrite   = "write"    // Path: the temp file
	OpSync    = "sync"     // Path: the temp file
	OpClose   = "close"    // Path: the temp file
	OpRename  = "rename"   // Path: the target
	OpSyncDir = "sync dir" // Path: the target's folder; the new file is in place
)

// Error is a failed write: which step failed, on which path. Before
// OpSyncDir the target is untouched and the temp file is removed.
type Error struct {
	Op   string
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Write replaces path's content with data. Errors are *Error.
func Write(path string, data []byte, o Options) error {
	return WriteFunc(path, o, func(w io.Writer) error {
		n, err := w.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
		return err
	})
}

// WriteFunc replaces path's content with what write writes (buffer it:
// each Write goes to the file). An error from write is an *Error with
// OpWrite wrapping it; errors are *Error.
func WriteFunc(path string, o Options, write func(w io.Writer) error) (err error) {
	fsys := o.FS
	if fsys == nil {
		fsys = OS{}
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o600
	}
	dir := filepath.Dir(path)
	tempDir, pattern := o.TempDir, o.Pattern
	if tempDir == "" {
		tempDir = dir
	}
	if pattern == "" {
		pattern = "." + filepath.Base(path) + ".tmp-*"
	}
	f, err := fsys.CreateTemp(tempDir, pattern)
	if err != nil {
		return &Error{Op: OpCreate, Path: tempDir, Err: err}
	}
	tmp := f.Name()
	closed, placed := false, false
	defer func() {
		if !closed {
			_ = f.Close()
		}
		if !placed {
			_ = fsys.Remove(tmp) // best effort; callers sweep leftovers
		}
	}()
	// Off Unix chmod sets only the read-only flag: its failure is no
	// reason to fail the write.
	if err := f.Chmod(perm); err != nil && owner.Checked {
		return &Error{Op: OpChmod, Path: tmp, Err: err}
	}
	if err := write(f); err != nil {
		return &Error{Op: OpWrite, Path: tmp, Err: err}
	}
	if !o.NoSync {
		if err := f.Sync(); err != nil {
			return &Error{Op: OpSync, Path: tmp, Err: err}
		}
	}
	closed = true
	if err := f.Close(); err != nil {
		return &Error{Op: OpClose, Path: tmp, Err: err}
	}
	if err := publish(fsys, tmp, path, o.NoReplace); err != nil {
		return &Error{Op: OpRename, Path: path, Err: err}
	}
	placed = !o.NoReplace // a hard link leaves the temp name to remove
	if !o.NoSync {
		if err := fsys.SyncDir(dir); err != nil {
			return &Error{Op: OpSyncDir, Path: dir, Err: err}
		}
	}
	return nil
}

// publish puts tmp at path: a rename, or with noReplace a hard link that
// fails on an existing path.
func publish(fsys FS, tmp, path string, noReplace bool) error {
	if !noReplace {
		return fsys.Rename(tmp, path)
	}
	if l, ok := fsys.(interface {
		Link(oldname, newname string) error
	}); ok {
		err := l.Link(tmp, path)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err
		}
		// No hard links on this file system: check, then rename.
	}
	if _, err := os.Lstat(path); err == nil {
		return fs.ErrExist
	}
	return fsys.Rename(tmp, path)
}
