package mcp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestTokenListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.json")
	ln, err := listenEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			got <- line
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	// A wrong token is dropped without a word.
	bad, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	bad.Write([]byte(tokenPrefix + "wrong\nhello\n"))
	bad.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Closed on it: EOF, or a reset when the close found "hello" unread.
	// (Had it been accepted, "hello" would reach got before the ping below.)
	if _, err := bad.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a wrong token was not refused: %v", err)
	}
	// Nothing at all, then the deadline: dropped too.
	silent, _ := net.Dial("tcp", addr)
	defer silent.Close()
	good, err := dialEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	good.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	select {
	case l := <-got:
		if l != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n" {
			t.Fatalf("the first line after the token: %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the right token was not accepted")
	}
}
