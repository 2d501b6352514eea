package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

// endpoint is where a token listener answers, as the service writes it
// for its clients (Windows: no Unix socket private to the user).
type endpoint struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// writeEndpoint writes the endpoint file atomically, 0600 in a 0700
// folder.
func writeEndpoint(path string, ep endpoint) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(ep)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b, atomicfile.Options{})
}

func readEndpoint(path string) (endpoint, error) {
	var ep endpoint
	b, err := os.ReadFile(path)
	if err != nil {
		return ep, err
	}
	if err := json.Unmarshal(b, &ep); err != nil || !loopbackAddr(ep.Addr) || !tokenText(ep.Token) {
		return endpoint{}, fmt.Errorf("%s is not an awbridge endpoint file", path)
	}
	return ep, nil
}

// maxTokenBytes bounds the token read from an endpoint file.
const maxTokenBytes = 256

// loopbackAddr accepts what listenEndpoint writes: a loopback IP address
// and a port, so a client never sends its token anywhere else.
func loopbackAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	ip := net.ParseIP(host)
	return err == nil && n >= 1 && n <= 65535 && ip != nil && ip.IsLoopback()
}

// tokenText accepts a token that fits on the handshake line: printable
// ASCII without spaces.
func tokenText(tok string) bool {
	if tok == "" || len(tok) > maxTokenBytes {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] >= 0x7f {
			return false
		}
	}
	return true
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// endpointListener removes its endpoint file when it closes.
type endpointListener struct {
	net.Listener
	path string
}

func (l *endpointListener) Close() error {
	err := l.Listener.Close()
	os.Remove(l.path)
	return err
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
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	ln, err := ListenToken("127.0.0.1:0", token)
	if err != nil {
		return nil, err
	}
	if err := writeEndpoint(path, endpoint{Addr: ln.Addr().String(), Token: token}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("endpoint file %s: %w", path, err)
	}
	return &endpointListener{Listener: ln, path: path}, nil
}

// dialEndpoint connects to the service named by the endpoint file.
func dialEndpoint(path string) (net.Conn, error) {
	ep, err := readEndpoint(path)
	if err != nil {
		return nil, err
	}
	return DialToken(ep.Addr, ep.Token, dialProbe)
}
