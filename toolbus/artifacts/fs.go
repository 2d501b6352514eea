package artifacts

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is every file-system operation the Store performs. OSFS is the real
// one; a test embeds OSFS and overrides a method to inject a failure (a full
// disk mid-write, a failed rename, an unwritable root), which chmod cannot do
// for a process running as root. Implementations must be safe for concurrent
// use.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	EvalSymlinks(path string) (string, error)
	Mkdir(name string, perm fs.FileMode) error
	Chmod(name string, mode fs.FileMode) error
	// CreateTemp creates a new file like os.CreateTemp; File.Name is its
	// full path.
	CreateTemp(dir, pattern string) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	Open(name string) (ReadFile, error)
	ReadDir(name string) ([]fs.DirEntry, error)
}

// File is a file being written. *os.File implements it.
type File interface {
	Name() string
	Write(p []byte) (int, error)
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// ReadFile is a file being read. *os.File implements it.
type ReadFile interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

// OSFS is the real file system. The zero value is ready to use.
type OSFS struct{}

func (OSFS) Lstat(name string) (fs.FileInfo, error)    { return os.Lstat(name) }
func (OSFS) EvalSymlinks(path string) (string, error)  { return filepath.EvalSymlinks(path) }
func (OSFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }
func (OSFS) Chmod(name string, mode fs.FileMode) error { return os.Chmod(name, mode) }
func (OSFS) Rename(oldpath, newpath string) error      { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(name string) error                  { return os.Remove(name) }
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return os.ReadDir(name)
}

func (OSFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (OSFS) Open(name string) (ReadFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}
