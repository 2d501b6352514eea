package mcp

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
