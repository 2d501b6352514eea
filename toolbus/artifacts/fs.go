package artifacts

import (
	"io"
	"io/fs"
	"os"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

// FS is the file-system operations a test may fail: OSFS is the real one;
// a test embeds OSFS and overrides a method to inject a failure (a full
// disk mid-write, a failed rename, an unwritable root), which chmod cannot
// do for a process running as root. Implementations must be safe for
// concurrent use.
type FS interface {
	atomicfile.FS
	Mkdir(name string, perm fs.FileMode) error
	Open(name string) (ReadFile, error)
}

// File is a file being written. *os.File implements it.
type File = atomicfile.File

// ReadFile is a file being read. *os.File implements it.
type ReadFile interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

// OSFS is the real file system. The zero value is ready to use.
type OSFS struct{ atomicfile.OS }

// Mkdir is os.Mkdir.
func (OSFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

// Open is os.Open.
func (OSFS) Open(name string) (ReadFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return f, nil
}
