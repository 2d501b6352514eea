package mcp

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// tokenPrefix starts the first line a client sends on a token listener.
const tokenPrefix = "AWBRIDGE-TOKEN "

// ListenToken listens on a loopback TCP address where each connection
// must first send "AWBRIDGE-TOKEN <token>\n" (Windows has no Unix socket
// private to a user: the token, in a file only the user can read, stands
// in for the socket's permissions). Connections without it are closed.
func ListenToken(addr, token string) (net.Listener, error) {
	if token == "" {
		return nil, errors.New("token listener without a token")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("%s is not a loopback address", addr)
	}
	return &tokenListener{Listener: ln, want: []byte(tokenPrefix + token)}, nil
}

type tokenListener struct {
	net.Listener
	want []byte
}

// Accept returns the next connection that presented the token.
func (l *tokenListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		r := bufio.NewReaderSize(c, 512)
		line, err := r.ReadSlice('\n')
		got := []byte(strings.TrimRight(string(line), "\r\n"))
		if err != nil || subtle.ConstantTimeCompare(got, l.want) != 1 {
			c.Close()
			continue
		}
		c.SetReadDeadline(time.Time{})
		return &bufferedConn{Conn: c, r: r}, nil
	}
}

// bufferedConn reads what the handshake's reader already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// DialToken connects to a token listener and presents the token.
func DialToken(addr, token string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(tokenPrefix + token + "\n")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
