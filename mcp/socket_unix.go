//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/awbridge/awbridge/internal/owner"
)

// ListenSocket listens on the Unix socket at path, private to this user:
// its folder is created 0700 (and must be a real folder owned by us), the
// socket is 0600. The listener holds a lock on path+".lock" until it is
// closed: whoever holds it owns the socket, so of two processes started
// together over a socket left by a dead one, exactly one replaces it and
// the other gets ErrAlreadyServing (as does any start while a live
// process answers). Close removes the socket, then releases the lock.
func ListenSocket(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	_, statErr := os.Lstat(dir)
	created := os.IsNotExist(statErr)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	if err := CheckSocketDir(path); err != nil {
		// A folder we just made, or our own awbridge folder, is tightened;
		// anybody else's folder (the home folder, say) is never chmodded.
		fi, lerr := os.Lstat(dir)
		if lerr != nil || !fi.IsDir() || !owner.Mine(fi) || !(created || strings.HasPrefix(filepath.Base(dir), "awbridge")) {
			return nil, err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("socket folder %s: %w", dir, err)
		}
	}
	lock, err := lockSocket(path)
	if err != nil {
		return nil, err
	}
	ln, err := listenLocked(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &lockedListener{Listener: ln, lock: lock}, nil
}

// lockSocket takes the lock file beside the socket at path, without
// waiting: held by another process, it is ErrAlreadyServing. The file is
// never removed (a process could otherwise lock a file already unlinked
// while a third one locks its replacement).
func lockSocket(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("socket lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", path, ErrAlreadyServing)
		}
		return nil, fmt.Errorf("socket lock %s: %w", name, err)
	}
	return f, nil
}

// lockedListener releases the socket's lock once the socket is gone.
type lockedListener struct {
	net.Listener
	lock *os.File
	once sync.Once
}

// Close stops listening, removes the socket and then releases the lock.
func (l *lockedListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { l.lock.Close() })
	return err
}

// listenLocked listens on path, replacing a socket no process answers;
// the caller holds the socket's lock.
func listenLocked(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if errors.Is(err, syscall.EADDRINUSE) {
		if c, derr := net.DialTimeout("unix", path, 500*time.Millisecond); derr == nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrAlreadyServing)
		}
		// Stale: the process that made it is gone. Only ever a socket.
		if fi, lerr := os.Lstat(path); lerr != nil || fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: not removing it", path)
		}
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

// dialProbe bounds how long a client waits to reach the service.
const dialProbe = 200 * time.Millisecond

// DialService connects to the service's Unix socket at path.
func DialService(path string) (net.Conn, error) { return net.DialTimeout("unix", path, dialProbe) }

// CheckSocketDir says whether the folder of the socket at path is private
// to this user: a real folder, owned by us, closed to others. A client
// checks it before it trusts the service behind the socket.
func CheckSocketDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket folder %s: %w", dir, err)
	}
	const fix = "set AWBRIDGE_SOCKET to a path in a folder of your own (e.g. ~/.local/state/awbridge/awbridge.sock)"
	if !fi.IsDir() {
		return fmt.Errorf("socket folder %s is not a folder: %s", dir, fix)
	}
	if !owner.Mine(fi) {
		return fmt.Errorf("socket folder %s belongs to another user, who may have made it to keep awbridge from starting: %s", dir, fix)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("socket folder %s is open to other users (mode %o): run chmod 700 %s, or %s", dir, fi.Mode().Perm(), dir, fix)
	}
	return nil
}
