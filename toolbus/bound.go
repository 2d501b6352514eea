package toolbus

import (
	"github.com/awbridge/awbridge/toolbus/redact"
)

// boundStage redacts and bounds the result before the envelope, store_as
// and the artifacts see it; a long string's full (redacted) text is
// spilled to an artifact file. A result the tool already redacted (the
// warm frame, once per version) passes through.
func (b *Bus) boundStage(r *run) bool {
	if r.omit {
		return true
	}
	if r.res.Redacted {
		r.redactions, r.bounded = r.res.Redactions, r.res.Bounded
		return true
	}
	out, rep, err := b.opts.Redactor.JSON("result", r.result, b.spill(r))
	if err != nil {
		return r.fail(StageExecute, &ToolError{Kind: SystemError, Code: CodeInternal,
			Message: "the result exceeds the bus's bounds and was withheld", err: err})
	}
	r.result, r.redactions, r.bounded = out, rep.Redacted, rep.Bounded
	return true
}

// spill writes the full text of a bounded string next to the call's
// artifacts and returns its URI ("" without artifacts).
func (b *Bus) spill(r *run) redact.SpillFunc {
	if !b.opts.Artifacts.Enabled() {
		return nil
	}
	return func(_, full string) string {
		r.spills++
		uri, err := b.opts.Artifacts.Spill(r.call.Trace.TraceID, r.call.Trace.SpanID, r.spills, []byte(full))
		if err != nil {
			r.artifactFailed = true
			return ""
		}
		if r.firstSpill == "" {
			r.firstSpill = uri
		}
		return uri
	}
}
