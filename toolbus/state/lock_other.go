//go:build !unix && !windows

package state

import "os"

// lockFile does nothing where there is no file lock (wasip1, plan9): one
// process per state dir there.
func lockFile(*os.File) error { return nil }
