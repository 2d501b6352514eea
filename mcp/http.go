package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// The MCP Streamable HTTP transport (protocol revisions 2025-03-26 to
// 2025-11-25) as an adapter over Serve: one HTTP session is one long-lived
// Serve over a pair of pipes, created by initialize. A POST writes its
// message as one line into the session's input; the session's output is
// read by one goroutine that hands each reply to the POST waiting for its id
// and each server notification to the session's GET stream.

// Paths served by HTTPTransport.
const (
	PathMCP      = "/mcp"
	PathHealth   = "/healthz"
	PathNowframe = "/v1/nowframe"
)

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// Defaults of HTTPOptions.
const (
	DefaultHTTPMaxBodyBytes = 1 << 20
	DefaultHTTPMaxSessions  = 64
	DefaultHTTPSessionIdle  = 30 * time.Minute
	DefaultHTTPBodyTimeout  = 5 * time.Second
)

const (
	// maxSessionIDLen bounds the session id header we look up.
	maxSessionIDLen = 128
	// streamQueue is how many server notifications may wait for a slow
	// GET stream; beyond it they are dropped.
	streamQueue = 64
)

// HTTPOptions configures an HTTPTransport. The zero value gives the
// defaults: no bearer token, loopback Host names only, no foreign Origin.
type HTTPOptions struct {
	// Token is the bearer token /mcp and /v1/nowframe require; "" requires
	// none. Compared in constant time.
	Token string
	// AllowedHosts are the exact Host header values accepted on every path
	// and method (DNS-rebinding protection), e.g. 127.0.0.1:8765,
	// localhost:8765, [::1]:8765; compared without case. Empty: any Host
	// whose name is localhost or a loopback address, on any port.
	AllowedHosts []string
	// AllowedOrigins are the Origin values accepted besides loopback origins
	// on the Host's own port (http://127.0.0.1:PORT, http://localhost:PORT,
	// http://[::1]:PORT). A request without Origin (not a browser) passes.
	AllowedOrigins []string
	// Health answers GET /healthz: the health object, already redacted as
	// system.health renders it, and whether it is healthy (200, else 503).
	// A caller without the bearer token gets only {"status":"healthy"} or
	// {"status":"degraded"}. Nil: /healthz is 404.
	Health func(ctx context.Context) (body []byte, healthy bool)
	// Nowframe answers GET /v1/nowframe with the frame JSON (nil body:
	// 503). Nil: /v1/nowframe is 404.
	Nowframe func(ctx context.Context) []byte
	// MaxBodyBytes bounds a POST body (default 1 MiB; beyond: 413). The
	// message must also fit the Server's MaxLineBytes once compacted.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of a request's body, from the end of
	// its headers (default 5 s): past it the connection is closed, whether
	// the handler reads the body or the server drains it after answering.
	// Requests without a body (a GET stream) have no such deadline.
	BodyTimeout time.Duration
	// MaxSessions bounds the open MCP sessions (default 64; beyond: 503).
	MaxSessions int
	// SessionIdle ends a session that saw no request for this long and has
	// no open GET stream (default 30 min).
	SessionIdle time.Duration
	// Logger receives debug lines (session started/ended) and never a
	// payload, a token or a session id.
	Logger zerolog.Logger
}

// HTTPTransport serves MCP over Streamable HTTP on /mcp, plus /healthz and
// /v1/nowframe. It is an http.Handler safe for concurrent use. Shutdown
// must be called once it is no longer served: it ends every session and
// waits for their goroutines.
type HTTPTransport struct {
	srv            *Server
	token          []byte // sha256 of the token; nil: none required
	allowedHosts   map[string]struct{}
	allowedOrigins map[string]struct{}
	health         func(ctx context.Context) ([]byte, bool)
	nowframe       func(ctx context.Context) []byte
	maxBody        int64
	bodyTimeout    time.Duration
	maxSessions    int
	idle           time.Duration
	log            zerolog.Logger
	now            func() time.Time

	mu          sync.Mutex
	sessions    map[string]*httpSession
	closed      bool
	reaping     bool
	stopReaping chan struct{}
	wg          sync.WaitGroup // session goroutines and the reaper
}

// HTTPHandler returns the Streamable HTTP transport serving srv's sessions.
// Its goroutines start with the first session; call Shutdown to end them.
func (srv *Server) HTTPHandler(opts HTTPOptions) *HTTPTransport {
	t := &HTTPTransport{
		srv:         srv,
		health:      opts.Health,
		nowframe:    opts.Nowframe,
		maxBody:     opts.MaxBodyBytes,
		bodyTimeout: opts.BodyTimeout,
		maxSessions: opts.MaxSessions,
		idle:        opts.SessionIdle,
		log:         opts.Logger,
		now:         time.Now,
		sessions:    map[string]*httpSession{},
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
	t.allowedOrigins = map[string]struct{}{}
	for _, o := range opts.AllowedOrigins {
		t.allowedOrigins[strings.ToLower(strings.TrimSuffix(o, "/"))] = struct{}{}
	}
	if t.maxBody <= 0 {
		t.maxBody = DefaultHTTPMaxBodyBytes
	}
	if t.bodyTimeout <= 0 {
		t.bodyTimeout = DefaultHTTPBodyTimeout
	}
	if t.maxSessions <= 0 {
		t.maxSessions = DefaultHTTPMaxSessions
	}
	if t.idle <= 0 {
		t.idle = DefaultHTTPSessionIdle
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
// streams close; calls in flight get the Server's DrainTimeout to answer
// the POSTs waiting for them) and waits for the sessions' goroutines, or
// for ctx. Idempotent. Call it before http.Server.Shutdown, whose wait
// would otherwise hang on the open GET streams.
func (t *HTTPTransport) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.stopReaping)
	}
	ended := make([]*httpSession, 0, len(t.sessions))
	for id, s := range t.sessions {
		ended = append(ended, s)
		delete(t.sessions, id)
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
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			// Answered now, not after draining a body that may never come.
			w.Header().Set("Connection", "close")
		}
		if isMCP {
			writeJSON(w, status, errorReply(nil, CodeInvalidRequest, msg, nil))
			return
		}
		writePlainError(w, status, msg)
	}
	if !t.hostAllowed(r.Host) {
		fail(http.StatusForbidden, "forbidden: Host not allowed")
		return
	}
	if !t.originAllowed(r) {
		fail(http.StatusForbidden, "forbidden: Origin not allowed")
		return
	}
	switch r.URL.Path {
	case PathMCP:
		if !t.Authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="awbridge"`)
			fail(http.StatusUnauthorized, "unauthorized: a bearer token is required")
			return
		}
		switch r.Method {
		case http.MethodPost:
			t.servePost(w, r)
		case http.MethodGet:
			t.serveGet(w, r)
		case http.MethodDelete:
			t.serveDelete(w, r)
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			fail(http.StatusMethodNotAllowed, "method not allowed")
		}
	case PathHealth:
		if t.health == nil {
			fail(http.StatusNotFound, "not found")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		body, healthy := t.health(r.Context())
		status := http.StatusOK
		if !healthy {
			status = http.StatusServiceUnavailable
		}
		if !t.Authorized(r) {
			// Any local user may ask whether awbridge is up; only the
			// token's holder sees the report (the sidecar's payload).
			body = []byte(`{"status":"degraded"}`)
			if healthy {
				body = []byte(`{"status":"healthy"}`)
			}
		}
		writeJSON(w, status, body)
	case PathNowframe:
		if t.nowframe == nil {
			fail(http.StatusNotFound, "not found")
			return
		}
		if !t.Authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="awbridge"`)
			fail(http.StatusUnauthorized, "unauthorized: a bearer token is required")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		body := t.nowframe(r.Context())
		if len(body) == 0 {
			fail(http.StatusServiceUnavailable, "no frame")
			return
		}
		writeJSON(w, http.StatusOK, body)
	default:
		fail(http.StatusNotFound, "not found")
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

// originAllowed accepts a request without Origin, an allowed Origin, or a
// loopback origin on the Host's own port.
func (t *HTTPTransport) originAllowed(r *http.Request) bool {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true
	}
	if len(vals) > 1 {
		return false
	}
	o := strings.ToLower(strings.TrimSuffix(vals[0], "/"))
	if _, ok := t.allowedOrigins[o]; ok {
		return true
	}
	u, err := url.Parse(o)
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

// protocolVersionOK reports whether the MCP-Protocol-Version header is
// absent or a version we speak.
func (t *HTTPTransport) protocolVersionOK(r *http.Request) bool {
	vals := r.Header.Values(HeaderProtocolVersion)
	if len(vals) == 0 {
		return true
	}
	if len(vals) > 1 {
		return false
	}
	_, ok := t.srv.initResult[strings.TrimSpace(vals[0])]
	return ok
}

// sessionFor resolves the session id header; on failure it has answered.
func (t *HTTPTransport) sessionFor(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: missing Mcp-Session-Id header (initialize first)", nil))
		return nil
	}
	s := t.lookup(id)
	if s == nil {
		writeJSON(w, http.StatusNotFound, errorReply(nil, CodeInvalidRequest, "session not found: initialize again", nil))
		return nil
	}
	return s
}

func (t *HTTPTransport) lookup(id string) *httpSession {
	if len(id) > maxSessionIDLen {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[id]
}

// servePost handles one POSTed message or batch.
func (t *HTTPTransport) servePost(w http.ResponseWriter, r *http.Request) {
	jsonOK, sseOK := acceptable(r.Header.Values("Accept"))
	if !jsonOK && !sseOK {
		writeJSON(w, http.StatusNotAcceptable, errorReply(nil, CodeInvalidRequest, "not acceptable: accept application/json or text/event-stream", nil))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errorReply(nil, CodeInvalidRequest, "unsupported media type: send application/json", nil))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, t.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorReply(nil, CodeInvalidRequest, "request too large", nil))
			return
		}
		writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: the body could not be read", nil))
		return
	}
	// Read whole: no deadline on watching the connection while the call runs.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	p, perr := parsePost(body, t.srv.maxLine)
	if perr != nil {
		writeJSON(w, perr.status, perr.body)
		return
	}

	var s *httpSession
	created := false
	if r.Header.Get(HeaderSessionID) == "" && p.initialize {
		var status int
		var msg string
		if s, status, msg = t.newSession(); s == nil {
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "5")
			}
			writeJSON(w, status, errorReply(nil, CodeInvalidRequest, msg, nil))
			return
		}
		created = true
	} else {
		if s = t.sessionFor(w, r); s == nil {
			return
		}
		if !p.initialize && !t.protocolVersionOK(r) {
			writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
			return
		}
		if p.batch && s.negotiated() != Version20250326 {
			writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "invalid request: batches are only accepted in a 2025-03-26 session", nil))
			return
		}
	}
	s.begin(t.now())
	defer s.finish(t.now())
	abandon := func() {
		if created {
			t.end(s)
		}
	}

	var wt *waiter
	if len(p.keys) > 0 {
		if wt = s.register(p.keys, p.initialize); wt == nil {
			abandon()
			writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "invalid request: a request with this id is already in flight in this session", nil))
			return
		}
	}
	if p.forward {
		if err := s.write(p.line); err != nil {
			s.unregister(wt)
			abandon()
			writeJSON(w, http.StatusNotFound, errorReply(nil, CodeInvalidRequest, "session not found: initialize again", nil))
			return
		}
	}
	if wt == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}

	var reply []byte
	select {
	case reply = <-wt.ch:
	case <-r.Context().Done():
		s.unregister(wt)
		abandon()
		return
	case <-s.done:
		select {
		case reply = <-wt.ch:
		default:
			writeJSON(w, http.StatusNotFound, errorReply(nil, CodeInvalidRequest, "session ended before the reply", nil))
			return
		}
	}
	if created {
		if !isResultReply(reply) {
			t.end(s) // initialize failed: no session
		} else {
			w.Header().Set(HeaderSessionID, s.id)
			t.log.Debug().Int("sessions", t.Sessions()).Msg("mcp http: session started")
		}
	}
	if jsonOK {
		writeJSON(w, http.StatusOK, reply)
		return
	}
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	_ = writeEvent(w, reply)
	_ = http.NewResponseController(w).Flush()
}

// serveGet opens the session's stream of server messages.
func (t *HTTPTransport) serveGet(w http.ResponseWriter, r *http.Request) {
	if _, sseOK := acceptable(r.Header.Values("Accept")); !sseOK || r.Header.Get("Accept") == "" {
		writeJSON(w, http.StatusNotAcceptable, errorReply(nil, CodeInvalidRequest, "not acceptable: a GET stream needs Accept: text/event-stream", nil))
		return
	}
	s := t.sessionFor(w, r)
	if s == nil {
		return
	}
	if !t.protocolVersionOK(r) {
		writeJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
		return
	}
	st := s.attach()
	defer s.detach(st)
	s.begin(t.now())
	defer s.finish(t.now())

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives any server write timeout
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case note := <-st.ch:
			if writeEvent(w, note) != nil || rc.Flush() != nil {
				return
			}
		case <-st.gone:
			return
		case <-s.closing:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// serveDelete ends a session.
func (t *HTTPTransport) serveDelete(w http.ResponseWriter, r *http.Request) {
	s := t.sessionFor(w, r)
	if s == nil {
		return
	}
	t.end(s)
	t.log.Debug().Int("sessions", t.Sessions()).Msg("mcp http: session deleted")
	w.WriteHeader(http.StatusNoContent)
}

// newSession starts a session: its Serve and its output reader. On
// failure it returns the status and message to answer.
func (t *HTTPTransport) newSession() (*httpSession, int, string) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, http.StatusInternalServerError, "internal error: no session id"
	}
	t.reap(t.now()) // make room before counting
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpSession{
		id:      hex.EncodeToString(raw[:]),
		t:       t,
		inW:     inW,
		cancel:  cancel,
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		waiters: map[string]*waiter{},
	}
	s.lastUsed.Store(t.now().UnixNano())

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		cancel()
		return nil, http.StatusServiceUnavailable, "service unavailable: shutting down"
	}
	if len(t.sessions) >= t.maxSessions {
		cancel()
		return nil, http.StatusServiceUnavailable, "service unavailable: too many sessions"
	}
	t.sessions[s.id] = s
	if !t.reaping {
		t.reaping = true
		t.wg.Go(t.reapLoop)
	}
	t.wg.Go(func() {
		if err := t.srv.Serve(ctx, inR, outW); err != nil {
			t.log.Debug().Err(err).Msg("mcp http: session serve ended")
		}
		outW.Close()
		inR.Close() // unblocks Serve's reader, if it was left in Read
	})
	t.wg.Go(func() { s.readOutput(outR) })
	return s, 0, ""
}

// end removes s and ends it.
func (t *HTTPTransport) end(s *httpSession) {
	t.forget(s)
	s.end()
}

func (t *HTTPTransport) forget(s *httpSession) {
	t.mu.Lock()
	if t.sessions[s.id] == s {
		delete(t.sessions, s.id)
	}
	t.mu.Unlock()
}

// reapLoop ends idle sessions until Shutdown.
func (t *HTTPTransport) reapLoop() {
	every := min(max(t.idle/4, time.Second), time.Minute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.reap(t.now())
		case <-t.stopReaping:
			return
		}
	}
}

// reap ends the sessions without a request in progress or an open stream
// whose last request is older than SessionIdle at now.
func (t *HTTPTransport) reap(now time.Time) {
	var idle []*httpSession
	t.mu.Lock()
	for id, s := range t.sessions {
		if s.active.Load() == 0 && now.Sub(time.Unix(0, s.lastUsed.Load())) >= t.idle {
			idle = append(idle, s)
			delete(t.sessions, id)
		}
	}
	t.mu.Unlock()
	for _, s := range idle {
		s.end()
	}
	if len(idle) > 0 {
		t.log.Debug().Int("ended", len(idle)).Msg("mcp http: idle sessions ended")
	}
}

// httpSession is one MCP session over HTTP. mu guards waiters, stream and
// version; the output reader is the only goroutine that delivers replies.
type httpSession struct {
	id      string
	t       *HTTPTransport
	inW     *io.PipeWriter // Serve's input; Writes are gated by io.Pipe
	cancel  context.CancelFunc
	closing chan struct{} // closed when the session starts ending
	done    chan struct{} // closed when Serve's output has ended
	endOnce sync.Once

	lastUsed atomic.Int64 // unix nanoseconds of the last request start or end
	active   atomic.Int64 // requests and streams in progress

	mu      sync.Mutex
	waiters map[string]*waiter // by idKey
	stream  *sseStream         // the open GET stream, or nil
	version string             // negotiated by the last initialize
}

// waiter is a POST waiting for the reply to its request (or batch).
type waiter struct {
	ch   chan []byte // capacity 1, one delivery
	keys []string
	init bool // the reply negotiates the version
}

// sseStream is an open GET stream.
type sseStream struct {
	ch   chan []byte
	gone chan struct{} // closed when a newer GET stream replaced it
}

func (s *httpSession) begin(now time.Time) {
	s.active.Add(1)
	s.lastUsed.Store(now.UnixNano())
}

func (s *httpSession) finish(now time.Time) {
	s.lastUsed.Store(now.UnixNano())
	s.active.Add(-1)
}

// end closes Serve's input and cancels it: calls in flight get the drain
// grace, GET streams close. Idempotent.
func (s *httpSession) end() {
	s.endOnce.Do(func() {
		close(s.closing)
		s.inW.Close()
		s.cancel()
	})
}

func (s *httpSession) negotiated() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// write sends one message line to Serve. It may wait while the session's
// calls in flight are at their cap; it fails once the session has ended.
func (s *httpSession) write(line []byte) error {
	buf := make([]byte, len(line)+1)
	copy(buf, line)
	buf[len(line)] = '\n'
	_, err := s.inW.Write(buf)
	return err
}

// register reserves keys for one waiter; nil when one is already taken.
func (s *httpSession) register(keys []string, init bool) *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if _, taken := s.waiters[k]; taken {
			return nil
		}
	}
	w := &waiter{ch: make(chan []byte, 1), keys: keys, init: init}
	for _, k := range keys {
		s.waiters[k] = w
	}
	return w
}

func (s *httpSession) unregister(w *waiter) {
	if w == nil {
		return
	}
	s.mu.Lock()
	for _, k := range w.keys {
		if s.waiters[k] == w {
			delete(s.waiters, k)
		}
	}
	s.mu.Unlock()
}

// attach opens a GET stream, replacing an older one (a message goes to
// one stream only).
func (s *httpSession) attach() *sseStream {
	st := &sseStream{ch: make(chan []byte, streamQueue), gone: make(chan struct{})}
	s.mu.Lock()
	if s.stream != nil {
		close(s.stream.gone)
	}
	s.stream = st
	s.mu.Unlock()
	return st
}

func (s *httpSession) detach(st *sseStream) {
	s.mu.Lock()
	if s.stream == st {
		s.stream = nil
	}
	s.mu.Unlock()
}

// readOutput demultiplexes Serve's output until it ends: replies to the
// POST waiting for their id, messages without id to the GET stream.
func (s *httpSession) readOutput(outR *io.PipeReader) {
	defer close(s.done)
	defer s.end()
	defer s.t.forget(s)
	defer outR.Close()
	br := bufio.NewReaderSize(outR, 32<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.route(bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

// route delivers one output line.
func (s *httpSession) route(line []byte) {
	i := skipWS(line, 0)
	if i >= len(line) {
		return
	}
	var key string
	switch line[i] {
	case '{':
		m := parseMessage(line[i:])
		if !m.hasID {
			s.notify(line[i:])
			return
		}
		if validID(m.id) {
			key = idKey(m.id)
		}
	case '[':
		forEachElement(line[i:], func(el []byte) {
			if key != "" || len(el) == 0 || el[0] != '{' {
				return
			}
			if m := parseMessage(el); m.hasID && validID(m.id) {
				key = idKey(m.id)
			}
		})
	}
	if key == "" {
		s.t.log.Debug().Msg("mcp http: reply without a usable id dropped")
		return
	}
	s.mu.Lock()
	w := s.waiters[key]
	if w != nil {
		for _, k := range w.keys {
			if s.waiters[k] == w {
				delete(s.waiters, k)
			}
		}
		if w.init {
			if v := negotiatedVersion(line[i:]); v != "" {
				s.version = v
			}
		}
	}
	s.mu.Unlock()
	if w == nil {
		s.t.log.Debug().Msg("mcp http: reply nobody waits for dropped")
		return
	}
	w.ch <- line[i:]
}

// notify hands a server notification to the GET stream, if one is open
// and not too far behind; otherwise it is dropped.
func (s *httpSession) notify(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		return
	}
	select {
	case s.stream.ch <- msg:
	default:
		s.t.log.Debug().Msg("mcp http: GET stream behind, notification dropped")
	}
}

// post is a checked POST body.
type post struct {
	line       []byte   // the message, compacted to one line
	keys       []string // idKey of each request: the replies to wait for
	batch      bool
	initialize bool // a lone initialize request
	forward    bool // false: responses only, nothing for Serve
}

// postError is a POST the transport answers itself.
type postError struct {
	status int
	body   []byte
}

func badPost(status, code int, msg string) *postError {
	return &postError{status: status, body: errorReply(nil, code, msg, nil)}
}

// msgKind classifies one JSON-RPC message.
type msgKind int

const (
	kindRequest msgKind = iota
	kindNotification
	kindResponse
)

// parsePost checks a POST body: one JSON-RPC message or a batch of them,
// which must fit maxLine once compacted.
func parsePost(body []byte, maxLine int) (post, *postError) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if msg := shapeError(body); msg != "" {
		return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: "+msg)
	}
	if !json.Valid(body) {
		return post{}, badPost(http.StatusBadRequest, CodeParseError, "parse error")
	}
	var buf bytes.Buffer
	buf.Grow(len(body))
	if err := json.Compact(&buf, body); err != nil {
		return post{}, badPost(http.StatusBadRequest, CodeParseError, "parse error")
	}
	p := post{line: buf.Bytes(), forward: true}
	if len(p.line) > maxLine {
		return post{}, badPost(http.StatusRequestEntityTooLarge, CodeInvalidRequest, "request too large")
	}
	switch p.line[0] {
	case '{':
		kind, key, init, perr := classify(p.line)
		if perr != nil {
			return post{}, perr
		}
		switch kind {
		case kindRequest:
			p.keys, p.initialize = []string{key}, init
		case kindResponse:
			p.forward = false // this server sends no requests: nothing awaits it
		}
		return p, nil
	case '[':
		p.batch = true
		var perr *postError
		n, responses := 0, 0
		seen := map[string]struct{}{}
		forEachElement(p.line, func(el []byte) {
			n++
			if perr != nil {
				return
			}
			if el[0] != '{' {
				perr = badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: a message must be a JSON object")
				return
			}
			kind, key, _, e := classify(el)
			switch {
			case e != nil:
				perr = e
			case kind == kindResponse:
				responses++
			case kind == kindRequest:
				if _, dup := seen[key]; dup {
					perr = badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: repeated id in a batch")
					return
				}
				seen[key] = struct{}{}
				p.keys = append(p.keys, key)
			}
		})
		switch {
		case perr != nil:
			return post{}, perr
		case n == 0:
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: empty batch")
		case responses > 0 && responses < n:
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: a batch mixes responses with requests")
		case responses == n:
			p.forward = false
		}
		return p, nil
	}
	return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: a message must be a JSON object")
}

// classify tells a request (with its idKey, and whether it is initialize),
// a notification and a response apart, rejecting what no session could
// answer under an id.
func classify(obj []byte) (kind msgKind, key string, init bool, perr *postError) {
	m := parseMessage(obj)
	if m.hasID {
		if m.dupID || !validID(m.id) {
			return 0, "", false, badPost(http.StatusBadRequest, CodeInvalidRequest, "invalid request: id must be a string or a number")
		}
		if !m.hasMethod {
			return kindResponse, "", false, nil
		}
		return kindRequest, idKey(m.id), tokenIs(m.method, "initialize"), nil
	}
	if m.dup || !m.hasMethod || len(m.method) == 0 || m.method[0] != '"' || !m.hasJSONRPC || !tokenIs(m.jsonrpc, "2.0") {
		return 0, "", false, badPost(http.StatusBadRequest, CodeInvalidRequest, `invalid request: a notification needs jsonrpc "2.0" and a method`)
	}
	return kindNotification, "", false, nil
}

// isResultReply reports whether a reply line carries a result.
func isResultReply(reply []byte) bool {
	found := false
	forEachMember(reply, func(key, _ []byte) bool {
		found = tokenIs(key, "result")
		return !found
	})
	return found
}

// negotiatedVersion is the protocolVersion of an initialize result reply.
func negotiatedVersion(reply []byte) string {
	var v string
	forEachMember(reply, func(key, val []byte) bool {
		if !tokenIs(key, "result") {
			return true
		}
		forEachMember(val, func(k, pv []byte) bool {
			if tokenIs(k, "protocolVersion") {
				v, _ = decodeString(pv)
				return false
			}
			return true
		})
		return false
	})
	return v
}

// acceptable reads Accept headers: whether a JSON reply and an SSE stream
// are acceptable. No Accept header accepts both.
func acceptable(vals []string) (jsonOK, sseOK bool) {
	if len(vals) == 0 {
		return true, true
	}
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, _ := strings.Cut(part, ";")
			if q := strings.TrimSpace(params); q != "" && rejectsQ(q) {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "*/*":
				jsonOK, sseOK = true, true
			case "application/*", "application/json":
				jsonOK = true
			case "text/*", "text/event-stream":
				sseOK = true
			}
		}
	}
	return jsonOK, sseOK
}

// rejectsQ reports whether media-range parameters say q=0.
func rejectsQ(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "q") {
			v = strings.TrimRight(strings.TrimSpace(v), "0")
			return v == "0" || v == "0." || v == ""
		}
	}
	return false
}

func setSSEHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// writeEvent writes one SSE message event; msg is one line.
func writeEvent(w io.Writer, msg []byte) error {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	return err
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writePlainError answers a non-MCP path: {"error":"..."}.
func writePlainError(w http.ResponseWriter, status int, msg string) {
	b := append([]byte(`{"error":`), jsonw.AppendString(nil, msg)...)
	writeJSON(w, status, append(b, '}'))
}
