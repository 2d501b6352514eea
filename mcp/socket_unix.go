//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ListenSocket listens on the Unix socket at path, private to this user:
// its folder is created 0700 (and must be a real folder owned by us), the
// socket is 0600. A socket left by a dead process is replaced; one that a
// live process answers is ErrAlreadyServing.
func ListenSocket(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (ok && int(st.Uid) != os.Getuid()) {
		return nil, fmt.Errorf("socket folder %s is not a folder owned by this user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("socket folder %s: %w", dir, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if errors.Is(err, syscall.EADDRINUSE) {
		if c, derr := net.DialTimeout("unix", path, 500*time.Millisecond); derr == nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrAlreadyServing)
		}
		// Stale: the process that made it is gone.
		if rerr := os.Remove(path); rerr != nil {
			return nil, fmt.Errorf("removing the stale socket %s: %w", path, rerr)
		}
		ln, err = net.Listen("unix", path)
	}
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	return ln, nil
}
