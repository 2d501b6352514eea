package toolbus

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/awbridge/awbridge/toolbus/artifacts"
)

// artifactsStage writes the call's .context and result.json (the exact
// envelope, which names both URIs) and returns that envelope. A failed
// write never fails the call: the envelope then says
// artifact_write_failed, with null URIs; the log says when writes start
// failing and when they work again, not once per call (a full disk must
// not flood the log).
func (b *Bus) artifactsStage(r *run) []byte {
	t, s := r.call.Trace.TraceID, r.call.Trace.SpanID
	r.uriContext = "artifact://runs/" + t + "/tool_calls/" + s + ".context"
	r.uriJSON = "artifact://runs/" + t + "/tool_calls/" + s + "/result.json"
	env := b.envelope(r)
	_, _, err := b.opts.Artifacts.WriteCall(t, s, b.contextDoc(r), env)
	b.artifactOutcome(err)
	if err == nil {
		return env
	}
	r.uriContext, r.uriJSON, r.artifactFailed = "", "", true
	return b.envelope(r)
}

// artifactWarnEvery is the least time between two "artifact writes are
// failing" warnings: a nearly full disk, where small writes pass and big
// ones fail, flips between the two states at every call.
const artifactWarnEvery = time.Minute

// artifactOutcome logs the transitions of artifact writes: the first
// failure (with its error), at most once per artifactWarnEvery, and the
// first success after a logged failure (with how many failed meanwhile).
func (b *Bus) artifactOutcome(err error) {
	if err == nil {
		if b.artFailing.Load() && b.artFailing.CompareAndSwap(true, false) {
			n := b.artFailed.Swap(0)
			if b.artWarned.Swap(false) {
				b.opts.Logger.Info().Int64("failed_writes", n).Msg("artifact writes work again")
			}
		}
		return
	}
	b.artFailed.Add(1)
	if !b.artFailing.CompareAndSwap(false, true) {
		return
	}
	now := b.opts.Now().UnixNano()
	last := b.artLastWarn.Load()
	if last != 0 && now-last < int64(artifactWarnEvery) || !b.artLastWarn.CompareAndSwap(last, now) {
		return
	}
	b.artWarned.Store(true)
	b.opts.Logger.Warn().Err(err).Msg("artifact writes are failing; calls go on without artifacts (further failures are counted, not logged, until a write succeeds)")
}

// ArtifactWritesFailing reports whether the last artifact write failed, and
// how many have failed since the last success. Safe for concurrent use.
func (b *Bus) ArtifactWritesFailing() (bool, int64) {
	return b.artFailing.Load(), b.artFailed.Load()
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
		c.Answer = map[string]any{"error": map[string]any{"kind": string(r.err.Kind), "code": r.err.Code, "message": msg}}
	case r.omit:
		c.Notes = append(c.Notes, "the output spec left the result out (missing: undefined)")
	default:
		c.Answer = json.RawMessage(r.result)
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
	return artifacts.RenderContext(c, artifacts.ContextLimits{})
}
