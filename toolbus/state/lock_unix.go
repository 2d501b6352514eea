//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

// lockFile waits for an exclusive advisory lock (flock) on f. Closing f
// releases it, also when the process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
