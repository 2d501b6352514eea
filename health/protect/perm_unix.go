//go:build unix

package protect

import (
	"io/fs"
	"os"
	"syscall"
)

// openRead opens path for reading without blocking on a FIFO (the caller
// checks the file is regular before reading it).
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// sysKey is the part of a file's identity beyond size and mtime: inode,
// device and change time (which no ordinary call can set back).
func sysKey(fi fs.FileInfo) (ino, dev uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return uint64(st.Ino), uint64(st.Dev), ctimeOf(st)
}
