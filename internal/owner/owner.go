// Package owner answers "who owns this file", the check behind every
// folder and file awbridge refuses or tightens because another user could
// change it (the socket folder, the state file and folder, the context
// root, the protection baseline).
//
// Off Unix (Windows: ACLs, no owner uid or mode bits) Checked is false
// and Mine answers false, decided once here: a file not proven to be ours
// is treated as someone else's, so a caller that forgot to test Checked
// refuses or leaves alone rather than trusts.
package owner

import (
	"io/fs"
	"os"
)

// Mine reports whether fi's file belongs to the effective user running
// awbridge; false when the file system does not say.
func Mine(fi fs.FileInfo) bool {
	uid, ok := UID(fi)
	return ok && uid == os.Geteuid()
}
