package toolbus

import (
	"context"
	"encoding/json"
	"time"
)

// Param describes one argument of a tool. The input schema, strict
// decoding and help are all generated from the same Params.
type Param struct {
	Name        string
	Type        string // "string", "integer", "boolean", "object", "string|object" or "any" (any JSON value)
	Description string
	// Min and Max bound integers (inclusive) when Max > Min.
	Min, Max int64
	// MaxLen bounds strings (bytes) when > 0.
	MaxLen int
	// Check validates a decoded value; it returns a message or "".
	Check func(v any) string
	// Enum lists the allowed values of a string.
	Enum []string
	// Decode, when set, decodes the raw value itself (objects, unions).
	Decode func(raw json.RawMessage) (any, string)
	// Required says every call must give it (the schema's required).
	Required bool

	// common marks the bus's common arguments: typed in every schema,
	// described once (instructions, help).
	common bool
}

// Tool is one registered tool. A Tool is immutable after registration.
type Tool struct {
	// Name is the API-safe name (letters, digits, _ and -).
	Name string
	// Aliases are other accepted names (e.g. dotted direct-method names);
	// the envelope echoes the name the caller used.
	Aliases []string
	Title   string
	// Description is written for an assistant: what it answers, when to
	// use it, when not.
	Description string
	// Params are the tool's own arguments; the common ones (trace ids,
	// max_age_ms for read-only tools) are added by the bus.
	Params []Param
	// ResultSchema is the JSON schema of the tool's unshaped result.
	// outputSchema publishes it under $defs/result, to read: output and
	// response_mode compact may reshape a result into any JSON value.
	ResultSchema json.RawMessage
	// ReadOnly and Idempotent become MCP annotations.
	ReadOnly, Idempotent bool
	// Timeout bounds one call (default 10 s).
	Timeout time.Duration
	// Example is an example call's arguments and its (shaped) result, for
	// help; both JSON.
	Example *Example
	// Run executes the tool. It returns the result JSON, or an error
	// (a *ToolError, or anything else, which becomes a SystemError).
	Run func(ctx context.Context, call *Call) (Result, error)
}

// Result is what a tool returns.
type Result struct {
	// Body is the result JSON.
	Body json.RawMessage
	// CacheHit says it was answered from a warm frame or cache.
	CacheHit bool
	// Circuit is the state of the upstream circuit the tool used ("" if
	// none).
	Circuit string
	// Redacted says Body was already bounded and redacted by the tool
	// (the warm frame, once per version); Redactions lists where.
	Redacted   bool
	Redactions []string
	// Bounded lists where a pre-redacted result had a long string bounded.
	Bounded []string
}

// Example is a call for help to show.
type Example struct {
	Arguments json.RawMessage
	Result    json.RawMessage
}

// Call is one validated invocation, as a tool sees it.
type Call struct {
	// Args holds the decoded arguments by name (string, int64, bool).
	Args map[string]any
	// MaxAgeMs is the caller's freshness bound, -1 when not given.
	MaxAgeMs int64
	// Compact is response_mode compact: a tool may answer a shorter
	// result of its own (the bus compacts whatever it answers).
	Compact bool
	Trace   Trace

	progress *progressGate // nil: nobody listens
}

// Progress reports how far the call has come: done of total (total <= 0:
// unknown), with a short message of fixed text ("read 3 of 7 days"), never
// data from ActivityWatch. Safe from any goroutine, and a nil check when
// the caller asked for no progress. The caller sees no update before the
// call has run ProgressAfter, at most one per ProgressEvery (the latest
// report wins), only reports whose done is larger than the last one's,
// and none once Run has returned.
func (c *Call) Progress(done, total float64, message string) {
	c.progress.report(done, total, message)
}

// String returns the string argument name, or def when absent.
func (c *Call) String(name, def string) string {
	if v, ok := c.Args[name].(string); ok {
		return v
	}
	return def
}

// Trace is the correlation of a call.
type Trace struct {
	TraceID      string  `json:"trace_id"`
	SpanID       string  `json:"span_id"`
	ParentSpanID *string `json:"parent_span_id"`
}
