package mcp

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Connections beyond MaxConnections get one clear error line and are
// closed; the ones already served go on.
func TestServeListenerCapsConnections(t *testing.T) {
	g := newGate()
	srv := NewServer(g, Options{MaxConnections: 2})
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
	extra, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	line, _ := bufio.NewReader(extra).ReadString('\n')
	if !strings.Contains(line, "too many connections") || !strings.Contains(line, `"code":"ConcurrencyLimited"`) {
		t.Fatalf("the third connection got %q", line)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	for _, c := range held {
		if l, _ := bufio.NewReader(c).ReadString('\n'); !strings.Contains(l, `"id":1`) {
			t.Fatalf("a served connection lost its reply: %q", l)
		}
	}
}
