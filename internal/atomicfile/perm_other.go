//go:build !unix

package atomicfile

// syncDir is a no-op: Windows cannot fsync a directory, and its rename is
// durable once the file's data is.
func syncDir(string) error { return nil }
