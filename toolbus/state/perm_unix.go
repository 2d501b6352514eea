//go:build unix

package state

import (
	"io/fs"
	"os"
	"syscall"
)

// oNoFollow makes opening a symbolic link fail (the path's last element),
// and opening a FIFO not wait for a writer.
const oNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// sameFile reports whether two infos describe one file (device and inode).
func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }
