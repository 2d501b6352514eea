package toolbus

import (
	"bytes"
	"encoding/json"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// envelope renders the envelope of a call. The members of the tool bus v1
// envelope (seed 000: success, tool, action, result, duration_ms, trace,
// artifact_uri_context, artifact_uri_json) are always there in the default
// mode, null when empty (the result is left out only for output.missing
// "undefined"); the others are left out when null or empty: the model reads
// every byte. Compact mode also leaves out seed 000's null ones, attempts,
// policy and a false cache_hit, and compacts the result.
//
// encoding/json renders the members around the result, which is spliced
// in as it is: re-scanning it would add 50 µs for a 7 KB frame, as much as
// a warm nowframe_build round trip over stdio (BenchmarkStdioWarmNowframe).
func (b *Bus) envelope(r *run) []byte {
	c := r.opt.compact
	head := envelopeHead{Success: r.err == nil, Tool: r.req.Name, Action: orNull(r.call.String(argAction, ""), c), Status: "Ok"}
	if r.err != nil {
		head.Status = "Error"
		if r.err.Retryable {
			head.Status = "Retryable"
		}
	}
	tail := envelopeTail{
		Error:      r.err,
		DurationMS: float64(b.opts.Now().Sub(r.start).Microseconds()) / 1000,
		Trace:      envelopeTrace{TraceID: r.call.Trace.TraceID, SpanID: r.call.Trace.SpanID, ParentSpanID: r.call.Trace.ParentSpanID},
		URIContext: orNull(r.uriContext, c), URIJSON: orNull(r.uriJSON, c),
		ArtifactWriteFailed: r.artifactFailed,
		Redactions:          r.redactions, Bounded: r.bounded,
		NextActions: b.nextActions(r),
	}
	if !c {
		tail.Attempts, tail.Policy = 1, b.policy(r)
	}
	if r.res.CacheHit || !c {
		tail.CacheHit = &r.res.CacheHit
	}
	if r.stored != nil {
		tail.Stored = &storedRef{Key: r.stored.Key, Scope: string(r.stored.Scope)}
	}
	result := r.result
	switch {
	case r.omit && r.err == nil:
		result = nil // output.missing "undefined": the result field is left out.
	case r.err == nil && c && result != nil:
		result = compactJSON(result)
	case r.err != nil && !c:
		result = []byte("null")
	case r.err != nil:
		result = nil
	}
	hb, tb := mustJSON(head), renderTail(tail)
	dst := make([]byte, 0, len(hb)+len(result)+len(tb)+12)
	dst = append(dst, hb[:len(hb)-1]...)
	if result != nil {
		dst = append(append(dst, `,"result":`...), result...)
	}
	return append(append(dst, ','), tb[1:]...)
}

// renderTail renders the envelope's members after the result; an error
// whose details JSON cannot carry becomes a fixed Internal one.
func renderTail(t envelopeTail) []byte {
	b, err := jsonw.Marshal(t)
	if err != nil {
		t.Error = &ToolError{Kind: SystemError, Code: CodeInternal, Message: "error not serialisable"}
		b = mustJSON(t)
	}
	return b
}

// orNull is a member that is null when s is empty, or left out (nil) in
// compact mode.
func orNull(s string, compact bool) any {
	switch {
	case s != "":
		return s
	case compact:
		return nil
	}
	return (*string)(nil)
}

type envelopeHead struct {
	Success bool   `json:"success"`
	Tool    string `json:"tool"`
	Action  any    `json:"action,omitempty"`
	Status  string `json:"status"`
}

type envelopeTail struct {
	Error               *ToolError     `json:"error,omitempty"`
	DurationMS          float64        `json:"duration_ms"`
	Trace               envelopeTrace  `json:"trace"`
	URIContext          any            `json:"artifact_uri_context,omitempty"`
	URIJSON             any            `json:"artifact_uri_json,omitempty"`
	ArtifactWriteFailed bool           `json:"artifact_write_failed,omitempty"`
	Attempts            int            `json:"attempts,omitempty"`
	Policy              *policyMembers `json:"policy,omitempty"`
	CacheHit            *bool          `json:"cache_hit,omitempty"`
	Redactions          []string       `json:"redactions,omitempty"`
	Bounded             []string       `json:"bounded,omitempty"`
	Stored              *storedRef     `json:"stored,omitempty"`
	NextActions         []nextAction   `json:"next_actions,omitempty"`
}

type envelopeTrace struct {
	TraceID      string  `json:"trace_id"`
	SpanID       string  `json:"span_id"`
	ParentSpanID *string `json:"parent_span_id,omitempty"`
}

type storedRef struct {
	Key   string `json:"key"`
	Scope string `json:"scope"`
}

// policyMembers is the envelope's policy: what bounded the call.
type policyMembers struct {
	TimeoutMs   int64      `json:"timeout_ms"`
	Retries     int        `json:"retries"`
	Circuit     string     `json:"circuit,omitempty"`
	RateLimit   *RateLimit `json:"rate_limit,omitempty"`
	MaxInFlight int        `json:"max_in_flight,omitempty"`
}

func (b *Bus) policy(r *run) *policyMembers {
	return &policyMembers{TimeoutMs: r.pol.timeout.Milliseconds(), Circuit: r.res.Circuit, RateLimit: r.pol.rateLimit, MaxInFlight: max(b.opts.MaxInFlight, 0)}
}

// nextAction is one suggested follow-up call. It never carries data from
// results: only tool names, fixed reasons and our own keys and URIs.
type nextAction struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Why       string         `json:"why"`
}

func (b *Bus) nextActions(r *run) []nextAction {
	var acts []nextAction
	if r.err != nil {
		switch r.err.Code {
		case CodeCircuitOpen:
			acts = append(acts, nextAction{Tool: "system_health", Why: "the source's circuit is open: see which source is down and since when"})
		case CodeAwUnavailable, CodeSidecarUnavailable, CodeTimeout:
			acts = append(acts,
				nextAction{Tool: "system_health", Why: "see which source is down and since when"},
				nextAction{Tool: "nowframe_build", Why: "a best-effort frame still answers with the sources that work"})
		case CodeSchemaInvalid, CodeInvalidArgument, CodeUnknownTool, CodeOutputMissing:
			acts = append(acts, nextAction{Tool: "help", Arguments: map[string]any{"tool": r.e.toolName()}, Why: "the tool's arguments and an example"})
		}
	}
	if r.firstSpill != "" {
		acts = append(acts, nextAction{Tool: "artifacts", Arguments: map[string]any{"action": "head", "uri": r.firstSpill},
			Why: "a truncated value's full text (more with action tail, or list the trace for every spill)"})
	}
	if r.stored != nil {
		acts = append(acts, nextAction{Tool: "state", Arguments: map[string]any{"action": "get", "key": r.stored.Key, "scope": string(r.stored.Scope)},
			Why: "read the stored result back"})
	}
	return acts
}

// toolName is the canonical name, or "" before resolution.
func (e *entry) toolName() string {
	if e == nil {
		return ""
	}
	return e.tool.Name
}

// CompactLimit caps arrays in compact mode: a tool that pages answers at
// most this many items a page in compact mode, so none is dropped.
const CompactLimit = 10

// compactJSON drops nulls and empty values and caps long arrays, keeping
// a count of what was dropped. Invalid input is returned as is.
func compactJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	v, _ = compactValue(v)
	if v == nil {
		return []byte("null")
	}
	return mustJSON(v)
}

// compactValue returns v without empty parts, and whether v itself is
// empty (then the parent drops it).
func compactValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return x, x == ""
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if c, empty := compactValue(e); !empty {
				out[k] = c
			}
		}
		return out, len(out) == 0
	case []any:
		out := make([]any, 0, min(len(x), CompactLimit+1))
		dropped := 0
		for _, e := range x {
			c, empty := compactValue(e)
			if empty {
				continue
			}
			if len(out) == CompactLimit {
				dropped++
				continue
			}
			out = append(out, c)
		}
		if dropped > 0 {
			out = append(out, map[string]any{"_dropped": dropped})
		}
		return out, len(out) == 0
	}
	return v, false
}
