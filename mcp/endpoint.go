package mcp

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

// Where no Unix socket private to the user exists (Windows), the service
// listens on a loopback port where each connection must first send
// "AWBRIDGE-TOKEN <token>\n"; the address and the token are in the
// endpoint file, which only the user can read: it stands in for the
// socket's permissions.

// tokenPrefix starts the first line a client sends on a token listener.
const tokenPrefix = "AWBRIDGE-TOKEN "

// endpoint is the endpoint file's content.
type endpoint struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// writeEndpoint writes the endpoint file atomically, 0600 in a 0700
// folder.
func writeEndpoint(path string, ep endpoint) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(ep)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b, atomicfile.Options{})
}

// readEndpoint reads what writeEndpoint wrote: a loopback IP address and
// port, so a client never sends its token anywhere else, and a token that
// fits on the handshake line (printable ASCII without spaces, at most 256
// bytes).
func readEndpoint(path string) (endpoint, error) {
	var ep endpoint
	b, err := os.ReadFile(path)
	if err != nil {
		return ep, err
	}
	err = json.Unmarshal(b, &ep)
	ap, aerr := netip.ParseAddrPort(ep.Addr)
	okToken := ep.Token != "" && len(ep.Token) <= 256 && !strings.ContainsFunc(ep.Token, func(r rune) bool { return r <= ' ' || r >= 0x7f })
	if err != nil || aerr != nil || !ap.Addr().IsLoopback() || ap.Addr().Zone() != "" || ap.Port() == 0 || !okToken {
		return endpoint{}, fmt.Errorf("%s is not an awbridge endpoint file", path)
	}
	return ep, nil
}

// tokenListener accepts the connections that present its token, and
// removes its endpoint file when it closes.
type tokenListener struct {
	net.Listener
	want []byte
	path string
}

// listenEndpoint serves on a loopback port behind a fresh token and
// writes the endpoint file at path; a live service behind an existing
// file is ErrAlreadyServing.
func listenEndpoint(path string) (net.Listener, error) {
	if ep, err := readEndpoint(path); err == nil {
		if c, err := net.DialTimeout("tcp", ep.Addr, dialProbe); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrAlreadyServing)
		}
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails
	token := hex.EncodeToString(raw)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := writeEndpoint(path, endpoint{Addr: ln.Addr().String(), Token: token}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("endpoint file %s: %w", path, err)
	}
	return &tokenListener{Listener: ln, want: []byte(tokenPrefix + token), path: path}, nil
}

// Accept returns the next connection that presented the token within 2 s;
// the others are closed without a word.
func (l *tokenListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		r := bufio.NewReaderSize(c, 512)
		line, err := r.ReadSlice('\n')
		if err != nil || subtle.ConstantTimeCompare([]byte(strings.TrimRight(string(line), "\r\n")), l.want) != 1 {
			c.Close()
			continue
		}
		c.SetReadDeadline(time.Time{})
		return &bufferedConn{Conn: c, r: r}, nil
	}
}

func (l *tokenListener) Close() error {
	err := l.Listener.Close()
	os.Remove(l.path)
	return err
}

// bufferedConn reads what the handshake's reader already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// dialEndpoint connects to the service named by the endpoint file and
// presents the token.
func dialEndpoint(path string) (net.Conn, error) {
	ep, err := readEndpoint(path)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", ep.Addr, dialProbe)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(tokenPrefix + ep.Token + "\n")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
