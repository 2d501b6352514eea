//go:build !unix

package state

import "io/fs"

// oNoFollow: Windows has no O_NOFOLLOW; openNoFollow's Lstat and SameFile
// checks stand in for it.
const oNoFollow = 0

// sameFile is true: on Windows comparing file ids opens both files, too
// costly for every read; size and modification time (100 ns on NTFS) tell
// two versions of the state file apart.
func sameFile(a, b fs.FileInfo) bool { return true }
