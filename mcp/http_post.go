package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

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
	els := []json.RawMessage{body}
	switch firstByte(body) {
	case '{':
	case '[':
		var err error
		if els, err = decodeArray(body); err != nil {
			return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
		}
		p.batch = true
		if len(els) == 0 {
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: empty batch")
		}
	default:
		if json.Valid(body) {
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: a message must be a JSON object")
		}
		return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
	}
	responses := 0
	seen := map[string]bool{}
	for _, el := range els {
		if firstByte(el) != '{' {
			return post{}, badPost(http.StatusBadRequest, CodeInvalidRequest, nil, "invalid request: a message must be a JSON object")
		}
		m, err := decodeMessage(el)
		if err != nil {
			return post{}, badPost(http.StatusBadRequest, CodeParseError, nil, "parse error")
		}
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
		var msg string
		if s, msg = t.newSession(); s == nil {
			w.Header().Set("Retry-After", "5")
			WriteJSON(w, http.StatusServiceUnavailable, errorReply(p.firstID, CodeInvalidRequest, msg, nil))
			return
		}
		created = true
	} else {
		if s = t.sessionFor(w, r, p.firstID); s == nil {
			return
		}
		if !init && !protocolVersionOK(r) {
			WriteJSON(w, http.StatusBadRequest, errorReply(p.firstID, CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version", nil))
			return
		}
		if p.batch && s.negotiated() != Version20250326 {
			WriteJSON(w, http.StatusBadRequest, errorReply(nil, CodeInvalidRequest, "invalid request: batches are only accepted in a 2025-03-26 session", nil))
			return
		}
	}
	s.begin()
	defer s.finish()
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
	_, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
	return err
}
