package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/toolbus"
)

// MCP protocol versions this server speaks. They compare by their place
// in versions (atLeast), never as strings.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// LatestVersion answers an initialize that asks for a version we do not
	// speak, or for none.
	LatestVersion = Version20251125
)

// versions are the versions served, oldest first: the ones initialize
// negotiates, then ModernVersion.
func versions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125, ModernVersion}
}

// versionIndex is v's place in versions, -1 for none ("" or unknown).
func versionIndex(v string) int { return slices.Index(versions(), v) }

// atLeast reports whether v is w or a later version ("" or unknown: no).
func atLeast(v, w string) bool { return versionIndex(v) >= 0 && versionIndex(v) >= versionIndex(w) }

// SupportedVersions returns the MCP versions initialize accepts, oldest
// first.
func SupportedVersions() []string { return versions()[:versionIndex(ModernVersion)] }

// legacyVersion reports whether v is one of SupportedVersions.
func legacyVersion(v string) bool { return versionIndex(v) >= 0 && !atLeast(v, ModernVersion) }

// Bounds of every message, whatever the transport: a deeper or bigger one
// gets one -32600 error naming the bound (with its id when the id can be
// read). Tool arguments nest well within them.
const (
	MaxMessageDepth = 64
	MaxMessageItems = 10_000
)

// Defaults of Options, and the bounds no caller sets.
const (
	DefaultMaxLineBytes = 1 << 20
	DefaultMaxInFlight  = 1024
	DefaultDrainTimeout = 5 * time.Second
	defaultMaxConns     = 64
	// maxReplyBytes bounds, across the Server's stream connections, the
	// reply bytes queued for writing plus an estimate for each call in
	// flight; maxConnReplyBytes bounds them per connection. Beyond
	// either, reading pauses.
	maxReplyBytes     = 4 << 20
	maxConnReplyBytes = 256 << 10
)

// ErrDrainTimeout is returned by Serve when its ctx was cancelled and calls
// were still running (they were then cancelled), or replies still unwritten,
// when DefaultDrainTimeout ran out.
var ErrDrainTimeout = errors.New("mcp: drain timeout ran out before the session ended")

// Backend is what sessions call; *engine.Engine implements it. It must be
// safe for concurrent use, and Call must return promptly once its ctx is
// done. Body and ToolsList must be valid JSON (embedded verbatim, raw
// newlines turned into spaces).
type Backend interface {
	Call(ctx context.Context, req toolbus.Request) toolbus.Response
	ToolsList(version string) json.RawMessage // the pre-rendered `{"tools":[...]}` result of tools/list for an MCP version ("" none)
}

// Options configures a Server. The zero value gives the defaults.
type Options struct {
	// MaxLineBytes bounds one message line, terminator excluded (default
	// 1 MiB). A longer line gets one -32600 error and is skipped.
	MaxLineBytes int
	// MaxInFlight caps concurrent Backend calls per connection (default
	// 1024); beyond it, reading pauses.
	MaxInFlight int
	// MaxConnections caps the connections ServeListener serves at once
	// (default 64); one more is refused with an error line.
	MaxConnections int
	// DirectMethods are the JSON-RPC methods answered by Backend.Call with
	// Direct set. MCP method names always keep their MCP meaning.
	DirectMethods []string
	// ServerName (default "awbridge") and ServerVersion (default "dev")
	// fill serverInfo; Instructions is initialize's instructions text.
	ServerName, ServerVersion, Instructions string
	// Engine, when set, says in initialize's _meta which engine answers
	// ("service": the shared one behind the socket; "in-process").
	Engine string
	// Logger receives debug lines per request (method only, never params)
	// and warnings for protocol errors. The zero Logger is silent.
	Logger zerolog.Logger
}

// Server answers JSON-RPC/MCP connections. It is immutable after NewServer:
// Serve may run concurrently for any number of connections.
type Server struct {
	backend     Backend
	maxLine     int
	maxInFlight int
	maxConns    int
	direct      map[string]struct{}
	drain       time.Duration // the grace in-flight calls get once Serve's ctx is cancelled
	log         zerolog.Logger
	initResult  map[string][]byte // pre-rendered initialize result per version
	modernHead  []byte            // resultType and _meta of every modern result
	info        serverInfo
	discover    []byte // server/discover's result
	budget      *byteBudget
	connBytes   int64

	hooks testHooks
}

// testHooks let tests observe internal states without timing. Nil in
// production: readPaused runs when the reader waits for an in-flight
// slot, budgetPaused when it waits for room in the reply byte budget.
type testHooks struct {
	readPaused, budgetPaused func()
}

// NewServer returns a Server calling b.
func NewServer(b Backend, opts Options) *Server {
	orDefault := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	s := &Server{
		backend:     b,
		maxLine:     orDefault(opts.MaxLineBytes, DefaultMaxLineBytes),
		maxInFlight: orDefault(opts.MaxInFlight, DefaultMaxInFlight),
		maxConns:    orDefault(opts.MaxConnections, defaultMaxConns),
		drain:       DefaultDrainTimeout,
		log:         opts.Logger,
		direct:      map[string]struct{}{},
		initResult:  map[string][]byte{},
		budget:      newByteBudget(maxReplyBytes),
		connBytes:   maxConnReplyBytes,
		info:        newServerInfo(opts.ServerName, opts.ServerVersion),
	}
	for _, m := range opts.DirectMethods {
		s.direct[m] = struct{}{}
	}
	caps := capabilities{Tools: capability{}}
	if _, ok := b.(ResourceBackend); ok {
		caps.Resources = &capability{Subscribe: true}
	}
	if _, ok := b.(PromptBackend); ok {
		caps.Prompts = &capability{}
	}
	for _, v := range SupportedVersions() {
		init := initializeResult{ProtocolVersion: v, Capabilities: caps, ServerInfo: s.info, Instructions: opts.Instructions}
		if opts.Engine != "" {
			init.Meta = map[string]string{"awbridge/engine": opts.Engine}
		}
		s.initResult[v] = marshal(init)
	}
	head := marshal(s.modernMembers())
	s.modernHead = head[1 : len(head)-1]
	ttl := ListTTLMillis
	s.discover = marshal(discoverResult{modernMembers: modernMembers{ResultType: "complete", Meta: resultMeta{Info: &s.info}, TTL: &ttl, CacheScope: "public"},
		SupportedVersions: AllVersions(), Capabilities: caps, Instructions: opts.Instructions})
	return s
}

// toolsList is tools/list's result in version v.
func (srv *Server) toolsList(v string) []byte {
	if list := srv.backend.ToolsList(v); len(list) > 0 {
		return list
	}
	return []byte(`{"tools":[]}`)
}

// serverInfo names the server (initialize's serverInfo, a modern
// result's _meta).
type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// newServerInfo fills in the default name and version.
func newServerInfo(name, version string) serverInfo {
	if name == "" {
		name = "awbridge"
	}
	if version == "" {
		version = "dev"
	}
	return serverInfo{Name: name, Version: version}
}

type capabilities struct {
	Tools     capability  `json:"tools"`
	Resources *capability `json:"resources,omitempty"`
	Prompts   *capability `json:"prompts,omitempty"`
}

type capability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged"`
}

type initializeResult struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Capabilities    capabilities      `json:"capabilities"`
	ServerInfo      serverInfo        `json:"serverInfo"`
	Instructions    string            `json:"instructions"`
	Meta            map[string]string `json:"_meta,omitempty"`
}

// Serve runs one connection: it reads messages from r and writes replies to
// w (one line each) until the end of r or until ctx is cancelled.
//
// At the end of input it waits for the calls in flight, flushes and returns
// nil (or the read error). When ctx is cancelled it stops reading, gives
// the calls DefaultDrainTimeout (then cancels them; ErrDrainTimeout),
// flushes and returns. A write error (the peer is gone) cancels the calls
// and is returned. Every goroutine Serve starts has ended when it returns,
// but one blocked in a Read or Write that has no deadline to interrupt it
// (net.Conn and pollable files have): it is left to end by itself.
func (srv *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	callCtx, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()

	c := newStreamConn(srv)
	s := c.s
	go c.writeLoop(w)

	lr := newLineReader(r, srv.maxLine)
	s.pace = func(cur *batch) bool { return c.budget.wait(s.stop, srv.hooks.budgetPaused, cur) }
	readerDone := make(chan struct{})
	var readErr error
	go func() {
		defer close(readerDone)
		readErr = s.readLoop(callCtx, lr)
	}()

	var (
		graceC              <-chan time.Time
		ctxDone             = ctx.Done()
		wDone               = c.writerExited
		atEOF, graceExpired bool
	)
	armGrace := func() { graceC = time.After(srv.drain) }
	startGrace := func() {
		ctxDone = nil
		armGrace()
	}
	select {
	case <-readerDone:
		atEOF = true
	case <-ctxDone:
		startGrace()
	case <-wDone:
		wDone = nil
	}
	s.stopReading() // from here on no call starts
	if wDone == nil {
		hardCancel() // the peer is gone
	}
	readerStoppable := atEOF || setDeadline(r, "read")

	// Every message read before the stop gets its reply: wait until the
	// reader handles none, then for the calls in flight.
	callsDone := make(chan struct{})
	go func() {
		s.park()
		s.calls.Wait()
		close(callsDone)
	}()

	// Wait for the calls in flight.
	for callsLeft := callsDone; callsLeft != nil; {
		select {
		case <-callsLeft:
			callsLeft = nil
		case <-ctxDone:
			startGrace()
		case <-graceC:
			if !graceExpired {
				// The calls are cancelled; their replies get one more
				// grace to be queued.
				graceExpired = true
				hardCancel()
				armGrace()
				break
			}
			// Still waiting: the peer stopped reading. Interrupt the
			// stuck write, and let replies still queueing give up.
			graceC = nil
			setDeadline(w, "write")
			close(c.abandon)
		case <-wDone:
			wDone = nil
			hardCancel()
		}
	}

	// Let the writer flush what is queued, then end it.
	close(c.finish)
	if graceExpired {
		// Hard-cancelled calls just queued their replies: give the writer
		// one more grace to flush them.
		armGrace()
	}
	writerEnded := false
	for !writerEnded {
		select {
		case <-c.writerExited:
			writerEnded = true
		case <-ctxDone:
			startGrace()
		case <-graceC:
			graceC = nil
			graceExpired = true
			if !setDeadline(w, "write") {
				// A Write that cannot be interrupted: leave it behind.
				return fmt.Errorf("mcp: write reply: %w", ErrDrainTimeout)
			}
		}
	}
	if readerStoppable {
		<-readerDone
	}

	switch {
	case c.werr != nil:
		return fmt.Errorf("mcp: write reply: %w", c.werr)
	case graceExpired:
		return ErrDrainTimeout
	case atEOF && readErr != nil:
		return fmt.Errorf("mcp: read request: %w", readErr)
	}
	return nil
}

// setDeadline interrupts a blocked Read or Write of x when x supports
// deadlines, reporting whether it did.
func setDeadline(x any, which string) bool {
	past := time.Unix(1, 0)
	switch which {
	case "read":
		if d, ok := x.(interface{ SetReadDeadline(time.Time) error }); ok {
			return d.SetReadDeadline(past) == nil
		}
	case "write":
		if d, ok := x.(interface{ SetWriteDeadline(time.Time) error }); ok {
			return d.SetWriteDeadline(past) == nil
		}
	}
	return false
}
