//go:build unix

package owner

import (
	"io/fs"
	"syscall"
)

// Checked reports whether file ownership and Unix permission bits mean
// anything here.
const Checked = true

// UID returns the uid owning fi's file, ok false when the file system
// does not say.
func UID(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
