package toolbus

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// envelope renders the tool bus envelope of a call as one JSON
// object, appended as bytes: it is on every call's path. The members of
// the tool bus v1 envelope (seed 000: success, tool, action, result,
// duration_ms, trace, artifact_uri_context, artifact_uri_json) are always
// there in the default mode, null when empty; the result is left out only
// when the caller's output spec asked for that (missing "undefined"). The
// other members are left out when they would be null or an empty list
// (error on success, parent_span_id, redactions, bounded, next_actions):
// the model reads every byte. Compact mode also leaves out the null ones
// of seed 000, attempts, policy and a false cache_hit, and compacts the
// result.
func (b *Bus) envelope(r *run) []byte {
	c := r.opt.compact
	status := "Ok"
	if r.err != nil {
		status = "Error"
		if r.err.Retryable {
			status = "Retryable"
		}
	}
	result := r.result
	if c && result != nil {
		result = compactJSON(result)
	}
	dst := make([]byte, 0, len(result)+768)
	dst = append(dst, `{"success":`...)
	dst = strconv.AppendBool(dst, r.err == nil)
	dst = append(dst, `,"tool":`...)
	dst = jsonw.AppendString(dst, r.req.Name)
	dst = appendOrNull(dst, `,"action":`, r.call.String(argAction, ""), c)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, '"')
	switch {
	case r.omit && r.err == nil:
		// output.missing "undefined": the result field is left out.
	case r.err == nil:
		dst = append(dst, `,"result":`...)
		dst = append(dst, result...)
	case !c:
		dst = append(dst, `,"result":null`...)
	}
	if r.err != nil {
		dst = append(dst, `,"error":`...)
		eb, err := json.Marshal(r.err)
		if err != nil {
			eb = []byte(`{"kind":"SystemError","code":"Internal","retryable":false,"message":"error not serialisable"}`)
		}
		dst = append(dst, eb...)
	}
	dst = append(dst, `,"duration_ms":`...)
	dst = strconv.AppendFloat(dst, float64(b.opts.Now().Sub(r.start).Microseconds())/1000, 'f', -1, 64)
	dst = append(dst, `,"trace":{"trace_id":`...)
	dst = jsonw.AppendString(dst, r.call.Trace.TraceID)
	dst = append(dst, `,"span_id":`...)
	dst = jsonw.AppendString(dst, r.call.Trace.SpanID)
	if p := r.call.Trace.ParentSpanID; p != nil {
		dst = append(dst, `,"parent_span_id":`...)
		dst = jsonw.AppendString(dst, *p)
	}
	dst = append(dst, '}')
	dst = appendOrNull(dst, `,"artifact_uri_context":`, r.uriContext, c)
	dst = appendOrNull(dst, `,"artifact_uri_json":`, r.uriJSON, c)
	if r.artifactFailed {
		dst = append(dst, `,"artifact_write_failed":true`...)
	}
	if !c {
		dst = append(dst, `,"attempts":1,"policy":`...)
		dst = b.appendPolicy(dst, r)
	}
	if r.res.CacheHit || !c {
		dst = append(dst, `,"cache_hit":`...)
		dst = strconv.AppendBool(dst, r.res.CacheHit)
	}
	dst = appendPaths(dst, `,"redactions":`, r.redactions)
	dst = appendPaths(dst, `,"bounded":`, r.bounded)
	if r.stored != nil {
		dst = append(dst, `,"stored":{"key":`...)
		dst = jsonw.AppendString(dst, r.stored.Key)
		dst = append(dst, `,"scope":`...)
		dst = jsonw.AppendString(dst, string(r.stored.Scope))
		dst = append(dst, '}')
	}
	dst = b.appendNextActions(dst, r)
	return append(dst, '}')
}

// appendOrNull appends the member key with the string s, or null when s
// is empty; in compact mode an empty s leaves the member out.
func appendOrNull(dst []byte, key, s string, compact bool) []byte {
	if s == "" {
		if compact {
			return dst
		}
		return append(append(dst, key...), "null"...)
	}
	dst = append(dst, key...)
	return jsonw.AppendString(dst, s)
}

func appendPaths(dst []byte, key string, paths []string) []byte {
	if len(paths) == 0 {
		return dst
	}
	dst = append(dst, key...)
	dst = append(dst, '[')
	for i, p := range paths {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.AppendString(dst, p)
	}
	return append(dst, ']')
}

func (b *Bus) appendPolicy(dst []byte, r *run) []byte {
	dst = append(dst, `{"timeout_ms":`...)
	dst = strconv.AppendInt(dst, r.pol.timeout.Milliseconds(), 10)
	dst = append(dst, `,"retries":0`...)
	if r.res.Circuit != "" {
		dst = append(dst, `,"circuit":"`...)
		dst = append(dst, r.res.Circuit...)
		dst = append(dst, '"')
	}
	if rl := r.pol.rateLimit; rl != nil {
		dst = append(dst, `,"rate_limit":{"per_second":`...)
		dst = strconv.AppendFloat(dst, rl.PerSecond, 'f', -1, 64)
		dst = append(dst, `,"burst":`...)
		dst = strconv.AppendInt(dst, int64(rl.Burst), 10)
		dst = append(dst, '}')
	}
	if b.opts.MaxInFlight > 0 {
		dst = append(dst, `,"max_in_flight":`...)
		dst = strconv.AppendInt(dst, int64(b.opts.MaxInFlight), 10)
	}
	return append(dst, '}')
}

// nextAction is one suggested follow-up call. It never carries data from
// results: only tool names, fixed reasons and our own keys and URIs.
type nextAction struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Why       string         `json:"why"`
}

func (b *Bus) appendNextActions(dst []byte, r *run) []byte {
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
	if len(acts) == 0 {
		return dst
	}
	dst = append(dst, `,"next_actions":`...)
	return append(dst, mustJSON(acts)...)
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
