package toolbus

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/toolbus/artifacts"
	"github.com/awbridge/awbridge/toolbus/redact"
	"github.com/awbridge/awbridge/toolbus/state"
)

// Stage says where a call failed.
type Stage int

// Pipeline stages that can fail.
const (
	StageNone Stage = iota
	StageResolve
	StageValidate
	StageExecute
)

// defaultTimeout is a tool's timeout unless the tool sets its own; sources
// have their own, shorter deadlines.
const defaultTimeout = 10 * time.Second

// Options configure a Bus.
type Options struct {
	// ServerName names the server in help's overview.
	ServerName string
	// Now is the clock for durations (default time.Now).
	Now func() time.Time
	// Redactor bounds and redacts every result, artifact and stored value
	// (default: redact.New with its defaults).
	Redactor *redact.Redactor
	// State backs store_as and the state tool (default: session only).
	State *state.Store
	// Artifacts stores per-call artifacts (nil or disabled: none).
	Artifacts *artifacts.Store
	// RateLimits per tool name (canonical); absent means unlimited.
	RateLimits map[string]RateLimit
	// MaxInFlight is the per-connection cap, reported in policy.
	MaxInFlight int

	newID func() string // trace and span ids (default UUIDv7: sortable); tests fix them
}

// Bus is the registry of tools and the call pipeline: resolve -> validate
// -> policies -> execute -> shape -> bound and redact -> store -> artifacts
// -> envelope, one file per stage. Immutable after New; safe for
// concurrent use.
type Bus struct {
	opts    Options
	tools   []*entry
	byName  map[string]*entry
	lists   toolLists
	limiter map[string]*limiter
}

type entry struct {
	tool    *Tool
	params  []Param // tool's own + common
	timeout time.Duration
}

// New registers tools (plus the built-in help, state and artifacts).
// tools/list is rendered when first asked for (see ToolsList).
func New(opts Options, tools ...*Tool) (*Bus, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.newID == nil {
		opts.newID = newUUIDv7
	}
	if opts.Redactor == nil {
		opts.Redactor = redact.New(redact.Options{})
	}
	if opts.State == nil {
		st, _, err := state.Open(state.Options{Redact: RedactValue(opts.Redactor)})
		if err != nil {
			return nil, fmt.Errorf("toolbus: session state: %w", err)
		}
		opts.State = st
	}
	b := &Bus{opts: opts, byName: map[string]*entry{}, limiter: map[string]*limiter{}}
	all := append([]*Tool{b.helpTool(), b.stateTool(), b.artifactsTool()}, tools...)
	for _, t := range all {
		if !artifacts.SafeName(t.Name, 64, "") {
			return nil, fmt.Errorf("toolbus: tool name %q is not API-safe", t.Name)
		}
		if len(t.ResultSchema) > 0 && !json.Valid(t.ResultSchema) {
			return nil, fmt.Errorf("toolbus: the result schema of %s is not valid JSON", t.Name)
		}
		if !actionEnum(t.Params) {
			return nil, fmt.Errorf("toolbus: %s's action argument has no enum: the envelope echoes it", t.Name)
		}
		timeout := cmp.Or(t.Timeout, defaultTimeout)
		e := &entry{tool: t, timeout: timeout,
			params: append(append([]Param{}, t.Params...), commonParams(t.ReadOnly, timeout)...)}
		for _, n := range append([]string{t.Name}, t.Aliases...) {
			if _, dup := b.byName[n]; dup {
				return nil, fmt.Errorf("toolbus: tool name %q registered twice", n)
			}
			b.byName[n] = e
		}
		b.tools = append(b.tools, e)
		if rl, ok := opts.RateLimits[t.Name]; ok {
			b.limiter[t.Name] = newLimiter(rl)
		}
	}
	for name := range opts.RateLimits {
		e, ok := b.byName[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("toolbus: rate limit for unknown tool %q", name)
		case e.tool.Name != name:
			// Limiters are keyed by the canonical name: a limit under an
			// alias would be accepted and never applied.
			return nil, fmt.Errorf("toolbus: rate limit for %q, an alias: name the tool %s", name, e.tool.Name)
		}
	}
	b.lists = b.lazyLists()
	return b, nil
}

func newUUIDv7() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// RedactValue adapts a redactor to the state store's hook: every value is
// redacted before it is kept.
func RedactValue(r *redact.Redactor) func(json.RawMessage) json.RawMessage {
	return func(v json.RawMessage) json.RawMessage {
		out, _, err := r.JSON("value", v, nil)
		if err != nil {
			return json.RawMessage(`"[REDACTED: value over the redactor's limits]"`)
		}
		return out
	}
}

// ToolsList returns the result of tools/list for an MCP
// protocol version ("" when none was negotiated): title and outputSchema
// only for 2025-06-18 and later, annotations from 2025-03-26 (see
// toolLists). Each shape is rendered once, when first asked for.
func (b *Bus) ToolsList(version string) json.RawMessage { return b.lists.forVersion(version) }

// Names lists the canonical name of every tool, the built-ins first, in
// tools/list's order.
func (b *Bus) Names() []string {
	names := make([]string, len(b.tools))
	for i, e := range b.tools {
		names[i] = e.tool.Name
	}
	return names
}

// Redactor is the bus's redactor, for callers that redact ahead of time
// (the warm frame, once per version).
func (b *Bus) Redactor() *redact.Redactor { return b.opts.Redactor }

// Request is one call into the bus.
type Request struct {
	// Name is the tool name as the caller sent it.
	Name string
	// Args is the arguments object (or null/absent).
	Args json.RawMessage
	// Direct asks for the bare result instead of the envelope.
	Direct bool
	// Saturated says the caller's connection is at its in-flight cap.
	Saturated bool
	// TraceParent is the caller's W3C traceparent ("" when none): the
	// call's trace joins it.
	TraceParent string
	// Progress, when set, receives the call's progress (see
	// Call.Progress): never before ProgressAfter, at most one update per
	// ProgressEvery, Progress growing, none after Call has returned. It
	// must not block for long (the tool's report waits for it).
	Progress func(ProgressUpdate)
}

// Response is the outcome of a call.
type Response struct {
	// Body is the envelope (tools) or the bare result (direct, on success).
	Body json.RawMessage
	// Err is the typed error of a failed call.
	Err   *ToolError
	Stage Stage
}

// run is one call on its way through the pipeline.
type run struct {
	req   Request
	start time.Time
	e     *entry
	call  *Call
	opt   common
	pol   policySnapshot

	res    Result
	result json.RawMessage // the result as each stage leaves it
	omit   bool            // shaped to "undefined": no result field

	redactions, bounded []string
	spills              int
	firstSpill          string
	stored              *state.Entry
	uriContext, uriJSON string
	artifactFailed      bool

	err   *ToolError
	stage Stage
}

// Call runs the pipeline for one request. It never panics on a tool's
// behalf and always answers.
func (b *Bus) Call(ctx context.Context, req Request) Response {
	r := &run{req: req, start: b.opts.Now()}
	switch {
	case !b.resolveStage(r):
	case !b.validateStage(r):
	case !b.policyStage(r):
	case !b.executeStage(ctx, r):
	case !b.shapeStage(r):
	case !b.boundStage(r):
	default:
		b.storeStage(r)
	}
	return b.finish(r)
}

// finish renders the answer and, when a trace exists, the artifacts.
func (b *Bus) finish(r *run) Response {
	if r.call == nil {
		// Rejected before the arguments were understood: nothing is
		// written anywhere; the trace joins the caller's traceparent or
		// is fresh.
		r.call = &Call{MaxAgeMs: -1, Trace: b.trace(nil, r.req.TraceParent)}
	}
	if r.err != nil {
		r.result = nil
		r.err = b.redactError(r.err)
	}
	if r.pol.timeout == 0 && r.e != nil {
		r.pol.timeout = r.e.timeout
	}
	var env []byte
	switch {
	case r.stage != StageResolve && r.stage != StageValidate && b.opts.Artifacts.Enabled():
		env = b.artifactsStage(r) // renders the envelope with its URIs and writes it
	case !r.req.Direct:
		env = b.envelope(r) // a direct method answers without one
	}
	if r.req.Direct {
		if r.err != nil {
			return Response{Err: r.err, Stage: r.stage}
		}
		if r.omit {
			return Response{Body: json.RawMessage("null")}
		}
		return Response{Body: r.result}
	}
	return Response{Body: env, Err: r.err, Stage: r.stage}
}

// redactError masks secrets an error may quote (an upstream's message
// can carry anything) and removes unsafe characters (redact.Clean) before
// it reaches the caller, an artifact or a log.
func (b *Bus) redactError(te *ToolError) *ToolError {
	msg, m := b.opts.Redactor.Text(te.Message) // mask, then clean (see redact.Text)
	hint, h := b.opts.Redactor.Text(te.Hint)
	msg, hint = redact.Clean(msg), redact.Clean(hint)
	m = m || msg != te.Message
	h = h || hint != te.Hint
	details, d := b.redactDetails(te.Details)
	if !m && !h && !d {
		return te
	}
	c := *te
	c.Message, c.Hint = msg, hint
	if d {
		c.Details = details
	}
	return &c
}

// redactDetails sends an error's details through the JSON redactor and
// reports whether they changed; details that do not encode are left as
// they are (the envelope could not carry them either).
func (b *Bus) redactDetails(details map[string]any) (map[string]any, bool) {
	if details == nil {
		return nil, false
	}
	raw, err := jsonw.Marshal(details)
	if err != nil {
		return nil, false
	}
	out, rep, err := b.opts.Redactor.JSON("details", raw, nil)
	if err != nil || !rep.Changed() {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	var v map[string]any
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// actionEnum reports whether a tool's action argument, if it has one,
// allows only listed values: the envelope's action echoes it unredacted.
func actionEnum(params []Param) bool {
	for _, p := range params {
		if p.Name == argAction && len(p.Enum) == 0 {
			return false
		}
	}
	return true
}

func (r *run) fail(stage Stage, te *ToolError) bool {
	r.stage, r.err = stage, te
	return false
}

func mustJSON(v any) json.RawMessage {
	b, err := jsonw.Marshal(v)
	if err != nil {
		panic(err) // only static, marshalable values reach here
	}
	return b
}
