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

// checkRoot checks the context root root (symbolic links resolved, as Open
// does) and its artifacts folder when there is one: each must belong to
// the user running awbridge and be writable by no one else. It returns a
// *RootError for a folder that is refused, nil when they are fine or
// cannot be looked at (Open then reports why: a root that does not exist
// or is not a folder). On Windows, which has no Unix modes, it checks
// nothing.
func checkRoot(root string) error {
	if !owner.Checked || root == "" {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil
	}
	fi, err := os.Lstat(resolved)
	if err != nil || !fi.IsDir() {
		return nil
	}
	if err := checkFolder(resolved, fi); err != nil {
		return err
	}
	art := filepath.Join(resolved, "artifacts")
	fi, err = os.Lstat(art)
	if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	return checkFolder(art, fi)
}

// checkFolder refuses a folder owned by another user or writable by its
// group or by others.
func checkFolder(path string, fi fs.FileInfo) error {
	if !owner.Checked {
		return nil
	}
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
