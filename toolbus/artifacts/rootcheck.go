package artifacts

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/awbridge/awbridge/internal/owner"
)

// RootError is a context root, or its artifacts folder, refused because
// another user could change what it holds: it belongs to another user, or
// its group or others may write in it. Another user who can write there
// can replace a run folder with a symbolic link, plant files that read
// back as artifacts, or remove them. The Store never uses such a folder.
type RootError struct {
	Path   string // the folder refused
	Reason string // e.g. "is writable by others"
	Fix    string // what the person can do, e.g. "chmod 700 it"
}

// Error reads as the health line: "refused: /path is writable by others
// (chmod 700 it)".
func (e *RootError) Error() string {
	return fmt.Sprintf("refused: %s %s (%s)", e.Path, e.Reason, e.Fix)
}

// checkRoot checks the context root (its links resolved) and its
// artifacts folder, when there is one: each must belong to the user
// running awbridge and be writable by no one else. It returns the
// *RootError of a folder refused, nil when they are fine or cannot be
// looked at (Open says why). Off Unix it checks nothing.
func checkRoot(root string) error {
	if !owner.Checked {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		root, err = filepath.EvalSymlinks(abs)
	}
	fi, lerr := os.Lstat(root)
	if err != nil || lerr != nil || !fi.IsDir() {
		return nil
	}
	if err := checkFolder(root, fi); err != nil {
		return err
	}
	art := filepath.Join(root, "artifacts")
	fi, err = os.Lstat(art)
	if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	return checkFolder(art, fi)
}

// checkFolder refuses a folder owned by another user or writable by its
// group or by others.
func checkFolder(path string, fi fs.FileInfo) error {
	if uid, ok := owner.UID(fi); ok && !owner.Mine(fi) {
		return &RootError{Path: path, Reason: fmt.Sprintf("belongs to another user (uid %d)", uid),
			Fix: "use a folder of your own, or chown it to yourself"}
	}
	switch perm := fi.Mode().Perm(); {
	case perm&0o002 != 0:
		return &RootError{Path: path, Reason: "is writable by others", Fix: "chmod 700 it"}
	case perm&0o020 != 0:
		return &RootError{Path: path, Reason: "is writable by its group", Fix: "chmod 700 it"}
	}
	return nil
}
