package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

const (
	// httpTokenFile is the bearer token of `serve --http`, in the state folder.
	httpTokenFile = "http-token"
	// Bounds of a token read from httpTokenFile (one the person wrote is fine).
	minTokenLen, maxTokenLen = 16, 4096

	// httpShutdownGrace bounds the HTTP endpoint's shutdown: sessions answer
	// their calls in flight (mcp.DefaultDrainTimeout), then connections close.
	httpShutdownGrace = mcp.DefaultDrainTimeout + 5*time.Second
	// A connection must send its request headers within httpHeaderTimeout;
	// a keep-alive connection with no request for httpIdleTimeout is closed.
	httpHeaderTimeout, httpIdleTimeout = 5 * time.Second, 30 * time.Second
	// defaultHTTPConns caps the connections when server.max_connections is
	// not positive; capWarnEvery spaces the warnings about the cap.
	defaultHTTPConns, capWarnEvery = 64, time.Minute

	// The paths served beside MCP's /mcp.
	pathHealth, pathNowframe = "/healthz", "/v1/nowframe"
	// httpCheck names health's check of serve's HTTP endpoint.
	httpCheck = "http_endpoint"
)

// statusPaths answers the paths other than /mcp (mcp.HTTPOptions.Other:
// Host and Origin were checked). GET /healthz: the health object, 200 when
// healthy, else 503; without the bearer token only {"status":...}. GET
// /v1/nowframe, for the token's holder: nowframe.build's frame, or 503.
type statusPaths struct {
	health   func(ctx context.Context) (body []byte, healthy bool)
	nowframe func(ctx context.Context) []byte // nil body: 503
}

// engineStatus is statusPaths of the engine.
func engineStatus(eng *engine.Engine) statusPaths {
	return statusPaths{health: eng.HealthJSON, nowframe: func(ctx context.Context) []byte {
		out := eng.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build",
			Args: json.RawMessage(`{"reason":"http","max_age_ms":2000}`)})
		if out.Err != nil {
			return nil
		}
		return out.Body
	}}
}

func (p statusPaths) serve(w http.ResponseWriter, r *http.Request, authorized bool) {
	switch {
	case r.URL.Path != pathHealth && r.URL.Path != pathNowframe:
		mcp.HTTPError(w, http.StatusNotFound, "not found")
	case r.URL.Path == pathNowframe && !authorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="awbridge"`)
		mcp.HTTPError(w, http.StatusUnauthorized, "unauthorized: a bearer token is required")
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		mcp.HTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
	case r.URL.Path == pathNowframe:
		if body := p.nowframe(r.Context()); len(body) > 0 {
			mcp.WriteJSON(w, http.StatusOK, body)
			return
		}
		mcp.HTTPError(w, http.StatusServiceUnavailable, "no frame")
	default:
		body, healthy := p.health(r.Context())
		status := http.StatusOK
		if !healthy {
			status = http.StatusServiceUnavailable
		}
		if !authorized {
			// Any local user may ask whether awbridge is up; only the
			// token's holder sees the report (the sidecar's payload).
			body = []byte(`{"status":"degraded"}`)
			if healthy {
				body = []byte(`{"status":"healthy"}`)
			}
		}
		mcp.WriteJSON(w, status, body)
	}
}

// errNotLoopback is returned by listenHTTP for an address off this machine.
var errNotLoopback = errors.New("the HTTP endpoint listens on loopback only (127.0.0.1, [::1] or localhost)")

// listenHTTP listens on addr, HOST:PORT, when HOST is a loopback address
// or localhost (taken as 127.0.0.1, whatever the resolver says); anything
// else is refused with errNotLoopback.
func listenHTTP(addr string) (net.Listener, error) {
	ta, err := loopbackAddr(addr)
	if err != nil {
		return nil, err
	}
	return listenLoopback(addr, ta)
}

// loopbackAddr is the address listenHTTP listens on for addr.
func loopbackAddr(addr string) (*net.TCPAddr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("http address %q: want HOST:PORT, e.g. 127.0.0.1:8765: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("http address %q: port must be a number from 0 to 65535", addr)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("http address %q: %w", addr, errNotLoopback)
	}
	return &net.TCPAddr{IP: ip, Port: n}, nil
}

// listenLoopback listens on ta, loopbackAddr's answer for addr.
func listenLoopback(addr string, ta *net.TCPAddr) (net.Listener, error) {
	ln, err := net.Listen("tcp", ta.String())
	if err != nil {
		return nil, fmt.Errorf("http address %q: %w", addr, err)
	}
	if got, ok := ln.Addr().(*net.TCPAddr); !ok || !got.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("http address %q: %w", addr, errNotLoopback)
	}
	return ln, nil
}

// addrInUse reports whether a listen failed because another socket holds
// the address (Windows says so with WSAEADDRINUSE, 10048, which is not
// Go's syscall.EADDRINUSE there).
func addrInUse(err error) bool {
	var errno syscall.Errno
	return errors.Is(err, syscall.EADDRINUSE) ||
		(runtime.GOOS == "windows" && errors.As(err, &errno) && errno == 10048)
}

// portHolder is who listens on the HTTP port serve could not listen on,
// as far as findPortHolder tells.
type portHolder struct {
	known bool
	uid   int
}

// foreign reports whether the holder may be another user than serve's: a
// bearer token a client sent there may be in someone else's hands.
func (h portHolder) foreign() bool { return !h.known || h.uid != os.Getuid() }

func (h portHolder) String() string {
	switch {
	case !h.known:
		return "a process awbridge cannot identify (possibly another user)"
	case h.uid == os.Getuid():
		return "another process of this user"
	}
	return fmt.Sprintf("another user (uid %d)", h.uid)
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

// loadOrCreateToken returns the HTTP bearer token of <stateDir>/http-token,
// made at first start (see writeToken).
func loadOrCreateToken(stateDir string) (string, error) {
	return writeToken(stateDir, false)
}

// rotateToken replaces the token with a new one and returns it.
func rotateToken(stateDir string) (string, error) {
	return writeToken(stateDir, true)
}

// writeToken writes a new token (32 random bytes, hex) into a 0600 file in
// one step, creating stateDir 0700 if needed: without replace, only when
// there is none (concurrent first starts agree on one token; an existing
// one is read); with replace, whatever the file held (a reader sees the
// old token or the new one; a symbolic link there is replaced, never
// followed).
func writeToken(stateDir string, replace bool) (string, error) {
	if stateDir == "" {
		return "", errors.New("http token: no state folder configured")
	}
	path := filepath.Join(stateDir, httpTokenFile)
	if !replace {
		tok, err := readToken(path)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return tok, err
		}
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("http token: %w", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := atomicfile.Write(path, []byte(tok+"\n"), atomicfile.Options{NoReplace: !replace}); err != nil {
		if !replace && errors.Is(err, fs.ErrExist) {
			return readToken(path) // another first start won
		}
		return "", fmt.Errorf("http token: %w", err)
	}
	return tok, nil
}

// readToken reads and checks a token file: one others may read is
// refused rather than trusted.
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

// serveHTTP serves h on ln until ctx ends or serving fails, with at most
// maxConns connections open at once. Then it ends every MCP session (calls
// in flight answered, GET streams closed) and the server, within
// httpShutdownGrace; nil after a clean stop.
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

// connCap is a listener that keeps at most max connections open. A new
// connection over the cap closes the one that has waited longest without
// a request of the token's holder in progress (idle, sending its headers,
// or without the token). Nothing waits beyond the cap, so neither idle
// connections nor stalled requests can starve a real caller.
//
// Another local user churning connections would still close the holder's
// (issue 16: up to ~60 % of its requests failed), so the serving user's
// connections are preferred: those whose peer runs as this user
// (mcp.LoopbackPeerUID, asked once half the cap is in use) and those that
// carried the token. Only a preferred connection may close a preferred
// one, or anyone once the preferred hold more than half the cap. When none
// may be closed, the new one gets a 503 with Retry-After: 1 and is closed.
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

// connKey is the context key of a request's connection.
type connKey struct{}

func newConnCap(ln net.Listener, maxConns int, log zerolog.Logger) *connCap {
	if maxConns <= 0 {
		maxConns = defaultHTTPConns
	}
	return &connCap{Listener: ln, max: maxConns, log: log, ownUID: os.Getuid(), peerUID: mcp.LoopbackPeerUID,
		refuse: mcp.Refuser{HTTP: true}, conns: map[net.Conn]*capConn{}}
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

// overCapReply answers a connection refused over the cap: its request was
// not read, so the JSON-RPC error has id null.
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

// httpEndpoint is serve's HTTP endpoint. When server.http's port is in use
// at start, serve goes on with the Unix socket alone, tries the port again
// every server.http_retry, and health's http_endpoint check says why.
// Clients may have sent their bearer token to whoever holds the port, so
// when that may be another user the token is replaced at once, and once
// more when serve finally listens; a holder of this same user is left the
// token (it can read the file anyway).
//
// Check is safe for concurrent use; Run is called at most once, Close
// after Run returned (or instead of it).
type httpEndpoint struct {
	addr     string       // server.http as configured
	ta       *net.TCPAddr // where it listens
	useToken bool         // server.http_token = "file"
	stateDir string
	retry    time.Duration
	log      zerolog.Logger

	ln      net.Listener // nil while the port is held
	token   string
	foreign bool   // a holder that may be another user was seen since the token was last replaced
	holder  string // the holder last told about
	off     bool   // HTTP stays off: the token could not be replaced

	mu    sync.Mutex
	check health.Check
}

// openHTTP listens on c.Server.HTTP and reads (or makes) the token. A port
// in use is no error: Run waits for it.
func openHTTP(c config.Config, log zerolog.Logger) (*httpEndpoint, error) {
	ta, err := loopbackAddr(c.Server.HTTP)
	if err != nil {
		return nil, err
	}
	h := &httpEndpoint{addr: c.Server.HTTP, ta: ta, useToken: c.Server.HTTPToken != "none",
		stateDir: c.Paths.StateDir, retry: c.Server.HTTPRetry, log: log}
	h.ln, err = listenLoopback(h.addr, ta)
	if err != nil && !addrInUse(err) {
		return nil, err
	}
	if h.ln == nil {
		h.held(findPortHolder(ta.IP, ta.Port))
	}
	if h.useToken && h.token == "" && !h.off {
		if h.token, err = loadOrCreateToken(h.stateDir); err != nil {
			h.Close()
			return nil, err
		}
	}
	if h.ln != nil {
		h.setCheck(true, "serving on "+h.ln.Addr().String())
	}
	return h, nil
}

// held is told who holds the port: it replaces the token when that may be
// another user, and says so in health and, when it changed, in the log.
func (h *httpEndpoint) held(holder portHolder) {
	replaced := false
	if holder.foreign() && h.useToken && !h.foreign && !h.off {
		h.foreign = true
		tok, err := rotateToken(h.stateDir)
		if err != nil {
			h.stayOff(fmt.Errorf("%s is in use by %s, and the token could not be replaced: %w", h.ta, holder, err))
			return
		}
		h.token, replaced = tok, true
	}
	note := "no token is required (server.http_token = \"none\")"
	switch {
	case !h.useToken:
	case h.foreign:
		note = "the token was replaced, so one sent there works nowhere; it is replaced again when the port frees"
	default:
		note = "the token is kept (that user can read it anyway)"
	}
	h.setCheck(false, fmt.Sprintf("%s is in use by %s: HTTP is not served (the Unix socket is); %s; trying again every %v",
		h.ta, holder, note, h.retry))
	if who := holder.String(); who != h.holder || replaced {
		h.holder = who
		h.log.Warn().Str("http", h.ta.String()).Str("holder", who).Bool("token_replaced", replaced).
			Dur("retry", h.retry).Msg("HTTP port in use: serving the Unix socket only, trying the port again")
	}
}

// stayOff keeps HTTP off for this run: the token that may have reached
// another user could not be replaced, and serving it would let them in.
func (h *httpEndpoint) stayOff(why error) {
	h.off = true
	h.setCheck(false, why.Error()+"; HTTP stays off until serve restarts (delete "+
		filepath.Join(h.stateDir, httpTokenFile)+" to get a new token)")
	h.log.Error().Err(why).Msg("HTTP stays off")
}

func (h *httpEndpoint) setCheck(ok bool, detail string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.check = health.Check{Name: httpCheck, OK: ok, Detail: detail}
}

// Checks is health's view of the endpoint (engine.Deps.Checks).
func (h *httpEndpoint) Checks() []health.Check {
	h.mu.Lock()
	defer h.mu.Unlock()
	return []health.Check{h.check}
}

// Run serves HTTP until ctx ends, once the port is free. handler builds
// the transport for the listener and token.
func (h *httpEndpoint) Run(ctx context.Context, handler func(ln net.Listener, token string) *mcp.HTTPTransport, maxConns int) {
	if h.ln == nil {
		if h.off {
			return
		}
		ln := h.wait(ctx)
		if ln == nil {
			return
		}
		if h.foreign {
			tok, err := rotateToken(h.stateDir)
			if err != nil {
				ln.Close()
				h.stayOff(fmt.Errorf("%s is free again, but the token could not be replaced: %w", h.ta, err))
				return
			}
			h.token, h.foreign = tok, false
		}
		h.ln = ln
	}
	h.setCheck(true, "serving on "+h.ln.Addr().String())
	h.log.Info().Str("http", h.ln.Addr().String()).Bool("token", h.token != "").Msg("serving HTTP")
	if err := serveHTTP(ctx, h.ln, handler(h.ln, h.token), maxConns, h.log); err != nil {
		h.setCheck(false, "the HTTP endpoint failed: "+err.Error()+"; the Unix socket serves")
		h.log.Error().Err(err).Msg("HTTP endpoint failed")
	}
}

// wait tries the port every h.retry until it listens (the listener) or
// ctx ends (nil).
func (h *httpEndpoint) wait(ctx context.Context) net.Listener {
	t := time.NewTicker(h.retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ln, err := listenLoopback(h.addr, h.ta)
		switch {
		case err == nil:
			h.log.Info().Str("http", h.ta.String()).Bool("token_replaced", h.foreign).Msg("the HTTP port is free again")
			return ln
		case addrInUse(err):
			if h.held(findPortHolder(h.ta.IP, h.ta.Port)); h.off {
				return nil
			}
		default:
			h.setCheck(false, fmt.Sprintf("%s cannot be listened on (%s): HTTP is not served (the Unix socket is); trying again every %v",
				h.ta, oneLine(err.Error()), h.retry))
			h.log.Debug().Err(err).Msg("HTTP port: trying again")
		}
	}
}

// Close closes the listener if Run did not serve it.
func (h *httpEndpoint) Close() {
	if h.ln != nil {
		h.ln.Close()
	}
}
