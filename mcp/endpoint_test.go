package mcp

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The Windows way, tested anywhere: a loopback port behind a token, both
// in a private file; a second listener refuses; Close removes the file.
func TestEndpointListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "awbridge", "service.json")
	ln, err := listenEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("endpoint file: %v %v", st, err)
	}
	if _, err := listenEndpoint(path); !errors.Is(err, ErrAlreadyServing) {
		t.Fatalf("a second listener: %v", err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte(line))
		c.Close()
	}()
	c, err := dialEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("echo\n"))
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "echo\n" {
		t.Fatalf("through the token listener: %q", got)
	}
	c.Close()
	ln.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("Close left the endpoint file")
	}
	// A stale file (nobody listens) is replaced.
	if err := writeEndpoint(path, endpoint{Addr: "127.0.0.1:1", Token: "old"}); err != nil {
		t.Fatal(err)
	}
	ln, err = listenEndpoint(path)
	if err != nil {
		t.Fatalf("over a stale endpoint file: %v", err)
	}
	ln.Close()
}
