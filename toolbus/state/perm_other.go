//go:build !unix

package state

import "io/fs"

// checkPerms says whether Unix permission bits mean anything here.
const checkPerms = false

// oNoFollow: Windows has no O_NOFOLLOW; openNoFollow's Lstat and SameFile
// checks stand in for it.
const oNoFollow = 0

func ownedByMe(fs.FileInfo) bool { return false }
