//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package artifacts

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// openStamp opens the prune stamp at path for reading and writing, never
// through a symbolic link, creating it empty (mode FileMode) when missing.
func openStamp(path string) (*os.File, error) {
	// O_NONBLOCK: a FIFO planted there never blocks the open.
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, FileMode)
}

// tryLock takes an exclusive flock on f without waiting: false when
// another open of the file (this process's or another's) holds it. The
// lock goes with f's close, or with the process.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
	}); err != nil {
		return false, err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return lerr == nil, lerr
}

// touchStamp sets f's modification time to t, through the open file.
func touchStamp(f *os.File, _ string, t time.Time) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	tv := syscall.NsecToTimeval(t.UnixNano())
	var terr error
	if err := rc.Control(func(fd uintptr) {
		terr = syscall.Futimes(int(fd), []syscall.Timeval{tv, tv})
	}); err != nil {
		return err
	}
	return terr
}
