package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The MCP Streamable HTTP transport over the message core. A 2026-07-28
// request is checked against its headers and answered on a session of its
// own (http_modern.go). A legacy request belongs to the session initialize
// created (Mcp-Session-Id, http_session.go): its reply goes from the core
// to the POST waiting for its id, notifications to the session's GET
// stream.

// PathMCP is where HTTPTransport serves MCP.
const PathMCP = "/mcp"

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// Bounds of the transport.
const (
	maxBodyBytes   = 1 << 20          // a POST body; beyond: 413
	maxSessions    = 64               // open legacy sessions; beyond: 503
	sessionIdle    = 30 * time.Minute // ends a session without requests or an open GET stream
	bodyTimeout    = 5 * time.Second  // reading a body, from the end of its headers; past it the connection closes
	maxModernCalls = 256              // modern requests in progress, listens aside; beyond: 503 and -32006
	maxHTTPListens = 64               // open subscriptions/listen streams; beyond: 503 and -32006
	maxSessionID   = 128              // the longest session id header looked up
	// streamQueue is how many server notifications may wait for a slow
	// GET stream; beyond it they are dropped.
	streamQueue = 64
)

// HTTPOptions configures an HTTPTransport. The zero value: no bearer
// token, loopback Host names only.
type HTTPOptions struct {
	// Token is the bearer token /mcp requires; "" requires none.
	Token string
	// AllowedHosts are the exact Host header values accepted on every path
	// and method (DNS-rebinding protection), compared without case. Empty:
	// any Host whose name is localhost or a loopback address.
	AllowedHosts []string
	// Other serves every path but /mcp, once Host and Origin passed;
	// authorized says whether the request carries the bearer token. Nil:
	// they are 404.
	Other func(w http.ResponseWriter, r *http.Request, authorized bool)
	// Logger receives debug lines (session started/ended) and never a
	// payload, a token or a session id.
	Logger zerolog.Logger
}

// HTTPTransport serves MCP over Streamable HTTP on /mcp, and hands other
// paths to HTTPOptions.Other. It is an http.Handler safe for concurrent
// use. Shutdown must be called once it is no longer served.
type HTTPTransport struct {
	srv          *Server
	token        []byte // sha256 of the token; nil: none required
	allowedHosts map[string]struct{}
	other        func(http.ResponseWriter, *http.Request, bool)
	log          zerolog.Logger
	// The bounds above, which tests lower.
	maxBody                            int64
	bodyTimeout, idle                  time.Duration
	maxSessions, maxModern, maxListens int

	mu          sync.Mutex
	sessions    map[string]*httpSession
	listens     map[*session]struct{} // open subscriptions/listen streams
	modern      int                   // modern requests in progress, listens aside
	closed      bool
	reaping     bool
	stopReaping chan struct{}
	wg          sync.WaitGroup // session goroutines and the reaper
}

// HTTPHandler returns the Streamable HTTP transport serving srv's sessions.
func (srv *Server) HTTPHandler(opts HTTPOptions) *HTTPTransport {
	t := &HTTPTransport{
		srv: srv, other: opts.Other, log: opts.Logger,
		maxBody: maxBodyBytes, bodyTimeout: bodyTimeout, idle: sessionIdle,
		maxSessions: maxSessions, maxModern: maxModernCalls, maxListens: maxHTTPListens,
		sessions:    map[string]*httpSession{},
		listens:     map[*session]struct{}{},
		stopReaping: make(chan struct{}),
	}
	if opts.Token != "" {
		sum := sha256.Sum256([]byte(opts.Token))
		t.token = sum[:]
	}
	if len(opts.AllowedHosts) > 0 {
		t.allowedHosts = map[string]struct{}{}
		for _, h := range opts.AllowedHosts {
			t.allowedHosts[strings.ToLower(h)] = struct{}{}
		}
	}
	return t
}

// Sessions returns how many MCP sessions are open.
func (t *HTTPTransport) Sessions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// Shutdown refuses new MCP requests (503), ends every session (their GET
// streams close; calls in flight get DefaultDrainTimeout to answer
// the POSTs waiting for them) and waits for the sessions' goroutines, or
// for ctx. Idempotent. Call it before http.Server.Shutdown, whose wait
// would otherwise hang on the open GET streams.
func (t *HTTPTransport) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.stopReaping)
	}
	ended := slices.Collect(maps.Values(t.sessions))
	clear(t.sessions)
	for s := range t.listens {
		s.stopReading() // each listen answers its completion result
	}
	t.mu.Unlock()
	for _, s := range ended {
		s.end()
	}
	done := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP checks Host and Origin on every request, then routes it. A
// request with a body must send it within the body timeout; a refusal
// (401, 403, 404) closes the connection.
func (t *HTTPTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		// Also bounds the server's drain of a body left unread.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(t.bodyTimeout))
	}
	isMCP := r.URL.Path == PathMCP
	fail := func(status int, msg string) {
		if !isMCP {
			HTTPError(w, status, msg)
			return
		}
		closeOnRefusal(w, status)
		WriteJSON(w, status, errorReply(nil, CodeInvalidRequest, msg, nil))
	}
	if !t.hostAllowed(r.Host) {
		fail(http.StatusForbidden, "forbidden: Host not allowed")
		return
	}
	if !t.originAllowed(r) {
		fail(http.StatusForbidden, "forbidden: Origin not allowed")
		return
	}
	switch {
	case !isMCP && t.other != nil:
		t.other(w, r, t.Authorized(r))
	case !isMCP:
		fail(http.StatusNotFound, "not found")
	case !t.Authorized(r):
		w.Header().Set("WWW-Authenticate", `Bearer realm="awbridge"`)
		fail(http.StatusUnauthorized, "unauthorized: a bearer token is required")
	case r.Method == http.MethodPost:
		t.servePost(w, r)
	case r.Method == http.MethodGet:
		t.serveGet(w, r)
	case r.Method == http.MethodDelete:
		t.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		fail(http.StatusMethodNotAllowed, "method not allowed")
	}
}

// closeOnRefusal closes the connection after a refusal (401, 403, 404):
// answered now, not after draining a body that may never come.
func closeOnRefusal(w http.ResponseWriter, status int) {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		w.Header().Set("Connection", "close")
	}
}

// hostAllowed is the DNS-rebinding check of the Host header.
func (t *HTTPTransport) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	if t.allowedHosts != nil {
		_, ok := t.allowedHosts[strings.ToLower(host)]
		return ok
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	return isLoopbackName(name)
}

// isLoopbackName reports whether a host name (brackets removed) is
// localhost or a loopback address.
func isLoopbackName(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// originAllowed accepts a request without Origin, or a loopback origin on
// the Host's own port.
func (t *HTTPTransport) originAllowed(r *http.Request) bool {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true
	}
	if len(vals) > 1 {
		return false
	}
	u, err := url.Parse(strings.ToLower(strings.TrimSuffix(vals[0], "/")))
	if err != nil || u.Scheme != "http" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return false
	}
	_, hostPort, err := net.SplitHostPort(r.Host)
	if err != nil {
		return false
	}
	return isLoopbackName(u.Hostname()) && u.Port() == hostPort
}

// Authorized reports whether r carries the bearer token (always true
// when none is required); compared in constant time.
func (t *HTTPTransport) Authorized(r *http.Request) bool {
	if t.token == nil {
		return true
	}
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return false
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], t.token) == 1
}

// protocolVersionOK reports whether the MCP-Protocol-Version header of a
// legacy request is absent or a version initialize negotiates.
func protocolVersionOK(r *http.Request) bool {
	v, ok := oneHeader(r, HeaderProtocolVersion)
	return len(r.Header.Values(HeaderProtocolVersion)) == 0 || ok && legacyVersion(v)
}

// WriteJSON answers with a JSON body, neither cached nor sniffed.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// HTTPError answers a path other than /mcp with {"error":msg}; a refusal
// (401, 403, 404) closes the connection.
func HTTPError(w http.ResponseWriter, status int, msg string) {
	closeOnRefusal(w, status)
	WriteJSON(w, status, marshal(map[string]string{"error": msg}))
}
