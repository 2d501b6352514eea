package mcp

import (
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
)

// The MCP Streamable HTTP transport over the message core: each POST body
// is decoded once. A 2026-07-28 request is checked against its headers and
// answered on a session of its own (subscriptions/listen as an SSE stream
// that stays open). A legacy request belongs to the session initialize
// created (Mcp-Session-Id): its reply goes straight from the core to the
// POST waiting for its id, and server notifications to the session's GET
// stream.

// PathMCP is where HTTPTransport serves MCP.
const PathMCP = "/mcp"

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
	DefaultHTTPMaxModern    = 256
	DefaultHTTPMaxListens   = 64
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
	// Token is the bearer token /mcp requires; "" requires none. Compared
	// in constant time.
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
	// Other serves every path but /mcp, once Host and Origin passed;
	// authorized says whether the request carries the bearer token. Nil:
	// they are 404.
	Other func(w http.ResponseWriter, r *http.Request, authorized bool)
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
	// MaxModernCalls bounds the 2026-07-28 requests (each served on a
	// session of its own) in progress at once, other than
	// subscriptions/listen (default 256); MaxListens bounds the open
	// subscriptions/listen streams (default 64). Beyond either: 503 with
	// Retry-After and ConcurrencyLimited (-32006) under the request's id.
	MaxModernCalls, MaxListens int
	// SessionIdle ends a session that saw no request for this long and has
	// no open GET stream (default 30 min).
	SessionIdle time.Duration
	// Logger receives debug lines (session started/ended) and never a
	// payload, a token or a session id.
	Logger zerolog.Logger
}

// HTTPTransport serves MCP over Streamable HTTP on /mcp, and hands other
// paths to HTTPOptions.Other. It is an http.Handler safe for concurrent use. Shutdown
// must be called once it is no longer served: it ends every session and
// waits for their goroutines.
type HTTPTransport struct {
	srv            *Server
	token          []byte // sha256 of the token; nil: none required
	allowedHosts   map[string]struct{}
	allowedOrigins map[string]struct{}
	other          func(http.ResponseWriter, *http.Request, bool)
	maxBody        int64
	bodyTimeout    time.Duration
	maxSessions    int
	maxModern      int
	maxListens     int
	idle           time.Duration
	log            zerolog.Logger
	now            func() time.Time

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
// Its goroutines start with the first session; call Shutdown to end them.
func (srv *Server) HTTPHandler(opts HTTPOptions) *HTTPTransport {
	t := &HTTPTransport{
		srv:         srv,
		other:       opts.Other,
		maxBody:     opts.MaxBodyBytes,
		bodyTimeout: opts.BodyTimeout,
		maxSessions: opts.MaxSessions,
		maxModern:   opts.MaxModernCalls,
		maxListens:  opts.MaxListens,
		idle:        opts.SessionIdle,
		log:         opts.Logger,
		now:         time.Now,
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
	if t.maxModern <= 0 {
		t.maxModern = DefaultHTTPMaxModern
	}
	if t.maxListens <= 0 {
		t.maxListens = DefaultHTTPMaxListens
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

// protocolVersionOK reports whether the MCP-Protocol-Version header of a
// legacy request is absent or a version initialize negotiates.
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

// sessionFor resolves the session id header; on failure it has answered
// (under id, the request's own id when there is one).
func (t *HTTPTransport) sessionFor(w http.ResponseWriter, r *http.Request, id []byte) *httpSession {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		WriteJSON(w, http.StatusBadRequest, errorReply(id, CodeInvalidRequest, "bad request: missing Mcp-Session-Id header (initialize first, or send a 2026-07-28 request with _meta)", nil))
		return nil
	}
	s := t.lookup(sid)
	if s == nil {
		WriteJSON(w, http.StatusNotFound, errorReply(id, CodeInvalidRequest, "session not found: initialize again", nil))
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

// post is a POST body decoded once: one message, or a batch.
type post struct {
	msgs    []*message // one, or the batch's elements
	batch   bool
	keys    []string // idKey of each request: the replies to wait for
	firstID []byte   // the first request's id, for error replies

	// A lone request, checked and with its params decoded once (req is
	// nil otherwise); code and msg are the error that answers it, if any.
	req  *request
	code int
	msg  string
}

// postError is a POST the transport answers itself.
type postError struct {
	status int
	body   []byte
}

func badPost(status, code int, id []byte, msg string) *postError {
	return &postError{status: status, body: errorReply(id, code, msg, nil)}
}

// decodePost decodes and checks a POST body: one JSON-RPC message or a
// batch of them, at most maxLine bytes.
func decodePost(body []byte, maxLine int) (post, *postError) {
	body = bytes.TrimPrefix(body, bom)
	if msg := shapeError(body); msg != "" {
		return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, idFromPrefix(body), "invalid request: "+msg)
	}
	if len(body) > maxLine {
		return post{}, badPost(http.StatusRequestEntityTooLarge, CodeInvalidRequest, idFromPrefix(body), "request too large")
	}
	var p post
	switch firstByte(body) {
	case '{':
		m, err := decodeMessage(body)
		if err != nil {
			return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
		}
		if perr := checkPostMessage(m); perr != nil {
			return post{}, perr
		}
		p.msgs = []*message{&m}
		if m.hasID && !m.response {
			p.keys, p.firstID = []string{idKey(m.id)}, m.id
		}
		return p, nil
	case '[':
		els, err := decodeArray(body)
		if err != nil {
			return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
		}
		p.batch = true
		if len(els) == 0 {
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: empty batch")
		}
		responses := 0
		seen := map[string]bool{}
		for _, el := range els {
			if el[0] != '{' {
				return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: a message must be a JSON object")
			}
			m, _ := decodeMessage(el) // the array was valid JSON
			if perr := checkPostMessage(m); perr != nil {
				return post{}, perr
			}
			p.msgs = append(p.msgs, &m)
			switch {
			case m.response:
				responses++
			case m.hasID:
				k := idKey(m.id)
				if seen[k] {
					return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, m.id, "invalid request: repeated id in a batch")
				}
				seen[k] = true
				p.keys = append(p.keys, k)
				if p.firstID == nil {
					p.firstID = m.id
				}
			}
		}
		if responses > 0 && responses < len(els) {
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: a batch mixes responses with requests")
		}
		return p, nil
	}
	if json.Valid(body) {
		return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: a message must be a JSON object")
	}
	return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
}

// checkPostMessage rejects what no session could answer under an id.
func checkPostMessage(m message) *postError {
	if m.response {
		return nil // accepted and dropped: it answers nothing
	}
	if m.hasID {
		if m.dupID || !validID(m.id) {
			return badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: id must be a string or a number")
		}
		return nil
	}
	if m.dup || !m.methodOK || !m.jsonrpcOK {
		return badPost(http.StatusBadRequest, CodeInvalidRequest, nil, `invalid request: a notification needs jsonrpc "2.0" and a method`)
	}
	return nil
}

// servePost handles one POSTed message or batch.
func (t *HTTPTransport) servePost(w http.ResponseWriter, r *http.Request) {
	jsonOK, sseOK := acceptable(r.Header.Values("Accept"))
	if !jsonOK && !sseOK {
		WriteJSON(w, http.StatusNotAcceptable, errorReply(nil, CodeInvalidRequest, "not acceptable: accept application/json or text/event-stream", nil))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		WriteJSON(w, http.StatusUnsupportedMediaType, errorReply(nil, CodeInvalidRequest, "unsupported media type: send application/json", nil))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, t.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			WriteJSON(w, http.StatusRequestEntityTooLarge, errorReply(nil, CodeInvalidRequest, "request too large", nil))
			return
		}
		WriteJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: the body could not be read", nil))
		return
	}
	// Read whole: no deadline on watching the connection while the call runs.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	p, perr := decodePost(body, t.srv.maxLine)
	if perr != nil {
		WriteJSON(w, perr.status, perr.body)
		return
	}
	if p.msgs[0].response {
		// Only responses (a batch never mixes them with requests): the
		// server sent no request they could answer. Accepted, dropped.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !p.batch && p.msgs[0].hasID && !p.msgs[0].response {
		m := p.msgs[0]
		p.req, p.code, p.msg = t.srv.parseRequest(*m)
		if p.code == 0 && p.req.meta.modern() && !p.req.direct {
			t.serveModern(w, r, p.req, jsonOK, sseOK)
			return
		}
		if p.code == 0 && !p.req.meta.hasVersion && m.method != "initialize" && r.Header.Get(HeaderSessionID) == "" {
			// The header says 2026-07-28 (or later) but the body has no
			// version: a malformed modern request, not a legacy one.
			if v, ok := oneHeader(r, HeaderProtocolVersion); ok && !legacyVersion(v) {
				WriteJSON(w, http.StatusBadRequest, errorReply(p.req.id, CodeInvalidParams,
					"invalid params: _meta."+MetaProtocolVersion+" is required (MCP-Protocol-Version says "+bounded(v)+")", nil))
				return
			}
		}
		if p.code != 0 && r.Header.Get(HeaderSessionID) == "" && m.method != "initialize" {
			WriteJSON(w, http.StatusBadRequest, errorReply(p.req.id, p.code, p.msg, nil))
			return
		}
	}
	// Progress turns the reply into an SSE stream: only for a client that
	// said it reads one.
	t.serveLegacy(w, r, p, jsonOK, sseOK && r.Header.Get("Accept") != "")
}

// serveLegacy answers a POST of the initialize era: initialize opens a
// session; anything else needs one. With streamOK, a lone call's progress
// notifications make the reply an SSE stream that carries them first.
func (t *HTTPTransport) serveLegacy(w http.ResponseWriter, r *http.Request, p post, jsonOK, streamOK bool) {
	init := !p.batch && p.msgs[0].hasID && p.msgs[0].method == "initialize"
	var s *httpSession
	created := false
	if r.Header.Get(HeaderSessionID) == "" && init {
		var status int
		var msg string
		if s, status, msg = t.newSession(); s == nil {
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "5")
			}
			WriteJSON(w, status, errorReply(p.firstID, CodeInvalidRequest, msg, nil))
			return
		}
		created = true
	} else {
		if s = t.sessionFor(w, r, p.firstID); s == nil {
			return
		}
		if !init && !t.protocolVersionOK(r) {
			WriteJSON(w, http.StatusBadRequest, errorReply(p.firstID, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
			return
		}
		if p.batch && s.negotiated() != Version20250326 {
			WriteJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "invalid request: batches are only accepted in a 2025-03-26 session", nil))
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
		if wt = s.register(p.keys, streamOK && !p.batch); wt == nil {
			abandon()
			WriteJSON(w, http.StatusBadRequest, errorReply(p.firstID, CodeInvalidRequest, "invalid request: a request with this id is already in flight in this session", nil))
			return
		}
	}
	if !s.dispatch(p) {
		s.unregister(wt)
		abandon()
		WriteJSON(w, http.StatusNotFound, errorReply(p.firstID, CodeInvalidRequest, "session not found: initialize again", nil))
		return
	}
	if wt == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}

	var reply []byte
	sse := &sseReply{w: w}
	for reply == nil {
		select {
		case reply = <-wt.ch:
		case note := <-wt.notes:
			sse.event(note)
		case <-r.Context().Done():
			s.unregister(wt)
			abandon()
			return
		case <-s.done:
			select {
			case reply = <-wt.ch:
			default:
				if sse.started {
					return // the stream ends without a reply: the client sees the session gone
				}
				WriteJSON(w, http.StatusNotFound, errorReply(p.firstID, CodeInvalidRequest, "session ended before the reply", nil))
				return
			}
		}
	}
	if sse.drain(wt.notes) {
		sse.event(reply)
		return
	}
	if created {
		if s.negotiated() == "" {
			t.end(s) // initialize failed: no session
		} else {
			w.Header().Set(HeaderSessionID, s.id)
			t.log.Debug().Int("sessions", t.Sessions()).Msg("mcp http: session started")
		}
	}
	writeReply(w, jsonOK, reply)
}

// writeReply answers a POST with one reply, as JSON or as one SSE event.
func writeReply(w http.ResponseWriter, jsonOK bool, reply []byte) {
	if jsonOK {
		WriteJSON(w, http.StatusOK, reply)
		return
	}
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	_ = writeEvent(w, reply)
	_ = http.NewResponseController(w).Flush()
}

// serveGet opens the session's stream of server messages (legacy era).
func (t *HTTPTransport) serveGet(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(HeaderSessionID) == "" {
		w.Header().Set("Allow", "POST")
		WriteJSON(w, http.StatusMethodNotAllowed, errorReply(nil, CodeInvalidRequest, "method not allowed: GET needs a legacy session (Mcp-Session-Id); 2026-07-28 clients use subscriptions/listen", nil))
		return
	}
	if _, sseOK := acceptable(r.Header.Values("Accept")); !sseOK || r.Header.Get("Accept") == "" {
		WriteJSON(w, http.StatusNotAcceptable, errorReply(nil, CodeInvalidRequest, "not acceptable: a GET stream needs Accept: text/event-stream", nil))
		return
	}
	s := t.sessionFor(w, r, nil)
	if s == nil {
		return
	}
	if !t.protocolVersionOK(r) {
		WriteJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
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
	if r.Header.Get(HeaderSessionID) == "" {
		w.Header().Set("Allow", "POST")
		WriteJSON(w, http.StatusMethodNotAllowed, errorReply(nil, CodeInvalidRequest, "method not allowed: DELETE needs a legacy session (Mcp-Session-Id)", nil))
		return
	}
	s := t.sessionFor(w, r, nil)
	if s == nil {
		return
	}
	t.end(s)
	t.log.Debug().Int("sessions", t.Sessions()).Msg("mcp http: session deleted")
	w.WriteHeader(http.StatusNoContent)
}

// newSession starts a legacy session. On failure it returns the status and
// message to answer.
func (t *HTTPTransport) newSession() (*httpSession, int, string) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, http.StatusInternalServerError, "internal error: no session id"
	}
	t.reap(t.now()) // make room before counting
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpSession{
		id:      hex.EncodeToString(raw[:]),
		t:       t,
		ctx:     ctx,
		cancel:  cancel,
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		waiters: map[string]*waiter{},
	}
	s.core = newSession(t.srv, s.route)
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
	t.wg.Go(s.drainAtEnd)
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

// httpSession is one legacy MCP session over HTTP: the core session whose
// replies go to the POST waiting for their id and whose notifications go
// to the session's GET stream. mu guards waiters and stream.
type httpSession struct {
	id      string
	t       *HTTPTransport
	core    *session
	ctx     context.Context // the calls' context: cancelled once the drain grace is over
	cancel  context.CancelFunc
	closing chan struct{} // closed when the session starts ending
	done    chan struct{} // closed when every call has answered
	endOnce sync.Once

	lastUsed atomic.Int64 // unix nanoseconds of the last request start or end
	active   atomic.Int64 // requests and streams in progress

	mu      sync.Mutex
	waiters map[string]*waiter // by idKey
	stream  *sseStream         // the open GET stream, or nil
}

// waiter is a POST waiting for the reply to its request (or batch), and
// for its progress notifications when it can stream them (notes nil: it
// cannot; they are dropped).
type waiter struct {
	ch    chan []byte // capacity 1, one delivery
	notes chan []byte
	keys  []string
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

// end stops the session: no message is handled any more, calls in flight
// get the Server's drain grace, GET streams close. Idempotent.
func (s *httpSession) end() {
	s.endOnce.Do(func() {
		close(s.closing)
		s.core.stopReading()
	})
}

// drainAtEnd waits for the session's end, then for its calls (cancelled
// after the drain grace).
func (s *httpSession) drainAtEnd() {
	defer close(s.done)
	defer s.cancel()
	<-s.closing
	s.core.park()
	calls := make(chan struct{})
	go func() {
		s.core.calls.Wait()
		close(calls)
	}()
	timer := time.NewTimer(s.t.srv.drain)
	defer timer.Stop()
	select {
	case <-calls:
	case <-timer.C:
		s.cancel()
		<-calls
	}
}

func (s *httpSession) negotiated() string {
	s.core.dispatch.Lock()
	defer s.core.dispatch.Unlock()
	return s.core.version
}

// dispatch hands a decoded POST to the core; false once the session ended.
func (s *httpSession) dispatch(p post) bool {
	c := s.core
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	if c.parked || c.isStopped() {
		return false
	}
	switch {
	case p.batch:
		c.handleBatch(s.ctx, p.msgs)
	case p.req == nil:
		c.handleMessage(s.ctx, *p.msgs[0], nil) // a notification or a response
	case p.code != 0:
		c.fail(p.req, p.code, p.msg, nil)
	default:
		c.route(s.ctx, p.req)
	}
	return true
}

// register reserves keys for one waiter; nil when one is already taken.
func (s *httpSession) register(keys []string, stream bool) *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if _, taken := s.waiters[k]; taken {
			return nil
		}
	}
	w := &waiter{ch: make(chan []byte, 1), keys: keys}
	if stream {
		w.notes = make(chan []byte, progressQueue)
	}
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

// route is the core session's sink: a reply to the POST waiting for its
// id, a call's progress to that POST too, a notification to the GET stream
// (dropped when none is open or it is too far behind).
func (s *httpSession) route(o outbound) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.about != "" {
		if w := s.waiters[o.about]; w != nil && w.notes != nil {
			select {
			case w.notes <- o.b:
			default:
			}
		}
		return
	}
	if o.key == "" {
		if s.stream == nil {
			return
		}
		select {
		case s.stream.ch <- o.b:
		default:
			s.t.log.Debug().Msg("mcp http: GET stream behind, notification dropped")
		}
		return
	}
	w := s.waiters[o.key]
	if w == nil {
		s.t.log.Debug().Msg("mcp http: reply nobody waits for dropped")
		return
	}
	for _, k := range w.keys {
		if s.waiters[k] == w {
			delete(s.waiters, k)
		}
	}
	w.ch <- o.b
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

// sseReply answers one POST, or modern request, as an SSE stream once it
// has something to send before the reply: the stream starts with the
// first event. After a write error it writes nothing more (the client is
// gone; its request context ends too).
type sseReply struct {
	w       http.ResponseWriter
	started bool
	failed  bool
}

// event writes one message as an SSE event, starting the stream first.
func (e *sseReply) event(msg []byte) {
	if e.failed {
		return
	}
	rc := http.NewResponseController(e.w)
	if !e.started {
		e.started = true
		_ = rc.SetWriteDeadline(time.Time{}) // a long call outlives any server write timeout
		setSSEHeaders(e.w)
		e.w.Header().Set("X-Accel-Buffering", "no")
		e.w.WriteHeader(http.StatusOK)
	}
	e.failed = writeEvent(e.w, msg) != nil || rc.Flush() != nil
}

// drain writes the notifications still queued (they came before the
// reply) and reports whether the answer is a stream.
func (e *sseReply) drain(notes chan []byte) bool {
	for {
		select {
		case n := <-notes:
			e.event(n)
		default:
			return e.started
		}
	}
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
