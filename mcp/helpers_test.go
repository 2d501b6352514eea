package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/toolbus"
)

// waitLimit is a generous ceiling for anything a test waits for; it only
// turns a hang into a failure.
const waitLimit = 20 * time.Second

const fakeToolsList = `{"tools":[{"name":"ok","description":"d","inputSchema":{"type":"object"}}]}`

// stageBackend answers from the request itself: the call's arguments (tools)
// or params (direct methods) may hold {"mode": "ok"|"resolve"|"validate"|
// "execute"|"panic", "code": ToolError code}. It counts calls and keeps
// every request.
type stageBackend struct {
	calls atomic.Int64
	mu    sync.Mutex
	reqs  []toolbus.Request
}

// okEnvelope is the fake tool body: it has quotes, a newline escape and a
// non-ASCII character so that the text content's escaping is exercised.
const okEnvelope = `{"success":true,"tool":"ok","result":{"title":"a \"quoted\" line\nnext é\u2028"}}`

func (b *stageBackend) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }

func (b *stageBackend) Call(_ context.Context, req toolbus.Request) toolbus.Response {
	b.calls.Add(1)
	b.mu.Lock()
	b.reqs = append(b.reqs, req)
	b.mu.Unlock()
	var ctl struct{ Mode, Code string }
	_ = json.Unmarshal(req.Args, &ctl)
	if ctl.Code == "" {
		ctl.Code = toolbus.CodeInternal
	}
	fail := func(stage toolbus.Stage, te *toolbus.ToolError) toolbus.Response {
		o := toolbus.Response{Err: te, Stage: stage}
		if !req.Direct {
			e, _ := json.Marshal(te)
			o.Body = json.RawMessage(`{"success":false,"tool":` + quote(req.Name) + `,"error":` + string(e) + `}`)
		}
		return o
	}
	switch ctl.Mode {
	case "resolve":
		return fail(toolbus.StageResolve, &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeUnknownTool, Message: "unknown tool", DidYouMean: []string{"ok"}})
	case "validate":
		return fail(toolbus.StageValidate, toolbus.Invalid("bad arguments", "see inputSchema", map[string]any{"field": "x"}))
	case "execute":
		return fail(toolbus.StageExecute, &toolbus.ToolError{Kind: toolbus.ExecutionError, Code: ctl.Code, Retryable: true, Message: "aw down"})
	case "panic":
		panic("fake backend panic")
	}
	if req.Direct {
		return toolbus.Response{Body: json.RawMessage(`{"method":` + quote(req.Name) + `}`)}
	}
	return toolbus.Response{Body: json.RawMessage(okEnvelope)}
}

func (b *stageBackend) requests() []toolbus.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]toolbus.Request(nil), b.reqs...)
}

// direct gives o the direct methods awbridge serves.
func direct(o Options) Options {
	o.DirectMethods = []string{"aw.get_state", "nowframe.build", "system.health"}
	return o
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// gateBackend blocks every call until released or cancelled.
type gateBackend struct {
	started   chan toolbus.Request // one per call, when it starts
	cancelled chan string          // the Name of each call whose ctx ended
	release   chan struct{}        // one token releases one call
	running   atomic.Int64
	started64 atomic.Int64
	// ignoreCtx makes calls wait for release only.
	ignoreCtx bool
}

func newGate() *gateBackend {
	return &gateBackend{
		started:   make(chan toolbus.Request, 4096),
		cancelled: make(chan string, 4096),
		release:   make(chan struct{}, 4096),
	}
}

func (g *gateBackend) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }

func (g *gateBackend) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	g.started64.Add(1)
	g.running.Add(1)
	defer g.running.Add(-1)
	g.started <- req
	done := ctx.Done()
	if g.ignoreCtx {
		done = nil
	}
	select {
	case <-g.release:
		if ctx.Err() != nil {
			g.cancelled <- req.Name
		}
		return toolbus.Response{Body: json.RawMessage(`{"released":` + quote(req.Name) + `}`)}
	case <-done:
		g.cancelled <- req.Name
		return toolbus.Response{
			Body:  json.RawMessage(`{"success":false}`),
			Err:   &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeCancelled, Message: "cancelled"},
			Stage: toolbus.StageExecute,
		}
	}
}

func (g *gateBackend) waitStarted(t *testing.T, n int) []toolbus.Request {
	t.Helper()
	var reqs []toolbus.Request
	for range n {
		select {
		case r := <-g.started:
			reqs = append(reqs, r)
		case <-time.After(waitLimit):
			t.Fatalf("only %d of %d calls started", len(reqs), n)
		}
	}
	return reqs
}

// wireReply is one reply as a client sees it.
type wireReply struct {
	Raw     string          `json:"-"`
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// parseLines parses output lines; a batch reply becomes one entry whose
// Batch holds the elements.
type outLine struct {
	Raw   string
	Reply wireReply
	Batch []wireReply
}

func parseOutput(t testing.TB, out string) []outLine {
	t.Helper()
	var lines []outLine
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		lines = append(lines, parseLine(t, l))
	}
	return lines
}

func parseLine(t testing.TB, l string) outLine {
	t.Helper()
	ol := outLine{Raw: l}
	if strings.HasPrefix(l, "[") {
		var raws []json.RawMessage
		if err := json.Unmarshal([]byte(l), &raws); err != nil {
			t.Fatalf("batch reply %q: %v", l, err)
		}
		for _, r := range raws {
			ol.Batch = append(ol.Batch, decodeReply(t, string(r)))
		}
		return ol
	}
	ol.Reply = decodeReply(t, l)
	return ol
}

func decodeReply(t testing.TB, s string) wireReply {
	t.Helper()
	var r wireReply
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("reply %q: %v", s, err)
	}
	r.Raw = s
	return r
}

// runLines serves input to the end and returns the parsed output.
func runLines(t testing.TB, srv *Server, input string) []outLine {
	t.Helper()
	var out bytes.Buffer
	if err := srv.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		t.Fatalf("output does not end in a newline: %q", out.String())
	}
	return parseOutput(t, out.String())
}

// conn is a live connection to a Serve over pipes.
type conn struct {
	t      *testing.T
	in     *io.PipeWriter
	outW   *io.PipeWriter
	lines  chan string
	done   chan error
	cancel context.CancelFunc
}

func startConn(t *testing.T, srv *Server) *conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &conn{t: t, in: inW, outW: outW, lines: make(chan string, 4096), done: make(chan error, 1), cancel: cancel}
	go func() {
		c.done <- srv.Serve(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		inR.Close()
		outR.Close()
	})
	return c
}

func (c *conn) send(lines ...string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, strings.Join(lines, "\n")+"\n"); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *conn) recv() wireReply {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("output ended, want a reply")
		}
		return parseLine(c.t, l).Reply
	case <-time.After(waitLimit):
		c.t.Fatal("no reply")
	}
	return wireReply{}
}

// closeAndWait ends the input, waits for Serve and returns the lines written
// after the last recv.
func (c *conn) closeAndWait() ([]string, error) {
	c.t.Helper()
	c.in.Close()
	return c.wait()
}

func (c *conn) wait() ([]string, error) {
	c.t.Helper()
	var err error
	select {
	case err = <-c.done:
	case <-time.After(waitLimit):
		c.t.Fatal("Serve did not return")
	}
	var rest []string
	for l := range c.lines {
		rest = append(rest, l)
	}
	return rest, err
}

func ping(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }

func toolCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + quote(name) + `,"arguments":` + args + `}}`
}

func initLine(id, version string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":` + quote(version) + `,"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
}

// The engine is the production Backend.
var _ Backend = (*engine.Engine)(nil)

// tuned sets the bounds production never changes: the reply byte budget
// (0 keeps one) and the drain grace (0 keeps it).
func tuned(srv *Server, total, perConn int64, drain time.Duration) *Server {
	if total > 0 {
		srv.budget = newByteBudget(total)
	}
	if perConn > 0 {
		srv.connBytes = perConn
	}
	if drain != 0 {
		srv.drain = drain
	}
	return srv
}
