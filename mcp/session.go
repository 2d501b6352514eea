package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
	"github.com/awbridge/awbridge/toolbus"
)

// maxLoggedName bounds client-chosen names (methods, tools) in log lines.
const maxLoggedName = 64

// maxListens bounds the subscriptions/listen streams open at once on one
// connection (each watches at most every resource).
const maxListens = 16

// outbound is one message for the peer.
type outbound struct {
	key    string // a reply: the idKey of its request (a batch's first); "" a notification
	listen string // the subscription a notification, or the subscription's end, belongs to
	about  string // the call a progress notification belongs to: dropped, not waited for, when the peer is behind
	b      []byte
	arr    *batch // on a stream, the batch whose array b is one reply of
	end    bool   // arr's array is complete (b nil)
}

// session is one connection's state, whatever the transport. The
// goroutine holding dispatch owns version; mu guards stopped, inflight,
// subs and listens.
type session struct {
	srv     *Server
	log     zerolog.Logger
	version string // negotiated legacy MCP version ("" none)

	sink   func(o outbound) // receives every outbound message; must not block for long
	budget *connBudget      // charges calls in flight an estimate of their reply (nil on HTTP)
	// arrays: the sink writes a batch's replies into an array it keeps
	// open (streams); else the batch sends its array once complete.
	arrays bool
	// pace, when set, waits for room in the byte budget before each line
	// and each batch element (false: the session stops).
	pace func(cur *batch) bool

	sem      chan struct{} // one token per call in flight
	stop     chan struct{} // closed when reading must stop
	stopOnce sync.Once

	dispatch sync.Mutex // held while one message is handled
	parked   bool       // under dispatch: the session ended, no message may be handled

	mu       sync.Mutex
	stopped  bool
	inflight map[string][]*call            // by idKey
	subs     map[string]context.CancelFunc // legacy resource subscriptions by uri
	listens  int                           // open subscriptions/listen
	calls    sync.WaitGroup                // calls, resource reads, watches and listens
}

// call is one Backend call (or listen) in flight.
type call struct {
	id        []byte // raw id, a copy
	key       string
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled; guarded by session.mu
	batch     *batch
	estimate  int           // bytes charged to the budget until the reply is queued
	progress  *progressSink // nil: no progress asked for
}

func newSession(srv *Server, sink func(outbound)) *session {
	return &session{
		srv:      srv,
		log:      srv.log,
		sink:     sink,
		sem:      make(chan struct{}, srv.maxInFlight),
		stop:     make(chan struct{}),
		inflight: map[string][]*call{},
		subs:     map[string]context.CancelFunc{},
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

// park waits until the reading goroutine is not handling a message and
// forbids it to handle another: every message read before has its reply
// queued or its call registered.
func (s *session) park() {
	s.dispatch.Lock()
	s.parked = true
	s.dispatch.Unlock()
}

// send hands one reply (for the request with key) to the sink.
func (s *session) send(key string, b []byte) { s.sink(outbound{key: key, b: b}) }

// readLoop reads and dispatches lines until the end of input or stop.
func (s *session) readLoop(callCtx context.Context, lr *lineReader) error {
	for {
		if s.pace != nil && !s.pace(nil) {
			return nil
		}
		line, tooLong, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) || s.isStopped() {
				return nil
			}
			return err
		}
		s.dispatch.Lock()
		if s.parked {
			s.dispatch.Unlock()
			return nil
		}
		if tooLong {
			s.refuse(idFromPrefix(line), CodeInvalidRequest, "request too large")
		} else {
			s.handleLine(callCtx, line)
		}
		s.dispatch.Unlock()
	}
}

func (s *session) protocolError(code int, reason string) {
	s.log.Warn().Int("code", code).Str("reason", reason).Msg("mcp: protocol error")
}

// refuse answers a message that is no usable request, under id when it
// has one (else null).
func (s *session) refuse(id []byte, code int, msg string) {
	s.protocolError(code, msg)
	key := ""
	if validID(id) {
		key = idKey(id)
	}
	s.send(key, errorReply(id, code, msg, nil))
}

// bom is a UTF-8 byte order mark, tolerated before a message.
var bom = []byte("\xef\xbb\xbf")

// handleLine decodes and dispatches one non-blank line.
func (s *session) handleLine(callCtx context.Context, line []byte) {
	line = bytes.TrimPrefix(line, bom)
	if msg := shapeError(line); msg != "" {
		s.refuse(idFromPrefix(line), CodeInvalidRequest, "invalid request: "+msg)
		return
	}
	switch firstByte(line) {
	case '{':
		if m, err := decodeMessage(line); err == nil {
			s.handleMessage(callCtx, m, nil)
			return
		}
	case '[':
		els, err := decodeArray(line)
		switch {
		case err != nil:
		case s.version != Version20250326:
			s.refuse(nil, CodeInvalidRequest, "invalid request: batches are only accepted in a 2025-03-26 session")
			return
		default:
			s.handleBatch(callCtx, decodeBatch(els))
			return
		}
	default:
		if json.Valid(line) {
			s.refuse(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object")
			return
		}
	}
	s.refuse(nil, CodeParseError, "parse error")
}

// firstByte is the first non-whitespace byte of b (0 for none).
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// decodeArray decodes a JSON array (the caller saw its '[') into its raw
// elements.
func decodeArray(b []byte) ([]json.RawMessage, error) {
	var els []json.RawMessage
	if json.Unmarshal(b, &els) != nil {
		return nil, errSyntax
	}
	return els, nil
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

// batch gathers the replies of one JSON-RPC batch, in any order. On a
// stream each reply goes to the writer as soon as it exists, inside an
// array the writer keeps open, and the last element to finish closes it,
// so no more than the byte budget is ever held; on HTTP the last element
// to finish sends the collected array.
type batch struct {
	s       *session
	key     string // idKey of the first request, for routing the array
	mu      sync.Mutex
	pending int      // elements in flight, +1 while the reader dispatches
	replies [][]byte // collected replies (not on a stream)
	sent    bool     // a reply went to the stream's writer
}

func (b *batch) hold() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// done1 adds a reply produced at once.
func (b *batch) done1(reply []byte) {
	b.hold()
	b.done(reply)
}

// done records one reply (nil: none) and releases one hold.
func (b *batch) done(reply []byte) {
	if b.s.arrays && reply != nil {
		// Queued before this hold is released: every reply reaches the
		// writer before the end of the array.
		b.s.sink(outbound{key: b.key, b: reply, arr: b})
	}
	b.mu.Lock()
	if reply != nil {
		b.sent = true
		if !b.s.arrays {
			b.replies = append(b.replies, reply)
		}
	}
	b.pending--
	last := b.pending == 0
	b.mu.Unlock()
	if !last || !b.sent {
		return
	}
	if b.s.arrays {
		b.s.sink(outbound{key: b.key, arr: b, end: true})
		return
	}
	b.s.send(b.key, append(append([]byte{'['}, bytes.Join(b.replies, []byte{','})...), ']'))
}

// decodeBatch decodes each element of a batch; nil stands for an element
// that is not an object.
func decodeBatch(els []json.RawMessage) []*message {
	msgs := make([]*message, len(els))
	for i, el := range els {
		if el[0] == '{' {
			m, _ := decodeMessage(el) // the array was valid JSON
			msgs[i] = &m
		}
	}
	return msgs
}

func (s *session) handleBatch(callCtx context.Context, msgs []*message) {
	if len(msgs) == 0 {
		s.refuse(nil, CodeInvalidRequest, "invalid request: empty batch")
		return
	}
	b := &batch{s: s, pending: 1}
	for _, m := range msgs {
		if m != nil && b.key == "" && m.hasID && !m.dupID && validID(m.id) {
			b.key = idKey(m.id)
		}
	}
	paced := true
	for i, m := range msgs {
		if i > 0 && paced && s.pace != nil {
			// Like separate lines: wait for room in the byte budget. Once
			// the session stops, the rest is answered without waiting.
			paced = s.pace(b)
		}
		if m == nil {
			s.protocolError(CodeInvalidRequest, "batch element not an object")
			b.done1(errorReply(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object", nil))
			continue
		}
		s.handleMessage(callCtx, *m, b)
	}
	b.done(nil)
}

// request is one request being dispatched: its raw id, the batch it
// belongs to, and its params decoded once.
type request struct {
	id     []byte
	key    string
	method string
	b      *batch
	params params
	meta   requestMeta
	direct bool            // a direct method
	args   json.RawMessage // a direct method's params
}

// replyTo sends an immediate reply to q, or adds it to q's batch.
func (s *session) replyTo(q *request, r []byte) {
	if q.b != nil {
		q.b.done1(r)
		return
	}
	s.send(q.key, r)
}

func (s *session) fail(q *request, code int, msg string, data []byte) {
	s.protocolError(code, msg)
	s.replyTo(q, errorReply(q.id, code, msg, data))
}

// parseRequest checks a request (a message with an id) and decodes its
// params once. A non-zero code is the error that answers it, under q.id
// (nil when the id itself is unusable).
func (srv *Server) parseRequest(m message) (q *request, code int, msg string) {
	if m.dupID || !validID(m.id) {
		return &request{}, CodeInvalidRequest, "invalid request: id must be a string or a number"
	}
	q = &request{id: m.id, key: idKey(m.id), method: m.method}
	switch {
	case m.dup:
		return q, CodeInvalidRequest, "invalid request: repeated member"
	case !m.jsonrpcOK:
		return q, CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`
	case !m.methodOK:
		return q, CodeInvalidRequest, "invalid request: method must be a string"
	}
	if m.params != nil && !isObject(m.params) {
		return q, CodeInvalidParams, "invalid params: params must be an object"
	}
	var meta json.RawMessage
	if _, direct := srv.direct[m.method]; direct && !mcpMethod(m.method) {
		// Direct methods are not MCP: their params are the arguments,
		// whatever era the caller speaks, but for _meta, which is
		// protocol metadata (its traceparent is the call's trace).
		q.direct = true
		if m.params != nil {
			q.args, meta = splitMeta(m.params)
		}
	} else if m.params != nil {
		q.params, _ = decodeParams(m.params) // an object of a valid message
		meta = q.params.meta
	}
	var err error
	if q.meta, err = decodeMeta(meta); err != nil {
		return q, CodeInvalidParams, "invalid params: " + err.Error()
	}
	return q, 0, ""
}

// handleMessage dispatches one decoded message (a line or a batch
// element).
func (s *session) handleMessage(callCtx context.Context, m message, b *batch) {
	if m.response {
		// The server sends no request that expects an answer: a client's
		// response answers nothing, and gets no reply.
		s.log.Debug().Msg("mcp: response from the client dropped")
		return
	}
	if !m.hasID {
		if m.dup || !m.jsonrpcOK || !m.methodOK {
			s.protocolError(CodeInvalidRequest, "invalid notification dropped")
			return
		}
		s.handleNotification(m.method, m.params)
		return
	}
	q, code, msg := s.srv.parseRequest(m)
	q.b = b
	if code != 0 {
		s.fail(q, code, msg, nil)
		return
	}
	s.route(callCtx, q)
}

// route dispatches a checked request: a direct method, a modern request
// or a legacy one.
func (s *session) route(callCtx context.Context, q *request) {
	if q.method != "tools/call" && s.log.Debug().Enabled() {
		s.log.Debug().Str("method", bounded(q.method)).Msg("mcp: request")
	}
	switch {
	case q.direct:
		s.startCall(callCtx, q, toolbus.Request{Direct: true, Name: q.method, Args: q.args, TraceParent: q.meta.traceParent}, s.version)
	case q.meta.modern():
		s.handleModern(callCtx, q)
	default:
		s.handleLegacy(callCtx, q)
	}
}

// handleLegacy answers a request of the initialize era (or of no era).
func (s *session) handleLegacy(callCtx context.Context, q *request) {
	switch q.method {
	case "initialize":
		if q.b != nil {
			s.fail(q, CodeInvalidRequest, "invalid request: initialize must not be batched", nil)
			return
		}
		s.initialize(q)
	case "ping", "notifications/initialized", "notifications/cancelled":
		if q.method == "notifications/cancelled" {
			s.cancelRequest(q.params.requestID)
		}
		s.replyTo(q, resultReply(q.id, []byte("{}")))
	case "tools/list":
		s.replyTo(q, resultReply(q.id, s.srv.toolsList(s.version)))
	case "resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe":
		s.handleResource(callCtx, q, "")
	case "prompts/list", "prompts/get":
		s.handlePrompt(q, "")
	case "tools/call":
		s.toolsCall(callCtx, q, s.version)
	default:
		s.fail(q, CodeMethodNotFound, "method not found", nil)
	}
}

// toolsCall starts a tools/call in version v.
func (s *session) toolsCall(callCtx context.Context, q *request, v string) {
	name, args, msg := q.params.toolCall()
	if msg != "" {
		s.fail(q, CodeInvalidParams, "invalid params: "+msg, nil)
		return
	}
	if s.log.Debug().Enabled() {
		s.log.Debug().Str("method", q.method).Str("tool", bounded(name)).Msg("mcp: request")
	}
	s.startCall(callCtx, q, toolbus.Request{Name: name, Args: args, TraceParent: q.meta.traceParent}, v)
}

// bounded cuts a client-chosen name (a method, a tool, a URI) for a log
// line or a message that echoes it.
func bounded(name string) string { return text.Head(name, maxLoggedName) }

// handleNotification acts on a message without id: never a reply.
func (s *session) handleNotification(method string, raw json.RawMessage) {
	switch method {
	case "notifications/cancelled":
		if isObject(raw) {
			if p, err := decodeParams(raw); err == nil {
				s.cancelRequest(p.requestID)
			}
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
func (s *session) initialize(q *request) {
	v := LatestVersion
	if pv := q.params.protocolVersion; pv != nil {
		want, ok := asString(pv)
		if !ok {
			s.fail(q, CodeInvalidParams, "invalid params: protocolVersion must be a string", nil)
			return
		}
		if _, known := s.srv.initResult[want]; known {
			v = want
		}
	}
	s.version = v
	s.log.Debug().Str("version", v).Msg("mcp: initialized")
	s.replyTo(q, resultReply(q.id, s.srv.initResult[v]))
}

// cancelRequest cancels every in-flight call (or listen) with the raw
// requestID; their replies are dropped.
func (s *session) cancelRequest(rid json.RawMessage) {
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

// shuttingDown is the outcome of a call read while the session was ending.
func shuttingDown() toolbus.Response {
	return toolbus.Response{Stage: toolbus.StageExecute, Err: &toolbus.ToolError{
		Kind: toolbus.SystemError, Code: toolbus.CodeCancelled, Retryable: true,
		Message: "the server is shutting down; the call did not run",
	}}
}

// startCall runs req on the Backend in its own goroutine once an in-flight
// slot is free (reading waits for it: backpressure). A call read while the
// session ends is answered at once (Cancelled), never dropped.
func (s *session) startCall(callCtx context.Context, q *request, req toolbus.Request, v string) {
	select {
	case s.sem <- struct{}{}:
	default:
		if !req.Direct && toolbus.NoWait(req.Args) {
			// The caller asked not to queue: answer ConcurrencyLimited now,
			// on the reading goroutine (the engine does not run the tool).
			req.Saturated = true
			s.replyTo(q, s.srv.renderOutcome(q.id, req.Direct, v, s.callBackend(callCtx, req)))
			return
		}
		if h := s.srv.hooks.readPaused; h != nil {
			h()
		}
		select {
		case s.sem <- struct{}{}:
		case <-s.stop:
			s.replyTo(q, s.srv.renderOutcome(q.id, req.Direct, v, shuttingDown()))
			return
		}
	}
	c := &call{id: bytes.Clone(q.id), key: q.key, batch: q.b}
	ctx, cancel := context.WithCancel(callCtx)
	c.cancel = cancel
	if c.progress = s.progressFor(ctx, q); c.progress != nil {
		req.Progress = c.progress.send
	}
	s.mu.Lock()
	if s.stopped || s.idInUse(q.key) {
		stopped := s.stopped
		s.mu.Unlock()
		cancel()
		<-s.sem
		if stopped {
			s.replyTo(q, s.srv.renderOutcome(q.id, req.Direct, v, shuttingDown()))
		} else {
			s.fail(q, CodeInvalidRequest, errIDInUse, nil)
		}
		return
	}
	s.inflight[c.key] = append(s.inflight[c.key], c)
	s.calls.Add(1)
	s.mu.Unlock()
	if q.b != nil {
		q.b.hold()
	}
	c.estimate = s.budget.estimate()
	s.budget.charge(c.estimate)
	go s.run(ctx, c, req, v)
}

// errIDInUse refuses a request whose id is that of a call or listen in
// flight on the connection: its replies could not be told apart.
const errIDInUse = "invalid request: id already in use by a request in flight"

// idInUse reports whether a call or listen with key is in flight and not
// cancelled (a cancelled one says nothing more under its id). Called
// with mu held.
func (s *session) idInUse(key string) bool {
	return slices.ContainsFunc(s.inflight[key], func(c *call) bool { return !c.cancelled })
}

// forget removes c from the calls in flight and reports whether the client
// cancelled it.
func (s *session) forget(c *call) (cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := slices.DeleteFunc(s.inflight[c.key], func(x *call) bool { return x == c })
	if len(list) == 0 {
		delete(s.inflight, c.key)
	} else {
		s.inflight[c.key] = list
	}
	return c.cancelled
}

// run is the goroutine of one call.
func (s *session) run(ctx context.Context, c *call, req toolbus.Request, v string) {
	defer s.calls.Done()
	out := s.callBackend(ctx, req)
	c.progress.stop() // before the reply: nothing about the call follows it
	c.cancel()
	reply := s.srv.renderOutcome(c.id, req.Direct, v, out)
	s.budget.replied(len(reply)) // only calls' replies say what calls weigh
	if s.forget(c) {
		reply = nil // the client said it no longer wants it
	}
	if c.batch != nil {
		c.batch.done(reply)
	} else if reply != nil {
		s.send(c.key, reply)
	}
	s.budget.release(c.estimate)
	<-s.sem // after the reply is queued: a paused reader resumes behind it
}

// callBackend calls the Backend, turning a panic into an internal error so
// one faulty call cannot take the connection (or the process) down.
func (s *session) callBackend(ctx context.Context, req toolbus.Request) (out toolbus.Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("panic_type", fmt.Sprintf("%T", p)).Str("name", bounded(req.Name)).Msg("mcp: backend call panicked")
			out = toolbus.Response{Stage: toolbus.StageExecute,
				Err: &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "internal error"}}
		}
	}()
	return s.srv.backend.Call(ctx, req)
}

// streamConn is a session over a byte stream: the writer goroutine owns
// the io.Writer and writes queued replies, one line each; queued and
// in-flight reply bytes are charged to the Server's byte budget.
type streamConn struct {
	s            *session
	out          chan outbound // messages for the writer
	finish       chan struct{} // closed by Serve: no producer is left
	writerExited chan struct{} // closed by the writer when it ends
	abandon      chan struct{} // closed by Serve when the drain grace ran out: queueing gives up
	werr         error         // the write error; read after writerExited
	budget       *connBudget
}

// outQueue is how many replies may wait for the writer (their bytes are
// bounded by the byte budget as well).
const outQueue = 128

func newStreamConn(srv *Server) *streamConn {
	c := &streamConn{
		out:          make(chan outbound, outQueue),
		finish:       make(chan struct{}),
		writerExited: make(chan struct{}),
		abandon:      make(chan struct{}),
	}
	c.budget = srv.budget.conn(srv.connBytes)
	c.s = newSession(srv, c.enqueue)
	c.s.budget = c.budget
	c.s.arrays = true
	return c
}

// enqueue queues one message for the writer; it drops it once the writer
// has ended.
func (c *streamConn) enqueue(o outbound) {
	c.budget.charge(len(o.b))
	if o.about != "" {
		// Progress: dropped when the writer is behind (a later one says
		// more), so that a tool's report never waits for the peer.
		select {
		case c.out <- o:
		default:
			c.budget.release(len(o.b))
		}
		return
	}
	select {
	case c.out <- o:
	case <-c.writerExited:
		c.budget.release(len(o.b))
	case <-c.abandon:
		// The peer stopped reading and the drain grace is over: this
		// reply is dropped, so its producer ends and Serve can return.
		c.budget.release(len(o.b))
	}
}

// lineWriter writes a stream's messages, one line each. A batch's replies
// go into an array it keeps open until the batch's end; what comes for
// anything else meanwhile is held (still charged) and written after it.
type lineWriter struct {
	c    *streamConn
	bw   *bufio.Writer
	open *batch     // the batch whose array is open on the wire
	held []outbound // messages waiting for open's array to close
}

// put writes o, or holds it while another batch's array is open.
func (lw *lineWriter) put(o outbound) error {
	if lw.open != nil && o.arr != lw.open {
		lw.held = append(lw.held, o)
		lw.c.budget.hold(len(o.b))
		return nil
	}
	defer lw.c.budget.release(len(o.b))
	switch {
	case o.arr == nil:
		if _, err := lw.bw.Write(o.b); err != nil {
			return err
		}
		return lw.bw.WriteByte('\n')
	case o.end:
		lw.open = nil
		lw.c.budget.opened(nil)
		_, err := lw.bw.WriteString("]\n")
		return err
	}
	sep := byte(',')
	if lw.open == nil {
		lw.open, sep = o.arr, '['
		lw.c.budget.opened(o.arr)
	}
	if err := lw.bw.WriteByte(sep); err != nil {
		return err
	}
	_, err := lw.bw.Write(o.b)
	return err
}

// write writes o, then what was held for an array that o closed.
func (lw *lineWriter) write(o outbound) error {
	if err := lw.put(o); err != nil {
		return err
	}
	for lw.open == nil && len(lw.held) > 0 {
		// Each pass writes what it can in order; an array opened in the
		// pass holds the rest again, and closes in a later pass or from
		// the queue. A pass writes at least its first message.
		queue := lw.held
		lw.held = nil
		for _, h := range queue {
			lw.c.budget.unhold(len(h.b))
			if err := lw.put(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// drop releases what is held or queued once writing has failed.
func (lw *lineWriter) drop() {
	for _, h := range lw.held {
		lw.c.budget.unhold(len(h.b))
		lw.c.budget.release(len(h.b))
	}
	lw.held = nil
	for {
		select {
		case o := <-lw.c.out:
			lw.c.budget.release(len(o.b))
		default:
			return
		}
	}
}

// writeLoop owns w: it writes queued messages and flushes whenever the
// queue is empty. A write error ends it (and the session).
func (c *streamConn) writeLoop(w io.Writer) {
	defer close(c.writerExited)
	lw := &lineWriter{c: c, bw: bufio.NewWriterSize(w, 32<<10)}
	var err error
	for finishing := false; err == nil && !finishing; {
		select {
		case o := <-c.out:
			err = lw.write(o)
		case <-c.finish:
			finishing = true
		}
		for queued := true; err == nil && queued; {
			select {
			case o := <-c.out:
				err = lw.write(o)
			default:
				queued = false
			}
		}
		if err == nil {
			err = lw.bw.Flush()
		}
	}
	if err != nil {
		c.werr = err
		c.s.log.Debug().Err(err).Msg("mcp: write failed, ending session")
		c.s.stopReading()
		lw.drop()
	}
}
