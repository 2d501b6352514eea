package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/toolbus"
)

// outQueue is how many replies may wait for the writer.
const outQueue = 128

// maxLoggedName bounds client-chosen names (methods, tools) in log lines.
const maxLoggedName = 64

// session is one connection's state. The reading goroutine owns version and
// the line reader; mu guards stopped and inflight; the writer goroutine owns
// the io.Writer.
type session struct {
	srv *Server
	log zerolog.Logger

	version string // negotiated MCP version; reading goroutine only

	out          chan []byte   // replies for the writer, without '\n'
	finish       chan struct{} // closed by Serve: no producer is left
	writerExited chan struct{} // closed by the writer when it ends
	werr         error         // the write error; read after writerExited

	sem      chan struct{} // one token per call in flight
	stop     chan struct{} // closed when reading must stop
	stopOnce sync.Once

	mu       sync.Mutex
	stopped  bool
	inflight map[string][]*call            // by idKey
	subs     map[string]context.CancelFunc // resource subscriptions by uri
	calls    sync.WaitGroup                // calls, resource reads and watches
}

// call is one Backend call in flight.
type call struct {
	id        []byte // raw id, a copy
	key       string
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled; guarded by session.mu
	batch     *batch
}

func newSession(srv *Server) *session {
	return &session{
		srv:          srv,
		log:          srv.log,
		out:          make(chan []byte, outQueue),
		finish:       make(chan struct{}),
		writerExited: make(chan struct{}),
		sem:          make(chan struct{}, srv.maxInFlight),
		stop:         make(chan struct{}),
		inflight:     map[string][]*call{},
		subs:         map[string]context.CancelFunc{},
	}
}

// stopReading makes the reader stop and forbids new calls. Idempotent.
func (s *session) stopReading() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.stopOnce.Do(func() { close(s.stop) })
}

func (s *session) isStopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// send queues one reply line for the writer; it drops it once the writer
// has ended.
func (s *session) send(b []byte) {
	select {
	case s.out <- b:
	case <-s.writerExited:
	}
}

// writeLoop owns w: it writes queued replies, one line each, and flushes
// whenever the queue is empty. A write error ends it (and the session).
func (s *session) writeLoop(w io.Writer) {
	defer close(s.writerExited)
	bw := bufio.NewWriterSize(w, 32<<10)
	write := func(b []byte) bool {
		if _, err := bw.Write(b); err != nil {
			s.werr = err
			return false
		}
		if err := bw.WriteByte('\n'); err != nil {
			s.werr = err
			return false
		}
		return true
	}
	fail := func() {
		s.log.Debug().Err(s.werr).Msg("mcp: write failed, ending session")
		s.stopReading()
	}
	for {
		var b []byte
		finishing := false
		select {
		case b = <-s.out:
		case <-s.finish:
			finishing = true
		}
		if b != nil && !write(b) {
			fail()
			return
		}
	drain:
		for {
			select {
			case b = <-s.out:
				if !write(b) {
					fail()
					return
				}
			default:
				break drain
			}
		}
		if err := bw.Flush(); err != nil {
			s.werr = err
			fail()
			return
		}
		if finishing {
			return
		}
	}
}

// readLoop reads and dispatches lines until the end of input or stop.
func (s *session) readLoop(callCtx context.Context, lr *lineReader) error {
	for {
		line, tooLong, err := lr.next()
		if s.isStopped() {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if tooLong {
			s.protocolError(CodeInvalidRequest, "request too large")
			s.send(errorReply(idFromPrefix(line), CodeInvalidRequest, "request too large", nil))
			continue
		}
		s.handleLine(callCtx, line)
	}
}

func (s *session) protocolError(code int, reason string) {
	s.log.Warn().Int("code", code).Str("reason", reason).Msg("mcp: protocol error")
}

// handleLine dispatches one non-blank line.
func (s *session) handleLine(callCtx context.Context, line []byte) {
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 BOM
	if msg := shapeError(line); msg != "" {
		s.protocolError(CodeInvalidRequest, msg)
		s.send(errorReply(idFromPrefix(line), CodeInvalidRequest, "invalid request: "+msg, nil))
		return
	}
	if !json.Valid(line) {
		s.protocolError(CodeParseError, "parse error")
		s.send(errorReply(nil, CodeParseError, "parse error", nil))
		return
	}
	i := skipWS(line, 0)
	switch line[i] {
	case '{':
		s.handleMessage(callCtx, line[i:], nil)
	case '[':
		if s.version != Version20250326 {
			s.protocolError(CodeInvalidRequest, "batch outside a 2025-03-26 session")
			s.send(errorReply(nil, CodeInvalidRequest, "invalid request: batches are only accepted in a 2025-03-26 session", nil))
			return
		}
		s.handleBatch(callCtx, line[i:])
	default:
		s.protocolError(CodeInvalidRequest, "not an object")
		s.send(errorReply(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object", nil))
	}
}

// batch collects the replies of one JSON-RPC batch; the last element to
// finish sends the array. Replies may come in any order (JSON-RPC allows it).
type batch struct {
	s       *session
	mu      sync.Mutex
	pending int // elements in flight, +1 while the reader dispatches
	replies [][]byte
}

func (b *batch) hold() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// done records one reply (nil: none) and releases one hold.
func (b *batch) done(reply []byte) {
	b.mu.Lock()
	if reply != nil {
		b.replies = append(b.replies, reply)
	}
	b.pending--
	last := b.pending == 0
	b.mu.Unlock()
	if !last || len(b.replies) == 0 {
		return
	}
	n := 2
	for _, r := range b.replies {
		n += len(r) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, r := range b.replies {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	b.s.send(append(out, ']'))
}

func (s *session) handleBatch(callCtx context.Context, arr []byte) {
	b := &batch{s: s, pending: 1}
	n := 0
	forEachElement(arr, func(el []byte) {
		n++
		if el[0] != '{' {
			s.protocolError(CodeInvalidRequest, "batch element not an object")
			b.done1(errorReply(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object", nil))
			return
		}
		s.handleMessage(callCtx, el, b)
	})
	if n == 0 {
		s.protocolError(CodeInvalidRequest, "empty batch")
		s.send(errorReply(nil, CodeInvalidRequest, "invalid request: empty batch", nil))
		return
	}
	b.done(nil)
}

// done1 adds a reply produced at once.
func (b *batch) done1(reply []byte) {
	b.mu.Lock()
	b.replies = append(b.replies, reply)
	b.mu.Unlock()
}

// reply sends an immediate reply, or adds it to the batch.
func (s *session) reply(b *batch, r []byte) {
	if b != nil {
		b.done1(r)
		return
	}
	s.send(r)
}

// message is the top level of one request, as raw tokens.
type message struct {
	id, jsonrpc, method, params []byte
	hasID, hasJSONRPC           bool
	hasMethod, hasParams        bool
	dupID, dup                  bool
}

func parseMessage(obj []byte) (m message) {
	forEachMember(obj, func(key, val []byte) bool {
		switch {
		case tokenIs(key, "id"):
			m.dupID = m.dupID || m.hasID
			m.hasID, m.id = true, val
		case tokenIs(key, "jsonrpc"):
			m.dup = m.dup || m.hasJSONRPC
			m.hasJSONRPC, m.jsonrpc = true, val
		case tokenIs(key, "method"):
			m.dup = m.dup || m.hasMethod
			m.hasMethod, m.method = true, val
		case tokenIs(key, "params"):
			m.dup = m.dup || m.hasParams
			m.hasParams, m.params = true, val
		}
		return true
	})
	if m.hasParams && string(m.params) == "null" {
		m.hasParams, m.params = false, nil
	}
	return m
}

// validID reports whether a raw id is a string or a number.
func validID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// idKey is the identity of an id for cancellation: strings by their decoded
// value, numbers by their exact text (so 1 and 1.0 are different ids).
func idKey(id []byte) string {
	if id[0] == '"' {
		s, _ := decodeString(id)
		return "s" + s
	}
	return "n" + string(id)
}

// handleMessage dispatches one message object (a line, or a batch element).
func (s *session) handleMessage(callCtx context.Context, obj []byte, b *batch) {
	m := parseMessage(obj)
	versionOK := m.hasJSONRPC && tokenIs(m.jsonrpc, "2.0")
	var method string
	methodOK := false
	if m.hasMethod && len(m.method) > 0 && m.method[0] == '"' {
		method, methodOK = decodeString(m.method)
	}

	if !m.hasID {
		if m.dup || !versionOK || !methodOK {
			s.protocolError(CodeInvalidRequest, "invalid notification dropped")
			return
		}
		s.handleNotification(method, m.params)
		return
	}
	if m.dupID || !validID(m.id) {
		s.protocolError(CodeInvalidRequest, "invalid id")
		s.reply(b, errorReply(nil, CodeInvalidRequest, "invalid request: id must be a string or a number", nil))
		return
	}
	id := m.id
	switch {
	case m.dup:
		s.protocolError(CodeInvalidRequest, "repeated member")
		s.reply(b, errorReply(id, CodeInvalidRequest, "invalid request: repeated member", nil))
		return
	case !versionOK:
		s.protocolError(CodeInvalidRequest, "bad jsonrpc member")
		s.reply(b, errorReply(id, CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`, nil))
		return
	case !methodOK:
		s.protocolError(CodeInvalidRequest, "bad method member")
		s.reply(b, errorReply(id, CodeInvalidRequest, "invalid request: method must be a string", nil))
		return
	}
	if method != "tools/call" && s.log.Debug().Enabled() {
		s.log.Debug().Str("method", bounded(method)).Msg("mcp: request")
	}

	paramsOK := !m.hasParams || m.params[0] == '{'
	badParams := func() {
		s.protocolError(CodeInvalidParams, "params not an object")
		s.reply(b, errorReply(id, CodeInvalidParams, "invalid params: params must be an object", nil))
	}
	switch method {
	case "initialize":
		if b != nil {
			s.protocolError(CodeInvalidRequest, "batched initialize")
			s.reply(b, errorReply(id, CodeInvalidRequest, "invalid request: initialize must not be batched", nil))
			return
		}
		if !paramsOK {
			badParams()
			return
		}
		s.initialize(id, m.params)
	case "ping", "notifications/initialized", "notifications/cancelled":
		if !paramsOK {
			badParams()
			return
		}
		if method == "notifications/cancelled" {
			s.cancelRequest(m.params)
		}
		s.reply(b, resultReply(id, []byte("{}")))
	case "tools/list":
		if !paramsOK {
			badParams()
			return
		}
		list := s.srv.backend.ToolsList(s.version)
		if len(list) == 0 {
			list = []byte(`{"tools":[]}`)
		}
		s.reply(b, resultReply(id, list))
	case "resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe":
		if !paramsOK {
			badParams()
			return
		}
		s.handleResource(callCtx, method, id, m.params, b)
	case "tools/call":
		if !paramsOK {
			badParams()
			return
		}
		name, args, msg := toolCallParams(m.params)
		if msg != "" {
			s.protocolError(CodeInvalidParams, "bad tools/call params")
			s.reply(b, errorReply(id, CodeInvalidParams, "invalid params: "+msg, nil))
			return
		}
		if s.log.Debug().Enabled() {
			s.log.Debug().Str("method", method).Str("tool", bounded(name)).Msg("mcp: request")
		}
		s.startCall(callCtx, b, id, toolbus.Request{Name: name, Args: args}, s.version)
	default:
		if _, ok := s.srv.direct[method]; !ok {
			s.protocolError(CodeMethodNotFound, "method not found")
			s.reply(b, errorReply(id, CodeMethodNotFound, "method not found", nil))
			return
		}
		if !paramsOK {
			badParams()
			return
		}
		var args json.RawMessage
		if m.hasParams {
			args = bytes.Clone(m.params)
		}
		s.startCall(callCtx, b, id, toolbus.Request{Direct: true, Name: method, Args: args}, s.version)
	}
}

func bounded(name string) string {
	if len(name) > maxLoggedName {
		return name[:maxLoggedName]
	}
	return name
}

// handleNotification acts on a message without id: never a reply.
func (s *session) handleNotification(method string, params []byte) {
	switch method {
	case "notifications/cancelled":
		if params != nil && params[0] == '{' {
			s.cancelRequest(params)
		}
	case "notifications/initialized":
	default:
		// Unknown notifications/* are ignored; calls sent as notifications
		// are not executed (nobody would see their result).
		s.log.Debug().Str("method", bounded(method)).Msg("mcp: notification ignored")
		return
	}
	s.log.Debug().Str("method", method).Msg("mcp: notification")
}

// initialize negotiates the version. Runs on the reading goroutine.
func (s *session) initialize(id, params []byte) {
	v := LatestVersion
	if params != nil {
		var pv []byte
		forEachMember(params, func(key, val []byte) bool {
			if tokenIs(key, "protocolVersion") {
				pv = val
			}
			return true
		})
		if pv != nil {
			if pv[0] != '"' {
				s.protocolError(CodeInvalidParams, "protocolVersion not a string")
				s.send(errorReply(id, CodeInvalidParams, "invalid params: protocolVersion must be a string", nil))
				return
			}
			if want, ok := decodeString(pv); ok {
				if _, known := s.srv.initResult[want]; known {
					v = want
				}
			}
		}
	}
	s.version = v
	s.log.Debug().Str("version", v).Msg("mcp: initialized")
	s.send(resultReply(id, s.srv.initResult[v]))
}

// toolCallParams extracts name and arguments from tools/call params (an
// object or nil). msg is non-empty when they are unusable.
func toolCallParams(params []byte) (name string, args json.RawMessage, msg string) {
	if params == nil {
		return "", nil, "name is required"
	}
	var rawName, rawArgs []byte
	dup := false
	forEachMember(params, func(key, val []byte) bool {
		switch {
		case tokenIs(key, "name"):
			dup = dup || rawName != nil
			rawName = val
		case tokenIs(key, "arguments"):
			dup = dup || rawArgs != nil
			rawArgs = val
		}
		return true
	})
	switch {
	case dup:
		return "", nil, "repeated name or arguments"
	case rawName == nil:
		return "", nil, "name is required"
	case rawName[0] != '"':
		return "", nil, "name must be a string"
	}
	name, ok := decodeString(rawName)
	if !ok {
		return "", nil, "name must be a string"
	}
	if rawArgs != nil && string(rawArgs) != "null" {
		if rawArgs[0] != '{' {
			return "", nil, "arguments must be an object"
		}
		args = bytes.Clone(rawArgs)
	}
	return name, args, ""
}

// cancelRequest handles notifications/cancelled params: every in-flight call
// with that requestId is cancelled and its reply dropped.
func (s *session) cancelRequest(params []byte) {
	var rid []byte
	forEachMember(params, func(key, val []byte) bool {
		if tokenIs(key, "requestId") {
			rid = val
		}
		return true
	})
	if !validID(rid) {
		return
	}
	key := idKey(rid)
	s.mu.Lock()
	n := 0
	for _, c := range s.inflight[key] {
		if !c.cancelled {
			c.cancelled = true
			c.cancel()
			n++
		}
	}
	s.mu.Unlock()
	s.log.Debug().Int("calls", n).Msg("mcp: cancelled by client")
}

// startCall runs req on the Backend in its own goroutine once an in-flight
// slot is free (reading waits for it: backpressure). Runs on the reading
// goroutine.
func (s *session) startCall(callCtx context.Context, b *batch, id []byte, req toolbus.Request, v string) {
	select {
	case s.sem <- struct{}{}:
	default:
		if !req.Direct && toolbus.NoWait(req.Args) {
			// The caller asked not to queue: answer ConcurrencyLimited now,
			// on the reading goroutine (the engine does not run the tool).
			req.Saturated = true
			reply := s.srv.renderOutcome(id, req.Direct, v, s.callBackend(callCtx, req))
			if b != nil {
				b.hold()
				b.done(reply)
			} else {
				s.send(reply)
			}
			return
		}
		if h := s.srv.hooks.readPaused; h != nil {
			h()
		}
		select {
		case s.sem <- struct{}{}:
		case <-s.stop:
			return
		}
	}
	c := &call{id: bytes.Clone(id), batch: b}
	c.key = idKey(c.id)
	ctx, cancel := context.WithCancel(callCtx)
	c.cancel = cancel
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		cancel()
		<-s.sem
		return
	}
	s.inflight[c.key] = append(s.inflight[c.key], c)
	s.calls.Add(1)
	s.mu.Unlock()
	if b != nil {
		b.hold()
	}
	go s.run(ctx, c, req, v)
}

// run is the goroutine of one call.
func (s *session) run(ctx context.Context, c *call, req toolbus.Request, v string) {
	defer s.calls.Done()
	out := s.callBackend(ctx, req)
	c.cancel()
	reply := s.srv.renderOutcome(c.id, req.Direct, v, out)

	s.mu.Lock()
	list := s.inflight[c.key]
	for i, x := range list {
		if x == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.inflight, c.key)
	} else {
		s.inflight[c.key] = list
	}
	cancelled := c.cancelled
	s.mu.Unlock()
	if cancelled {
		reply = nil // the client said it no longer wants it
	}
	if c.batch != nil {
		c.batch.done(reply)
	} else if reply != nil {
		s.send(reply)
	}
	<-s.sem // after the reply is queued: a paused reader resumes behind it
}

// callBackend calls the Backend, turning a panic into an internal error so
// one faulty call cannot take the connection (or the process) down.
func (s *session) callBackend(ctx context.Context, req toolbus.Request) (out toolbus.Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("panic_type", fmt.Sprintf("%T", p)).Str("name", bounded(req.Name)).Msg("mcp: backend call panicked")
			out = toolbus.Response{Err: internalError(), Stage: toolbus.StageExecute}
		}
	}()
	return s.srv.backend.Call(ctx, req)
}

// shapeError says why a message is over MaxMessageDepth or
// MaxMessageItems, or "" when it is within them.
func shapeError(b []byte) string {
	depth, items := jsonw.Shape(b, MaxMessageDepth)
	switch {
	case depth > MaxMessageDepth:
		return fmt.Sprintf("the message nests deeper than %d levels", MaxMessageDepth)
	case items > MaxMessageItems:
		return fmt.Sprintf("the message has more than %d members and elements", MaxMessageItems)
	}
	return ""
}

// idFromPrefix finds the id of an over-long line among its first bytes: a
// top-level "id" member whose string or number value is complete there.
// Members before it are skipped without validation. It returns nil when
// there is none, or it cannot tell.
func idFromPrefix(p []byte) []byte {
	i := skipWS(p, 0)
	if i >= len(p) || p[i] != '{' {
		return nil
	}
	i = skipWS(p, i+1)
	for i < len(p) && p[i] == '"' {
		k := scanString(p, i)
		if k < 0 {
			return nil
		}
		key := p[i:k]
		i = skipWS(p, k)
		if i >= len(p) || p[i] != ':' {
			return nil
		}
		i = skipWS(p, i+1)
		v := scanValue(p, i)
		if v < 0 || v >= len(p) { // a value at the very end may continue
			return nil
		}
		if tokenIs(key, "id") {
			tok := p[i:v]
			if validID(tok) && json.Valid(tok) {
				return tok
			}
			return nil
		}
		i = skipWS(p, v)
		if i >= len(p) || p[i] != ',' {
			return nil
		}
		i = skipWS(p, i+1)
	}
	return nil
}
