//go:build unix

package artifacts

import (
	"io/fs"
	"os"
	"syscall"
)

// checkOwners says whether ownership and permission bits mean anything
// here.
const checkOwners = true

// ownerOf is the uid owning fi's file, ok false when the file system does
// not say.
func ownerOf(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func euid() int { return os.Geteuid() }
