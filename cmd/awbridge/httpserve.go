package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/mcp"
)

// httpTokenFile is the bearer token of `serve --http`, in the state folder.
const httpTokenFile = "http-token"

// Bounds of a token read from httpTokenFile (one the person wrote is fine).
const (
	minTokenLen = 16
	maxTokenLen = 4096
)

// httpShutdownGrace bounds the HTTP endpoint's shutdown: sessions answer
// their calls in flight (mcp.DefaultDrainTimeout), then connections close.
const httpShutdownGrace = mcp.DefaultDrainTimeout + 5*time.Second

// errNotLoopback is returned by listenHTTP for an address off this machine.
var errNotLoopback = errors.New("the HTTP endpoint listens on loopback only (127.0.0.1, [::1] or localhost)")

// listenHTTP listens on addr, HOST:PORT, when HOST is a loopback address
// (127.0.0.0/8, ::1) or localhost (taken as 127.0.0.1, whatever the
// resolver says); anything else, an empty HOST included, is refused with
// errNotLoopback. PORT 0 picks a free port.
func listenHTTP(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("http address %q: want HOST:PORT, e.g. 127.0.0.1:8765: %w", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("http address %q: port must be a number from 0 to 65535", addr)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("http address %q: %w", addr, errNotLoopback)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
	if err != nil {
		return nil, fmt.Errorf("http address %q: %w", addr, err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("http address %q: %w", addr, errNotLoopback)
	}
	return ln, nil
}

// httpAllowedHosts are the Host header values a loopback listener answers
// to: its own address and the loopback names, on its port.
func httpAllowedHosts(ln net.Listener) []string {
	ta, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(ta.Port)
	hosts := []string{
		net.JoinHostPort("127.0.0.1", port),
		net.JoinHostPort("localhost", port),
		net.JoinHostPort("::1", port),
	}
	if own := net.JoinHostPort(ta.IP.String(), port); own != hosts[0] && own != hosts[2] {
		hosts = append(hosts, own)
	}
	return hosts
}

// loadOrCreateToken returns the HTTP bearer token kept in
// <stateDir>/http-token. At first start it generates one (32 random bytes,
// hex) into a 0600 file, created in one step (written to a temporary file,
// then linked into place, so concurrent first starts agree on one token),
// creating stateDir 0700 if needed. A file others may read is refused
// rather than trusted.
func loadOrCreateToken(stateDir string) (string, error) {
	if stateDir == "" {
		return "", errors.New("http token: no state folder configured")
	}
	path := filepath.Join(stateDir, httpTokenFile)
	tok, err := readToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	tok = hex.EncodeToString(raw[:])
	if err := atomicfile.Write(path, []byte(tok+"\n"), atomicfile.Options{NoReplace: true}); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readToken(path) // another first start won
		}
		return "", fmt.Errorf("http token: %w", err)
	}
	return tok, nil
}

// readToken reads and checks a token file.
func readToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("http token: %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("http token: %s may be read by others (mode %04o): chmod 600 it, or delete it to get a new token", path, fi.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenLen+2))
	if err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if len(tok) < minTokenLen || len(tok) > maxTokenLen || strings.IndexFunc(tok, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return "", fmt.Errorf("http token: %s does not hold a token (%d to %d visible ASCII characters); delete it to get a new one", path, minTokenLen, maxTokenLen)
	}
	return tok, nil
}

// Timeouts of the HTTP endpoint: a connection must send its request
// headers within httpHeaderTimeout, and a keep-alive connection with no
// request for httpIdleTimeout is closed.
const (
	httpHeaderTimeout = 5 * time.Second
	httpIdleTimeout   = 30 * time.Second
)

// serveHTTP serves h on ln until ctx ends or serving fails, with at most
// maxConns connections open at once (server.max_connections; the Unix
// socket has its own as many). Then it ends every MCP session (calls in
// flight answered, GET streams closed) and the server, within
// httpShutdownGrace, and returns nil after a clean stop.
func serveHTTP(ctx context.Context, ln net.Listener, h *mcp.HTTPTransport, maxConns int, log zerolog.Logger) error {
	return serveCapped(ctx, newConnCap(ln, maxConns, log), h, log)
}

// serveCapped is serveHTTP on a listener already capped.
func serveCapped(ctx context.Context, capped *connCap, h *mcp.HTTPTransport, log zerolog.Logger) error {
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h.Authorized(r) {
				capped.trust(r.Context())
			}
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: httpHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       capped.connContext,
		ConnState:         capped.track,
		ErrorLog:          stdlog.New(log.With().Str("component", "http").Logger(), "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(capped) }()
	defer capped.refuse.Wait()

	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownGrace)
	defer cancel()
	errT := h.Shutdown(sctx) // first: open GET streams would hold hs.Shutdown
	errS := hs.Shutdown(sctx)
	if errS != nil {
		hs.Close()
	}
	if serveErr == nil {
		serveErr = <-served
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	if serveErr != nil {
		return fmt.Errorf("http: %w", serveErr)
	}
	if err := errors.Join(errT, errS); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// defaultHTTPConns caps the HTTP connections when server.max_connections
// is not positive.
const defaultHTTPConns = 64

// capWarnEvery spaces the warnings about connections over the cap.
const capWarnEvery = time.Minute

// connCap is a listener that keeps at most max connections open. A new
// connection over the cap takes the place of the connection that has
// waited longest without a request of the token's holder in progress
// (idle, still sending its headers, or handling a request without the
// token, a body that never comes included), which is closed. Nothing
// waits: no goroutine and no file beyond the cap, so neither idle
// connections nor stalled requests can starve a real caller.
//
// Another local user can still churn connections (thousands a second):
// each new one would close the holder's fresh connection before its
// request is read, or its keep-alive connection between two requests
// (issue 16: 23-46 % and ~60 % of the holder's requests failed). So the
// serving user's own connections are preferred: ones whose peer runs as
// this process's user (on Linux the kernel says who owns the other end of
// a loopback connection: mcp.LoopbackPeerUID, one netlink lookup of ~7 us,
// asked only once half the cap is in use) and ones that have carried the
// token (everywhere, for keep-alive connections). A new connection closes
// the longest-waiting idle connection that is not preferred; only a
// preferred one may close a preferred one, or anyone once the preferred
// hold more than half the cap (the other half stays open to other
// connections, /healthz included). When no connection may be closed, the
// new one gets a minimal 503 with Retry-After: 1 (written by a Refuser,
// beside the accept loop) and is closed.
type connCap struct {
	net.Listener
	max     int
	log     zerolog.Logger
	ownUID  int                               // this process's user
	peerUID func(net.Conn) (uid int, ok bool) // who opened a connection; mcp.LoopbackPeerUID
	refuse  mcp.Refuser

	mu       sync.Mutex
	clock    uint64 // bumped at each state change: orders "waited longest"
	conns    map[net.Conn]*capConn
	over     int // connections closed over the cap since the last warning
	warnedAt time.Time
}

// capConn is what connCap knows of one open connection.
type capConn struct {
	state     http.ConnState
	busy      bool   // handling a request that carries the token (trust)
	preferred bool   // the serving user's, or it has carried the token
	since     uint64 // clock when it last changed state
}

// connKey is the context key of a request's connection (connContext).
type connKey struct{}

func newConnCap(ln net.Listener, maxConns int, log zerolog.Logger) *connCap {
	if maxConns <= 0 {
		maxConns = defaultHTTPConns
	}
	return &connCap{Listener: ln, max: maxConns, log: log, ownUID: os.Getuid(), peerUID: mcp.LoopbackPeerUID, conns: map[net.Conn]*capConn{}}
}

// Accept returns the next connection, making room for it or refusing it.
func (c *connCap) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c.admit(conn) {
			return conn, nil
		}
		c.refuse.Refuse(conn, overCapReply)
	}
}

// overCapReply answers a connection beyond the cap when every connection
// under it is busy, or preferred: its request was not read, so the
// JSON-RPC error has id null.
var overCapReply = func() []byte {
	const body = `{"jsonrpc":"2.0","id":null,"error":{"code":-32006,"message":"service unavailable: too many connections; retry",` +
		`"data":{"kind":"PolicyError","code":"ConcurrencyLimited","retryable":true,"retry_after_ms":1000}}}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n" +
		"Cache-Control: no-store\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// admit registers conn, closing the longest-waiting connection it may
// close when at the cap; false when there is none (conn is not kept).
func (c *connCap) admit(conn net.Conn) bool {
	c.mu.Lock()
	near := len(c.conns) >= c.max/2
	c.mu.Unlock()
	preferred := false
	if near {
		// Outside the lock: the lookup is a system call. Only Accept adds
		// connections, so the count has not grown meanwhile.
		uid, ok := c.peerUID(conn)
		preferred = ok && uid == c.ownUID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	if len(c.conns) >= c.max {
		victim := c.victimLocked(preferred)
		c.overLocked()
		if victim == nil {
			return false
		}
		delete(c.conns, victim)
		victim.Close()
	}
	c.conns[conn] = &capConn{state: http.StateNew, preferred: preferred, since: c.clock}
	return true
}

// victimLocked is the connection a new one (preferred or not) may close:
// the longest-waiting one that is not busy, not preferred first.
func (c *connCap) victimLocked(preferred bool) net.Conn {
	var other, pref net.Conn
	var otherSince, prefSince uint64
	nPref := 0
	for vc, st := range c.conns {
		if st.preferred {
			nPref++
		}
		switch {
		case st.busy:
		case !st.preferred && (other == nil || st.since < otherSince):
			other, otherSince = vc, st.since
		case st.preferred && (pref == nil || st.since < prefSince):
			pref, prefSince = vc, st.since
		}
	}
	switch {
	case other != nil:
		return other
	case preferred || nPref > c.max/2:
		return pref
	}
	return nil
}

// overLocked counts a connection closed over the cap and warns at most
// once per capWarnEvery.
func (c *connCap) overLocked() {
	c.over++
	if now := time.Now(); now.Sub(c.warnedAt) >= capWarnEvery {
		c.log.Warn().Int("max_connections", c.max).Int("closed", c.over).
			Msg("HTTP connections over the cap: the longest idle or unauthenticated ones (or, none closable, the new ones with 503) were closed")
		c.warnedAt, c.over = now, 0
	}
}

// connContext is the http.Server's ConnContext hook: it keeps the
// connection in the context of its requests, for trust.
func (c *connCap) connContext(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// trust marks the connection of the request of ctx busy until the
// request ends, and preferred from now on: the request carries the token.
func (c *connCap) trust(ctx context.Context) {
	conn, _ := ctx.Value(connKey{}).(net.Conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.conns[conn]; ok && st.state == http.StateActive {
		st.busy, st.preferred = true, true
	}
}

// track is the http.Server's ConnState hook.
func (c *connCap) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.conns[conn]
	if !ok {
		return // already closed over the cap
	}
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(c.conns, conn)
	default:
		c.clock++
		st.state, st.busy, st.since = state, false, c.clock
	}
}
