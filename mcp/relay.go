package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// RelayOptions configures Relay. The zero value gives the defaults.
type RelayOptions struct {
	// MaxLineBytes bounds one client line as Options.MaxLineBytes does: a
	// longer line is answered here with one -32600 error, never forwarded.
	MaxLineBytes int
	// ServerName and ServerVersion name the server in the completion
	// result that ends a modern subscription at a failover.
	ServerName, ServerVersion string
	// Fallback serves an in-process engine on (r, w) until r ends. nil:
	// no failover (every later call gets the retryable error).
	Fallback func(ctx context.Context, r io.Reader, w io.Writer) error
	// FirstReply bounds the wait for the service's answer to the relay's
	// own ping, sent as the session starts (default 5 s): a service that
	// accepts and never answers is dropped and the session fails over.
	// Once the service has said anything it is alive, and its calls are
	// bounded by their own deadlines (a first call may read a year).
	FirstReply time.Duration
}

// Bounds of a relay session.
const (
	// The calls the service owes (their ids only): beyond either bound,
	// the relay stops reading the client until replies come in.
	maxRelayPending      = 4096
	maxRelayPendingBytes = 1 << 20
	// One line from the service; a longer one is not passed on: its call
	// is answered here with -32603.
	maxRelayReplyBytes = 64 << 20
	// The legacy resource subscriptions remembered for a replay, and the
	// length of each URI.
	maxRelaySubs   = 64
	maxRelaySubURI = 1 << 10
)

// Ids of the relay's own requests, whose replies are swallowed: the ping
// that learns whether the service answers, and the requests replayed to
// the in-process engine at a failover.
const (
	relayProbeID  = `"awbridge-relay-probe"`
	relayReplayID = `"awbridge-relay-replay"`
)

// serviceGoneReply answers a call the service owed when it went away.
func serviceGoneReply(id []byte) []byte {
	return errorReply(id, CodeServerError, "the awbridge service went away before answering; retry",
		[]byte(`{"kind":"ExecutionError","code":"ServiceUnavailable","retryable":true,`+
			`"message":"the awbridge service went away before answering","retry_after_ms":100}`))
}

// Relay relays a stdio client (in, out) to the awbridge service behind
// conn, line by line, until in ends. It decodes each client line once, to
// know which calls the service owes (their ids only) and what a
// replacement must be told.
//
// When the service goes away mid-session (or has not answered the relay's
// ping within opts.FirstReply), every call it owed is answered at once,
// exactly once: with a retryable -32000 ServiceUnavailable error, or, for
// a modern subscriptions/listen, with its completion result. The session
// then goes on with opts.Fallback, to which the legacy session's last
// initialize and its resources/subscribe are replayed, their replies
// swallowed; modern requests are stateless.
//
// When ctx is cancelled (SIGTERM) the relay stops reading the client and
// drops the service connection: the calls it owed get the retryable error,
// and no fallback starts. It returns the fallback's error, if one ran.
func Relay(ctx context.Context, conn net.Conn, in io.Reader, out io.Writer, opts RelayOptions) error {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.FirstReply <= 0 {
		opts.FirstReply = 5 * time.Second
	}
	r := &relay{
		ctx: ctx, conn: conn, opts: opts, info: newServerInfo(opts.ServerName, opts.ServerVersion),
		out:     &lineOut{w: bufio.NewWriterSize(out, 64<<10)},
		pending: map[string]*owed{}, subs: map[string]bool{},
		failed: make(chan struct{}),
	}
	r.room = sync.NewCond(&r.mu)

	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.stopping = true
		r.room.Broadcast()
		r.mu.Unlock()
		setDeadline(in, "read")
		conn.Close()
	})
	defer stop()

	// Ask the service whether it answers, before any client line: the
	// wait is the service's, never a slow first call's. Silence drops it
	// as if it went away: the pump answers what it owed and fails over.
	r.probeDue.Store(true)
	r.silence = time.AfterFunc(opts.FirstReply, func() {
		if !r.heard.Load() {
			conn.Close()
		}
	})
	defer r.silence.Stop()
	_, _ = conn.Write([]byte(`{"jsonrpc":"2.0","id":` + relayProbeID + `,"method":"ping"}` + "\n")) // a failure shows in the pump
	r.wg.Go(func() { r.pumpService() })
	r.readClient(in)

	// The client's input ended (or SIGTERM): let the service, or the
	// engine, answer what is in flight.
	r.mu.Lock()
	r.closing = true
	fbIn := r.fbIn
	r.mu.Unlock()
	switch {
	case fbIn != nil:
		fbIn.Close()
	case ctx.Err() != nil:
		conn.Close()
	default:
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			conn.Close()
		}
	}
	r.wg.Wait()
	conn.Close()
	return r.fbErr
}

// relay is one relayed session.
type relay struct {
	ctx    context.Context
	conn   net.Conn
	opts   RelayOptions
	info   serverInfo
	out    *lineOut
	wg     sync.WaitGroup
	failed chan struct{} // closed once the service's owed calls are answered and the fallback told the session

	mu           sync.Mutex
	room         *sync.Cond       // signalled when pending shrinks, or the relay fails or stops
	pending      map[string]*owed // calls the service owes, by idKey
	pendingBytes int              // bytes of their ids and keys
	gone         bool             // the service is gone; what it owed is answered
	closing      bool             // the client's input ended
	stopping     bool             // ctx was cancelled
	version      string           // the legacy version the service negotiated ("" none)
	subs         map[string]bool  // legacy resource subscriptions
	fbIn         *io.PipeWriter   // the fallback's input, once it runs
	replays      int              // replayed requests whose replies are still to drop; under mu
	fbErr        error            // the fallback's error; read after wg.Wait
	buf          []byte           // the line being forwarded, with its '\n'
	// writing is the idKey of the single call being written to the
	// service ("" none); if the service goes away meanwhile, its failure
	// leaves that call to the writer (left), which knows whether the line
	// reached the service at all.
	writing  string
	left     *owed
	heard    atomic.Bool // the service said something: it is alive
	silence  *time.Timer // drops a service that does not answer the relay's ping
	probeDue atomic.Bool // the reply to the relay's ping is still to swallow
}

// owed is a call the service owes: its raw id (n times, for a client that
// reused an id) and whether it is a modern subscriptions/listen.
type owed struct {
	id     []byte
	n      int
	listen bool
}

// owedReply answers o once the service is gone: a listen with its
// completion result (the server ended it), a call with a retryable error.
func (r *relay) owedReply(o *owed) []byte {
	if o.listen {
		return listenEnded(o.id, r.info)
	}
	return serviceGoneReply(o.id)
}

// lineOut writes whole lines to the client; safe for concurrent use. A
// write error sticks in the bufio.Writer: later lines are dropped (the
// client is gone).
type lineOut struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *lineOut) line(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = o.w.Write(b)
	_ = o.w.WriteByte('\n')
	_ = o.w.Flush()
}

// readClient reads the client's lines until its input ends or ctx is done.
func (r *relay) readClient(in io.Reader) {
	lr := newLineReader(in, r.opts.MaxLineBytes)
	for {
		if !r.waitRoom() {
			return
		}
		line, tooLong, err := lr.next()
		if err != nil || r.ctx.Err() != nil {
			return
		}
		if tooLong {
			// The core's own answer, given here: the line is never
			// forwarded in pieces.
			id := idFromPrefix(line)
			r.out.line(errorReply(id, CodeInvalidRequest, "request too large", nil))
			continue
		}
		line = bytes.TrimPrefix(line, bom)
		if msg := shapeError(line); msg != "" {
			id := idFromPrefix(line)
			r.out.line(errorReply(id, CodeInvalidRequest, "invalid request: "+msg, nil))
			continue
		}
		if !r.forward(line) {
			return
		}
	}
}

// waitRoom waits while the service owes too many calls (backpressure). It
// reports false when the relay stops.
func (r *relay) waitRoom() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.gone && !r.stopping && (len(r.pending) >= maxRelayPending || r.pendingBytes >= maxRelayPendingBytes) {
		r.room.Wait()
	}
	return !r.stopping
}

// forward sends one client line to the service, or to the fallback once
// the service is gone. It reports false when nothing more can be sent.
func (r *relay) forward(line []byte) bool {
	if cap(r.buf) > 2*minReadBuffer && len(line) < cap(r.buf)/4 {
		r.buf = nil // do not keep a huge buffer for small lines
	}
	r.buf = append(append(r.buf[:0], line...), '\n')
	r.mu.Lock()
	if r.gone {
		r.mu.Unlock()
		return r.toFallback()
	}
	tracked := r.track(line)
	r.mu.Unlock()
	_, err := r.conn.Write(r.buf)
	if err != nil {
		if r.ctx.Err() != nil {
			return false
		}
		// The service went away: wait until its failure has answered what
		// it owed. It leaves this call, if a single one, to us: it never
		// reached the service.
		<-r.failed
	}
	r.mu.Lock()
	left := r.left
	r.writing, r.left = "", nil
	r.mu.Unlock()
	switch {
	case err == nil && left != nil:
		// Written, but the service's connection had already ended:
		// nobody will answer it but us.
		r.out.line(r.owedReply(left))
		return true
	case err == nil || (tracked && left == nil):
		return true
	}
	// Never reached the service: the fallback answers it, as it does a
	// notification or a message without a usable id.
	return r.toFallback()
}

// toFallback writes r.buf to the fallback. It reports false when there is
// none, or it ended.
func (r *relay) toFallback() bool {
	<-r.failed // the replay goes first
	r.mu.Lock()
	fb := r.fbIn
	r.mu.Unlock()
	if fb == nil {
		// No fallback: answer a call here, so that it is not left waiting.
		if id, ok := requestID(r.buf); ok {
			r.out.line(serviceGoneReply(id))
		}
		return true
	}
	_, err := fb.Write(r.buf)
	return err == nil
}

// requestID is the id of a line that is a request with a usable id.
func requestID(line []byte) ([]byte, bool) {
	if firstByte(line) != '{' {
		return nil, false
	}
	m, err := decodeMessage(bytes.TrimSpace(line))
	if err != nil || !m.request() {
		return nil, false
	}
	return m.id, true
}

// track notes what the service will owe for line, and what a replacement
// must be told (the legacy version, the resource subscriptions). It reports
// whether the line holds a call the service owes. Called with mu held.
func (r *relay) track(line []byte) bool {
	switch firstByte(line) {
	case '{':
		m, err := decodeMessage(line)
		if err == nil {
			r.forgetCancelled(m)
		}
		if err != nil || !m.request() {
			return false // no reply (a response gets none), or one with id null
		}
		r.note(m)
		r.owe(m.id, m.method == "subscriptions/listen" && modernRequest(m))
		r.writing = idKey(m.id)
		return true
	case '[':
		// A batch is answered element by element only in a 2025-03-26
		// session; otherwise the service refuses it whole, with id null.
		if r.version != Version20250326 {
			return false
		}
		els, err := decodeArray(line)
		if err != nil {
			return false
		}
		tracked := false
		for _, m := range decodeBatch(els) {
			if m != nil {
				r.forgetCancelled(*m)
			}
			if m != nil && m.request() {
				r.owe(m.id, false)
				tracked = true
			}
		}
		return tracked
	}
	return false
}

// owe records a call the service owes.
func (r *relay) owe(id []byte, listen bool) {
	key := idKey(id)
	if o := r.pending[key]; o != nil {
		o.n++
		return
	}
	r.pending[key] = &owed{id: bytes.Clone(id), n: 1, listen: listen}
	r.pendingBytes += len(key) + len(id)
}

// resolve notes the service's reply to id.
func (r *relay) resolve(id []byte) {
	if !validID(id) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolveLocked(id)
}

// forgetCancelled resolves the call a notifications/cancelled names: the
// service says nothing more under a cancelled call's id, so it owes
// nothing. Called with mu held.
func (r *relay) forgetCancelled(m message) {
	if m.method != "notifications/cancelled" || m.hasID || !isObject(m.params) {
		return
	}
	if p, err := decodeParams(m.params); err == nil && validID(p.requestID) {
		r.resolveLocked(p.requestID)
	}
}

// resolveLocked is resolve with mu held.
func (r *relay) resolveLocked(id []byte) {
	key := idKey(id)
	o := r.pending[key]
	if o == nil {
		return
	}
	if o.n--; o.n == 0 {
		delete(r.pending, key)
		r.pendingBytes -= len(key) + len(o.id)
		r.room.Broadcast()
	}
}

// relayParams decodes m's params and their _meta; ok is false when the
// service would refuse them.
func relayParams(m message) (p params, meta requestMeta, ok bool) {
	if m.params != nil && !isObject(m.params) {
		return p, meta, false
	}
	if m.params != nil {
		p, _ = decodeParams(m.params) // an object of a valid message
	}
	meta, err := decodeMeta(p.meta)
	return p, meta, err == nil
}

// modernRequest reports whether m is a request of MCP 2026-07-28.
func modernRequest(m message) bool {
	_, meta, ok := relayParams(m)
	return ok && meta.modern()
}

// note keeps what the in-process engine must be told at a failover: the
// version the last initialize negotiated (the core's rule: a known
// version, else the latest; a non-string one changes nothing) and the
// legacy resource subscriptions.
func (r *relay) note(m message) {
	switch m.method {
	case "initialize", "resources/subscribe", "resources/unsubscribe":
	default:
		return
	}
	p, meta, ok := relayParams(m)
	if m.dup || !m.jsonrpcOK || !ok || meta.modern() {
		return
	}
	switch m.method {
	case "initialize":
		v := LatestVersion
		if p.protocolVersion != nil {
			want, ok := asString(p.protocolVersion)
			if !ok {
				return
			}
			if legacyVersion(want) {
				v = want
			}
		}
		r.version = v
	case "resources/subscribe":
		if uri, ok := asString(p.uri); ok && len(uri) <= maxRelaySubURI && len(r.subs) < maxRelaySubs {
			r.subs[uri] = true
		}
	case "resources/unsubscribe":
		if uri, ok := asString(p.uri); ok {
			delete(r.subs, uri)
		}
	}
}

// pumpService passes the service's lines on to the client, noting which
// calls it answered. When the connection ends it answers what the service
// still owed and starts the fallback.
func (r *relay) pumpService() {
	r.pump(r.conn, true)
	r.mu.Lock()
	r.gone = true
	owedCalls := r.pending
	r.pending, r.pendingBytes = map[string]*owed{}, 0
	for key, o := range owedCalls {
		n := o.n
		if key == r.writing && r.left == nil {
			// Being written right now: the writer answers it (see forward).
			r.left, n = o, n-1
		}
		for range n {
			r.out.line(r.owedReply(o))
		}
	}
	var replay []byte
	if !r.closing && !r.stopping && r.opts.Fallback != nil {
		replay = r.startFallback()
	}
	fbIn := r.fbIn
	r.room.Broadcast()
	r.mu.Unlock()
	if len(replay) > 0 {
		// Before any client line: the engine reads it as soon as it runs
		// (if it cannot start, the pipe fails the write).
		fbIn.Write(replay)
	}
	close(r.failed)
}

// startFallback starts the in-process engine and returns the lines that
// replay the legacy session to it. Called with mu held.
func (r *relay) startFallback() []byte {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.fbIn = inW
	r.wg.Go(func() {
		err := r.opts.Fallback(r.ctx, inR, outW)
		r.mu.Lock()
		r.fbErr = err
		r.mu.Unlock()
		// Whatever is still written to it fails instead of blocking.
		inR.CloseWithError(errors.New("the in-process engine ended"))
		outW.Close()
	})
	r.wg.Go(func() { r.pump(outR, false) })
	var replay []byte
	if r.version != "" {
		replay = append(replay, replayRequest("initialize", "protocolVersion", r.version)...)
		r.replays++
	}
	for uri := range r.subs {
		replay = append(replay, replayRequest("resources/subscribe", "uri", uri)...)
		r.replays++
	}
	return replay
}

// replayRequest is one line replayed to the fallback: a request with one
// string parameter.
func replayRequest(method, param, value string) []byte {
	line := outMessage{ID: json.RawMessage(relayReplayID), Method: method, Params: map[string]string{param: value}}.render()
	return append(line, '\n')
}

// pump reads one upstream (the service, or the fallback) and passes its
// lines on to the client, whole. From the service, the ids it answers are
// resolved; from the fallback, the replies to replayed requests dropped.
func (r *relay) pump(src io.Reader, service bool) {
	t := &tailReader{r: src}
	lr := newLineReader(t, maxRelayReplyBytes)
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			return
		}
		if service && !r.heard.Swap(true) {
			r.silence.Stop()
		}
		if tooLong {
			if id := idFromPrefix(line); service && id != nil {
				r.resolve(id)
				r.out.line(errorReply(id, CodeInternalError, "the service's reply was too large to relay", nil))
			}
			continue
		}
		if t.ended && !json.Valid(line) {
			continue // a fragment the ended upstream tore off: never half-written
		}
		ids := replyIDs(line)
		if service {
			if len(ids) == 1 && string(ids[0]) == relayProbeID && r.probeDue.CompareAndSwap(true, false) {
				continue
			}
			for _, id := range ids {
				r.resolve(id)
			}
		} else if len(ids) == 1 && string(ids[0]) == relayReplayID && r.dropReplay() {
			continue
		}
		r.out.line(line)
	}
}

// dropReplay reports whether a reply to a replayed request is still due.
func (r *relay) dropReplay() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replays > 0 {
		r.replays--
		return true
	}
	return false
}

// replyIDs are the ids a line from the server answers: its own, or those
// of a batch reply's elements. The core renders the id first, so the
// first bytes tell it; anything else is decoded whole.
func replyIDs(line []byte) [][]byte {
	switch firstByte(line) {
	case '{':
		if id := idFromPrefix(line[:min(len(line), idPrefixBytes)]); id != nil {
			return [][]byte{id}
		}
		if m, err := decodeMessage(line); err == nil && m.hasID && validID(m.id) {
			return [][]byte{m.id}
		}
	case '[':
		els, err := decodeArray(line)
		if err != nil {
			return nil
		}
		var ids [][]byte
		for _, m := range decodeBatch(els) {
			if m != nil && m.hasID && validID(m.id) {
				ids = append(ids, m.id)
			}
		}
		return ids
	}
	return nil
}

// tailReader notes when its reader has ended: a line read after that may
// be a fragment without its newline.
type tailReader struct {
	r     io.Reader
	ended bool
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil {
		t.ended = true
	}
	return n, err
}
