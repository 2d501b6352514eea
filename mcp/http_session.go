package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// sessionFor resolves the session id header; on failure it has answered
// (under id, the request's own id when there is one).
func (t *HTTPTransport) sessionFor(w http.ResponseWriter, r *http.Request, id []byte) *httpSession {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		WriteJSON(w, http.StatusBadRequest, errorReply(id, CodeInvalidRequest, "bad request: missing Mcp-Session-Id header (initialize first, or send a 2026-07-28 request with _meta)", nil))
		return nil
	}
	var s *httpSession
	if len(sid) <= maxSessionID {
		t.mu.Lock()
		s = t.sessions[sid]
		t.mu.Unlock()
	}
	if s == nil {
		WriteJSON(w, http.StatusNotFound, errorReply(id, CodeInvalidRequest, "session not found: initialize again", nil))
	}
	return s
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
	if !protocolVersionOK(r) {
		WriteJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
		return
	}
	st := s.attach()
	defer s.detach(st)
	s.begin()
	defer s.finish()

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

// newSession starts a legacy session, or says why it cannot (503).
func (t *HTTPTransport) newSession() (*httpSession, string) {
	t.reap(time.Now()) // make room before counting
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return nil, "service unavailable: shutting down"
	case len(t.sessions) >= t.maxSessions:
		return nil, "service unavailable: too many sessions"
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // never fails
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
	s.lastUsed.Store(time.Now().UnixNano())
	t.sessions[s.id] = s
	if !t.reaping {
		t.reaping = true
		t.wg.Go(t.reapLoop)
	}
	t.wg.Go(s.drainAtEnd)
	return s, ""
}

// end removes s and ends it.
func (t *HTTPTransport) end(s *httpSession) {
	t.mu.Lock()
	if t.sessions[s.id] == s {
		delete(t.sessions, s.id)
	}
	t.mu.Unlock()
	s.end()
}

// reapLoop ends idle sessions until Shutdown.
func (t *HTTPTransport) reapLoop() {
	every := min(max(t.idle/4, time.Second), time.Minute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.reap(time.Now())
		case <-t.stopReaping:
			return
		}
	}
}

// reap ends the sessions without a request in progress or an open stream
// whose last request is older than the idle bound at now.
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

// begin and finish bracket a request or a stream; the session is idle
// from the end of the last one (finish reads the clock when it runs).
func (s *httpSession) begin() {
	s.active.Add(1)
	s.lastUsed.Store(time.Now().UnixNano())
}

func (s *httpSession) finish() {
	s.lastUsed.Store(time.Now().UnixNano())
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
	s.forgetLocked(w)
	s.mu.Unlock()
}

// forgetLocked removes w's keys; s.mu is held.
func (s *httpSession) forgetLocked(w *waiter) {
	for _, k := range w.keys {
		if s.waiters[k] == w {
			delete(s.waiters, k)
		}
	}
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
			offer(w.notes, o.b)
		}
		return
	}
	if o.key == "" {
		if s.stream != nil && !offer(s.stream.ch, o.b) {
			s.t.log.Debug().Msg("mcp http: GET stream behind, notification dropped")
		}
		return
	}
	w := s.waiters[o.key]
	if w == nil {
		s.t.log.Debug().Msg("mcp http: reply nobody waits for dropped")
		return
	}
	s.forgetLocked(w)
	w.ch <- o.b
}

// offer sends b on ch unless ch is full; it reports whether it did.
func offer(ch chan []byte, b []byte) bool {
	select {
	case ch <- b:
		return true
	default:
		return false
	}
}
