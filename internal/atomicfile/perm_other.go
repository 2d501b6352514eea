//go:build !unix

package atomicfile

// modesMatter: Windows has no Unix modes (chmod sets only the read-only
// flag), so a failed chmod does not fail the write.
const modesMatter = false

// syncDir is a no-op: Windows cannot fsync a directory, and its rename is
// durable once the file's data is.
func syncDir(string) error { return nil }
