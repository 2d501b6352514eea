package toolbus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/text"
	"github.com/awbridge/awbridge/toolbus/artifacts"
	"github.com/awbridge/awbridge/toolbus/shape"
	"github.com/awbridge/awbridge/toolbus/state"
)

// Common argument names the bus adds to every tool.
const (
	argTraceID      = "trace_id"
	argSpanID       = "span_id"
	argParentSpanID = "parent_span_id"
	argMaxAgeMs     = "max_age_ms"
	argOutput       = "output"
	argStoreAs      = "store_as"
	argStoreScope   = "store_scope"
	argResponseMode = "response_mode"
	argDeadline     = "deadline"
	argTimeoutMs    = "timeout_ms"
	argWait         = "wait"
	// argAction is not common: a tool whose arguments include it (state,
	// artifacts) names what the call does, and the envelope's action
	// (seed 000) echoes it.
	argAction = "action"
)

// Response modes.
const (
	ModeAI      = "ai"
	ModeCompact = "compact"
)

func checkID(v any) string {
	s := v.(string)
	if !artifacts.SafeName(s, artifacts.MaxNameBytes, ".") || s == "." || s == ".." {
		return "must be 1-128 letters, digits, '.', '_' or '-', and not '.' or '..'"
	}
	return ""
}

func commonParams(readOnly bool, timeout time.Duration) []Param {
	ps := []Param{
		{Name: argTraceID, Type: "string", Description: "Correlation id of the run; when absent, the trace id of the request's W3C traceparent, else a new UUIDv7. Names the artifact folder.", MaxLen: 128, Check: checkID},
		{Name: argSpanID, Type: "string", Description: "Id of this call within the run; generated when absent. Names the artifact files (so it may not end in .context).", MaxLen: 128, Check: checkSpanID},
		{Name: argParentSpanID, Type: "string", Description: "Span id of the call that caused this one.", MaxLen: 128, Check: checkID},
		{Name: argOutput, Type: "object", Description: "Output shaping {path, pick, omit, map, missing, default}: path (dot/bracket, rows[0].id) -> pick (keys) -> omit (keys) -> map (a nested spec per array element); missing: error|null|undefined|empty; default replaces missing data. " + shape.PathSyntax,
			Decode: decodeOutput},
		{Name: argStoreAs, Type: "string|object", Description: "Store the shaped result in state under this key (or {key, scope}); read it back with the state tool.",
			Decode: decodeStoreAs},
		{Name: argStoreScope, Type: "string", Enum: []string{string(state.ScopeSession), string(state.ScopePersistent)},
			Description: "Where store_as keeps the result: session (memory, shared by every connection to this process; the default) or persistent (a file under the state dir)."},
		{Name: argResponseMode, Type: "string", Enum: []string{ModeAI, ModeCompact},
			Description: "ai (default): the full envelope. compact: a strictly smaller envelope (no nulls or empty fields, long arrays capped with a count of what was dropped)."},
		{Name: argDeadline, Type: "string", MaxLen: 64, Check: checkDeadline,
			Description: "An RFC 3339 instant by which the call must end; it can only shorten the tool's timeout."},
		{Name: argTimeoutMs, Type: "integer", Min: 1, Max: max(timeout.Milliseconds(), 1),
			Description: "A timeout in milliseconds; it can only shorten the tool's timeout."},
		{Name: argWait, Type: "boolean",
			Description: "false: when this connection already has its maximum of calls in flight, fail at once with ConcurrencyLimited instead of waiting."},
	}
	if readOnly {
		ps = append(ps, Param{Name: argMaxAgeMs, Type: "integer", Min: 0, Max: 86_400_000,
			Description: "Freshness: answer from the warm frame or cache when it is at most this many milliseconds old; 0 forces a fresh read."})
	}
	for i := range ps {
		ps[i].common = true
	}
	return ps
}

// decodeArgs strictly decodes raw (an object, null or absent) against
// params: exact key set (case-sensitive), exact types, bounds.
func decodeArgs(raw json.RawMessage, params []Param) (map[string]any, *ToolError) {
	raw = bytes.TrimSpace(raw)
	out := make(map[string]any, 4)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("{}")) {
		return out, checkRequired(out, params)
	}
	if raw[0] != '{' {
		return nil, Invalid("arguments must be a JSON object", "pass named arguments, e.g. {}", nil)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, Invalid("arguments are not valid JSON", "", nil)
	}
	for name, v := range fields {
		i := slices.IndexFunc(params, func(p Param) bool { return p.Name == name })
		if i < 0 {
			names := make([]string, len(params))
			for i := range params {
				names[i] = params[i].Name
			}
			te := Invalid(fmt.Sprintf("unknown argument %q", text.Cut(name, 64)), "allowed arguments: "+strings.Join(names, ", "),
				map[string]any{"argument": text.Cut(name, 64)})
			te.DidYouMean = suggest(name, names)
			return nil, te
		}
		p := &params[i]
		val, msg := decodeValue(p, v)
		if msg != "" {
			return nil, Invalid(fmt.Sprintf("argument %q %s", p.Name, msg), p.Description, map[string]any{"argument": p.Name})
		}
		out[p.Name] = val
	}
	if te := checkRequired(out, params); te != nil {
		return nil, te
	}
	return out, nil
}

// checkRequired refuses a call that leaves out a required argument.
func checkRequired(args map[string]any, params []Param) *ToolError {
	for i := range params {
		if p := &params[i]; p.Required {
			if _, ok := args[p.Name]; !ok {
				return Invalid(fmt.Sprintf("argument %q is required", p.Name), p.Description, map[string]any{"argument": p.Name})
			}
		}
	}
	return nil
}

// checkSpanID also refuses a span ending in ".context": its folder would
// collide with the .context file of the span without that suffix.
func checkSpanID(v any) string {
	if msg := checkID(v); msg != "" {
		return msg
	}
	if strings.HasSuffix(v.(string), ".context") {
		return "must not end in .context (it would collide with another span's .context file)"
	}
	return ""
}

func checkDeadline(v any) string {
	if _, err := time.Parse(time.RFC3339Nano, v.(string)); err != nil {
		return "must be an RFC 3339 instant, e.g. 2026-11-22T10:00:00Z"
	}
	return ""
}

func decodeOutput(raw json.RawMessage) (any, string) {
	spec, err := shape.Parse(raw)
	if err != nil {
		return nil, strings.TrimPrefix(err.Error(), "invalid output spec: ")
	}
	return spec, "" // a typed nil for null
}

// storeTarget is a decoded store_as.
type storeTarget struct {
	Key   string
	Scope state.Scope
}

func decodeStoreAs(raw json.RawMessage) (any, string) {
	var t storeTarget
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &t.Key); err != nil {
			return nil, "must be a key or {key, scope}"
		}
	case len(raw) > 0 && raw[0] == '{':
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, "must be a key or {key, scope}"
		}
		for k, v := range o {
			switch k {
			case "key":
				if json.Unmarshal(v, &t.Key) != nil {
					return nil, "key must be a string"
				}
			case "scope":
				if json.Unmarshal(v, &t.Scope) != nil {
					return nil, "scope must be a string"
				}
				if t.Scope != "" && t.Scope != state.ScopeSession && t.Scope != state.ScopePersistent {
					return nil, "scope must be session or persistent"
				}
			default:
				return nil, fmt.Sprintf("has unknown field %q (allowed: key, scope)", text.Cut(k, 32))
			}
		}
	default:
		return nil, "must be a key or {key, scope}"
	}
	if err := state.ValidateKey(t.Key); err != nil {
		return nil, "key " + err.Error()
	}
	return t, ""
}

func decodeValue(p *Param, v json.RawMessage) (any, string) {
	if p.Decode != nil {
		return p.Decode(v)
	}
	switch p.Type {
	case "string":
		if len(v) == 0 || v[0] != '"' {
			return nil, "must be a string"
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, "must be a string"
		}
		if p.MaxLen > 0 && len(s) > p.MaxLen {
			return nil, fmt.Sprintf("must be at most %d bytes", p.MaxLen)
		}
		if !utf8.ValidString(s) {
			return nil, "must be valid UTF-8"
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, "must be one of " + strings.Join(p.Enum, ", ")
		}
		if p.Check != nil {
			if msg := p.Check(s); msg != "" {
				return nil, msg
			}
		}
		return s, ""
	case "integer":
		var n json.Number // also takes a string that holds a number
		if json.Unmarshal(v, &n) != nil {
			return nil, "must be an integer"
		}
		i, err := n.Int64()
		if err != nil {
			return nil, "must be an integer"
		}
		if p.Max > p.Min && (i < p.Min || i > p.Max) {
			return nil, fmt.Sprintf("must be between %d and %d", p.Min, p.Max)
		}
		return i, ""
	case "boolean":
		switch string(v) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, "must be true or false"
	}
	return nil, "has an unsupported type"
}

// common holds the decoded common arguments of a call.
type common struct {
	output   *shape.Spec
	store    *storeTarget
	compact  bool
	deadline time.Time // zero: none
	timeout  time.Duration
	noWait   bool
}

// validateStage decodes the arguments strictly. Nothing has been written
// anywhere when it fails (trace ids name files: a bad one stops here).
func (b *Bus) validateStage(r *run) bool {
	args, te := decodeArgs(r.req.Args, r.e.params)
	if te != nil {
		return r.fail(StageValidate, te)
	}
	c := &Call{Args: args, MaxAgeMs: -1}
	if v, ok := args[argMaxAgeMs].(int64); ok {
		c.MaxAgeMs = v
	}
	c.Trace = b.trace(args, r.req.TraceParent)
	r.call = c
	if v, ok := args[argOutput].(*shape.Spec); ok {
		r.opt.output = v
	}
	if v, ok := args[argStoreAs].(storeTarget); ok {
		if v.Scope == "" {
			v.Scope = state.ScopeSession
			if sc, ok := args[argStoreScope].(string); ok {
				v.Scope = state.Scope(sc)
			}
		}
		r.opt.store = &v
	} else if _, ok := args[argStoreScope]; ok {
		return r.fail(StageValidate, Invalid("store_scope without store_as", "add store_as: a key to store the result under", map[string]any{"argument": argStoreScope}))
	}
	r.opt.compact = args[argResponseMode] == ModeCompact
	c.Compact = r.opt.compact
	if v, ok := args[argDeadline].(string); ok {
		r.opt.deadline, _ = time.Parse(time.RFC3339Nano, v)
	}
	if v, ok := args[argTimeoutMs].(int64); ok {
		r.opt.timeout = time.Duration(v) * time.Millisecond
	}
	if v, ok := args[argWait].(bool); ok {
		r.opt.noWait = !v
	}
	// Tools see their own arguments (and the trace and freshness) only.
	for _, p := range [...]string{argOutput, argStoreAs, argStoreScope, argResponseMode, argDeadline, argTimeoutMs, argWait} {
		delete(args, p)
	}
	return true
}

// NoWait reports whether a tools/call's arguments say wait:false (the
// transport asks before queueing a call beyond its in-flight cap). It is
// cheap and tolerant: anything unreadable is "wait".
func NoWait(args json.RawMessage) bool {
	// The byte check is a fast path; a key may also be spelled with
	// escapes ("\u0077ait"), which decoding accepts.
	if len(args) == 0 || !bytes.Contains(args, []byte(`"wait"`)) && !bytes.Contains(args, []byte(`\u`)) {
		return false
	}
	var v struct {
		Wait *bool `json:"wait"`
	}
	return json.Unmarshal(args, &v) == nil && v.Wait != nil && !*v.Wait
}
