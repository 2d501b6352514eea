//go:build unix

package mcp

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// staleSocket leaves a socket file nobody listens on, as a killed process
// leaves it.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

// Starts racing over a stale socket: exactly one takes it over, every
// other one is ErrAlreadyServing, and the winner's socket is still there
// and answering once they all returned (none unlinked it).
func TestListenSocketStaleTakeoverIsExclusive(t *testing.T) {
	const rounds, racers = 50, 4
	dir := filepath.Join(t.TempDir(), "awbridge")
	path := filepath.Join(dir, "awbridge.sock")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		staleSocket(t, path)
		lns := make([]net.Listener, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				lns[i], errs[i] = ListenSocket(path)
			})
		}
		close(start)
		wg.Wait()
		var won []net.Listener
		for i := range racers {
			switch {
			case errs[i] == nil:
				won = append(won, lns[i])
			case !errors.Is(errs[i], ErrAlreadyServing):
				t.Errorf("round %d: %v, want ErrAlreadyServing", round, errs[i])
			}
		}
		if len(won) != 1 {
			for _, ln := range won {
				ln.Close()
			}
			t.Fatalf("round %d: %d of %d starts listen on the socket, want exactly 1", round, len(won), racers)
		}
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("round %d: the winner's socket does not answer: %v", round, err)
		}
		c.Close()
		won[0].Close()
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Fatalf("round %d: the socket outlived its listener: %v", round, err)
		}
	}
}

// While one listener holds the socket, another start is refused even
// when the socket file was removed behind its back; once it is closed the
// socket is free again.
func TestListenSocketLockOutlivesTheSocketFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	ln, err := ListenSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if again, err := ListenSocket(path); !errors.Is(err, ErrAlreadyServing) {
		if again != nil {
			again.Close()
		}
		t.Fatalf("second start while the first holds the lock: %v", err)
	}
	ln.Close()
	ln, err = ListenSocket(path)
	if err != nil {
		t.Fatalf("start after the first closed: %v", err)
	}
	ln.Close()
}
