package mcp

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/awbridge/awbridge/toolbus"
)

// Header names of MCP 2026-07-28's Streamable HTTP: they mirror the body
// and must match it.
const (
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)

// listenKeepAlive is how often a quiet subscriptions/listen stream gets an
// SSE comment, so that intermediaries and idle timeouts keep it open.
const listenKeepAlive = 15 * time.Second

// serveModern answers one MCP 2026-07-28 request: no session, headers
// checked against the body, then dispatched on a session of its own.
func (t *HTTPTransport) serveModern(w http.ResponseWriter, r *http.Request, q *request, jsonOK, sseOK bool) {
	bad := func(status, code int, msg string, data []byte) {
		WriteJSON(w, status, errorReply(q.id, code, msg, data))
	}
	if v, ok := oneHeader(r, HeaderProtocolVersion); !ok || v != q.meta.version {
		bad(http.StatusBadRequest, CodeHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header must be present and equal _meta's "+MetaProtocolVersion, nil)
		return
	}
	if code, msg, data := modernCheck(q.meta); code != 0 {
		bad(http.StatusBadRequest, code, msg, data)
		return
	}
	if m, ok := oneHeader(r, HeaderMethod); !ok || m != q.method {
		bad(http.StatusBadRequest, CodeHeaderMismatch, "Header mismatch: the Mcp-Method header must be present and equal the body's method", nil)
		return
	}
	if !modernMethod(q.method) {
		bad(http.StatusNotFound, CodeMethodNotFound, notFound(q.method), nil)
		return
	}
	field, name := "uri", q.params.uri
	if q.method == "tools/call" || q.method == "prompts/get" {
		field, name = "name", q.params.name
	}
	if (field == "name" || q.method == "resources/read") && name != nil {
		want, _ := asString(name)
		got, ok := oneHeader(r, HeaderName)
		if ok {
			got, ok = decodeHeaderValue(got)
		}
		switch {
		case !ok:
			bad(http.StatusBadRequest, CodeHeaderMismatch, "Header mismatch: the Mcp-Name header must be present once, in visible ASCII or as =?base64?{base64 of UTF-8}?=", nil)
			return
		case got != want:
			bad(http.StatusBadRequest, CodeHeaderMismatch, "Header mismatch: the Mcp-Name header must equal the body's "+field, nil)
			return
		}
	}
	if q.method == "subscriptions/listen" {
		if !sseOK {
			bad(http.StatusNotAcceptable, CodeInvalidRequest, "not acceptable: subscriptions/listen answers with text/event-stream", nil)
			return
		}
		t.serveListen(w, r, q)
		return
	}

	if !t.admitModern(w, q.id) {
		return
	}
	leave := sync.OnceFunc(func() {
		t.mu.Lock()
		t.modern--
		t.mu.Unlock()
	})
	defer leave()
	reply := make(chan []byte, 1)
	var notes chan []byte // progress, when the client reads SSE
	if sseOK && r.Header.Get("Accept") != "" {
		notes = make(chan []byte, progressQueue)
	}
	s := newSession(t.srv, func(o outbound) {
		switch {
		case o.about == q.key && notes != nil:
			offer(notes, o.b)
		case o.key == q.key:
			offer(reply, o.b)
		}
	})
	s.dispatch.Lock()
	s.route(r.Context(), q)
	s.dispatch.Unlock()
	sse := &sseReply{w: w}
	for {
		select {
		case n := <-notes:
			// The response becomes an SSE stream scoped to the request:
			// its progress, then its reply.
			sse.event(n)
		case b := <-reply:
			s.calls.Wait()
			leave() // before the client can see the reply and send the next request
			if sse.drain(notes) {
				sse.event(b)
				return
			}
			writeReply(w, jsonOK, b)
			return
		case <-r.Context().Done():
			// A closed stream cancels the request: no reply.
			s.cancelRequest(q.id)
			s.calls.Wait()
			return
		}
	}
}

// admitModern counts one more modern request in progress, or answers it
// (shutting down, or at its maxModern) and returns false.
func (t *HTTPTransport) admitModern(w http.ResponseWriter, id []byte) bool {
	t.mu.Lock()
	closed, full := t.closed, t.modern >= t.maxModern
	if !closed && !full {
		t.modern++
	}
	t.mu.Unlock()
	switch {
	case closed:
		shuttingDownHTTP(w, id)
	case full:
		writeBusy(w, id, fmt.Sprintf("service busy: at most %d 2026-07-28 requests are served at once over HTTP", t.maxModern))
	}
	return !closed && !full
}

// shuttingDownHTTP refuses a request once Shutdown has begun.
func shuttingDownHTTP(w http.ResponseWriter, id []byte) {
	w.Header().Set("Retry-After", "5")
	WriteJSON(w, http.StatusServiceUnavailable, errorReply(id, CodeInvalidRequest, "service unavailable: shutting down", nil))
}

// writeBusy answers a request the transport has no room for: 503 with
// Retry-After, and ConcurrencyLimited under the request's id, as a
// stream answers a call beyond its in-flight cap that asked not to wait.
func writeBusy(w http.ResponseWriter, id []byte, msg string) {
	ms := int64(1000)
	e := &toolbus.ToolError{Kind: toolbus.PolicyError, Code: toolbus.CodeConcurrencyLimited, Retryable: true,
		Message: msg, Hint: "retry after the Retry-After delay", RetryAfterMs: &ms}
	w.Header().Set("Retry-After", "1")
	WriteJSON(w, http.StatusServiceUnavailable, errorReply(id, CodeConcurrencyLimited, msg, toolErrorJSON(e)))
}

// oneHeader returns the single value of a header, trimmed; false when the
// header is absent, repeated or holds a byte outside visible ASCII, space
// and tab (the only bytes an HTTP field value may carry: anything else
// travels in the base64 sentinel form).
func oneHeader(r *http.Request, name string) (string, bool) {
	vals := r.Header.Values(name)
	if len(vals) != 1 {
		return "", false
	}
	for i := 0; i < len(vals[0]); i++ {
		if c := vals[0][i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return strings.TrimSpace(vals[0]), true
}

// decodeHeaderValue decodes the `=?base64?...?=` sentinel of Mcp-Name (the
// markers exact and case-sensitive, standard padded base64 of UTF-8); any
// other value stands for itself.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// serveListen answers subscriptions/listen with an SSE stream that stays
// open: the acknowledgement, then the subscribed resources' updates, with
// keep-alive comments between. The client ends it by closing the stream;
// Shutdown ends it with the completion result.
func (t *HTTPTransport) serveListen(w http.ResponseWriter, r *http.Request, q *request) {
	notes := make(chan []byte, streamQueue)
	final := make(chan []byte, 1)
	s := newSession(t.srv, func(o outbound) {
		switch {
		case o.key == q.key:
			offer(final, o.b)
		case o.listen == q.key:
			if !offer(notes, o.b) {
				t.log.Debug().Msg("mcp http: listen stream behind, notification dropped")
			}
		}
	})
	t.mu.Lock()
	switch {
	case t.closed:
		t.mu.Unlock()
		shuttingDownHTTP(w, q.id)
		return
	case len(t.listens) >= t.maxListens:
		t.mu.Unlock()
		writeBusy(w, q.id, fmt.Sprintf("service busy: at most %d subscriptions/listen streams are open at once", t.maxListens))
		return
	}
	t.listens[s] = struct{}{}
	t.wg.Add(1)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.listens, s)
		t.mu.Unlock()
		t.wg.Done()
	}()

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives any server write timeout
	setSSEHeaders(w)
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s.dispatch.Lock()
	s.route(r.Context(), q)
	s.dispatch.Unlock()
	tick := time.NewTicker(listenKeepAlive)
	defer tick.Stop()
	gone := false
	for !gone {
		select {
		case b := <-notes:
			gone = writeEvent(w, b) != nil || rc.Flush() != nil
		case b := <-final:
			for drained := false; !drained; {
				select {
				case n := <-notes:
					_ = writeEvent(w, n)
				default:
					drained = true
				}
			}
			_ = writeEvent(w, b)
			_ = rc.Flush()
			s.calls.Wait()
			return
		case <-tick.C:
			_, err := w.Write([]byte(":\n\n"))
			gone = err != nil || rc.Flush() != nil
		case <-r.Context().Done():
			gone = true
		}
	}
	// The client closed the stream: that cancels the subscription.
	s.cancelRequest(q.id)
	s.stopReading()
	s.calls.Wait()
}
