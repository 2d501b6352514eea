package toolbus

import (
	"errors"

	"github.com/awbridge/awbridge/toolbus/shape"
)

// shapeStage applies the caller's output spec. The shaped value is what
// the envelope's result holds and what store_as saves. Missing data under
// missing:"error" is a ContractError naming the path.
func (b *Bus) shapeStage(r *run) bool {
	if r.opt.output == nil || r.opt.output.IsIdentity() {
		return true
	}
	res, err := r.opt.output.ApplyRaw(r.result)
	if err != nil {
		var me *shape.MissingError
		if errors.As(err, &me) {
			return r.fail(StageExecute, &ToolError{Kind: ContractError, Code: CodeOutputMissing,
				Message: me.Error(), Hint: "fix output.path, or set output.missing (null, undefined, empty) or output.default",
				Details: map[string]any{"path": me.Path, "at": me.At, "reason": me.Reason}})
		}
		return r.fail(StageExecute, &ToolError{Kind: SystemError, Code: CodeInternal, Message: "the result could not be shaped", err: err})
	}
	if res.Omit {
		r.omit, r.result = true, nil
		return true
	}
	r.result = mustJSON(res.Value)
	return true
}
