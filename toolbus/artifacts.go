package toolbus

import (
	"fmt"

	"github.com/awbridge/awbridge/toolbus/artifacts"
)

// artifactsStage writes the call's .context and result.json (the envelope,
// which names both URIs) and returns the envelope. A failed write never
// fails the call: the envelope says artifact_write_failed, URIs null.
func (b *Bus) artifactsStage(r *run) []byte {
	t, s := r.call.Trace.TraceID, r.call.Trace.SpanID
	r.uriContext = "artifact://runs/" + t + "/tool_calls/" + s + ".context"
	r.uriJSON = "artifact://runs/" + t + "/tool_calls/" + s + "/result.json"
	env := b.envelope(r)
	if _, _, err := b.opts.Artifacts.WriteCall(t, s, b.contextDoc(r), env); err == nil {
		return env
	}
	r.uriContext, r.uriJSON, r.artifactFailed = "", "", true
	return b.envelope(r)
}

// contextDoc renders the human .context document of a call: the answer
// flattened to lines, notes on how it was obtained, references.
func (b *Bus) contextDoc(r *run) []byte {
	c := artifacts.Context{Tool: r.req.Name, Trace: r.call.Trace.TraceID, Span: r.call.Trace.SpanID, Status: "Ok"}
	switch {
	case r.err != nil:
		c.Status = "Error"
		if r.err.Retryable {
			c.Status = "Retryable"
		}
		msg, _ := b.opts.Redactor.Text(r.err.Message)
		c.Answer = mustJSON(map[string]any{"error": map[string]any{"kind": r.err.Kind, "code": r.err.Code, "message": msg}})
	case r.omit:
		c.Notes = append(c.Notes, "the output spec left the result out (missing: undefined)")
	default:
		c.Answer = r.result
	}
	if r.res.CacheHit {
		c.Notes = append(c.Notes, "answered from the warm frame or cache (max_age_ms)")
	}
	if n := len(r.redactions); n > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d value(s) redacted: see redactions in result.json", n))
	}
	if n := len(r.bounded); n > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d long string(s) truncated; the full text is spilled next to this file", n))
	}
	if r.stored != nil {
		c.Notes = append(c.Notes, "stored as "+r.stored.Key+" ("+string(r.stored.Scope)+")")
	}
	c.Refs = append(c.Refs, r.uriJSON)
	return artifacts.RenderContext(c)
}
