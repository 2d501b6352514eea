package mcp

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"
)

// Connections beyond MaxConnections get one clear error line and are
// closed; the ones already served go on.
func TestServeListenerCapsConnections(t *testing.T) {
	g := newGate()
	var logged syncLog
	srv := NewServer(g, Options{MaxConnections: 2, Logger: zerolog.New(&logged)})
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { srv.ServeListener(ctx, ln) })
	defer func() { cancel(); wg.Wait() }()

	var held []net.Conn
	for range 2 {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(toolCall("1", "hold", `{}`) + "\n"))
		held = append(held, c)
	}
	g.waitStarted(t, 2) // both connections are being served
	for i := range 5 {
		extra, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(extra).ReadString('\n')
		extra.Close()
		if !strings.Contains(line, "too many connections") || !strings.Contains(line, `"code":"ConcurrencyLimited"`) {
			t.Fatalf("extra connection %d got %q", i, line)
		}
	}
	// A flood is one warning, not one per connection.
	if n := strings.Count(logged.String(), "too many"); n != 1 {
		t.Fatalf("%d warnings for 5 refused connections:\n%s", n, logged.String())
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	for _, c := range held {
		if l, _ := bufio.NewReader(c).ReadString('\n'); !strings.Contains(l, `"id":1`) {
			t.Fatalf("a served connection lost its reply: %q", l)
		}
	}
}

// syncLog is a log destination safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// chanListener is a net.Listener handing out the connections sent on c.
type chanListener struct {
	c      chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newChanListener(n int) *chanListener {
	return &chanListener{c: make(chan net.Conn, n), closed: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.UnixAddr{Name: "chan", Net: "unix"} }

// A refused peer that never reads does not stall the accept loop (review
// of issue 16): the refusals are written beside it, and ServeListener
// waits for them before it returns.
func TestServeListenerRefusesWithoutStalling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const refused = 10
		srv := NewServer(newGate(), Options{MaxConnections: 1})
		ln := newChanListener(refused + 1)
		var peers []net.Conn
		for range refused + 1 {
			server, peer := net.Pipe() // a write blocks until the peer reads: it never does
			ln.c <- server
			peers = append(peers, peer)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- srv.ServeListener(ctx, ln) }()
		synctest.Wait()
		if left := len(ln.c); left != 0 {
			t.Errorf("%d connections still wait to be accepted: the loop stalls on a refusal", left)
		}
		cancel()
		for _, p := range peers {
			p.Close()
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
