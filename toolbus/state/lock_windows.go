//go:build windows

package state

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile waits for an exclusive lock (LockFileEx) on the first byte of
// f. Closing f releases it, also when the process dies.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}
