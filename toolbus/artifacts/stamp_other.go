//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package artifacts

import (
	"fmt"
	"os"
	"time"
)

// openStamp opens the prune stamp at path, creating it empty (mode
// FileMode) when missing. Without O_NOFOLLOW here, a stamp that is not a
// regular file is refused before it is opened.
func openStamp(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
}

// tryLock has no cross-process lock here: two processes starting within
// the same moment may both prune (harmless: a pass only removes what is
// over the limits, and a run another pass removed is skipped).
func tryLock(*os.File) (bool, error) { return true, nil }

// touchStamp sets the stamp's modification time to t.
func touchStamp(_ *os.File, path string, t time.Time) error { return os.Chtimes(path, t, t) }
