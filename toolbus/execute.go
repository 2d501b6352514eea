package toolbus

import (
	"context"
	"errors"
	"fmt"
)

// executeStage runs the tool under the effective timeout. A panic is a
// SystemError; an untyped error is a SystemError whose text stays out of
// the envelope (it may hold anything).
func (b *Bus) executeStage(ctx context.Context, r *run) (ok bool) {
	ctx, cancel := context.WithTimeout(ctx, r.pol.timeout)
	defer cancel()
	r.call.progress = newProgressGate(r.req.Progress, b.opts.Redactor)
	defer r.call.progress.close() // runs after the recover below: no update after Run
	defer func() {
		if p := recover(); p != nil {
			ok = r.fail(StageExecute, &ToolError{Kind: SystemError, Code: CodeInternal, Message: "internal error", err: fmt.Errorf("panic: %v", p)})
		}
	}()
	res, err := r.e.tool.Run(ctx, r.call)
	r.res = res
	if err == nil {
		r.result = res.Body
		if len(r.result) == 0 {
			r.result = []byte("null")
		}
		return true
	}
	var te *ToolError
	switch {
	case errors.As(err, &te):
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		ms := r.pol.timeout.Milliseconds()
		te = &ToolError{Kind: PolicyError, Code: CodeTimeout, Retryable: true,
			Message: fmt.Sprintf("the tool did not finish within %d ms", ms), RetryAfterMs: &ms, err: err}
	case errors.Is(ctx.Err(), context.Canceled):
		te = &ToolError{Kind: PolicyError, Code: CodeCancelled, Retryable: true, Message: "the call was cancelled", err: err}
	default:
		te = &ToolError{Kind: SystemError, Code: CodeInternal, Message: "internal error", err: err}
	}
	return r.fail(StageExecute, te)
}
