package toolbus

import (
	"errors"

	"github.com/awbridge/awbridge/toolbus/state"
)

// storeStage saves the shaped, redacted result under store_as. A failure
// to store fails the call (the caller asked for it), typed by cause.
func (b *Bus) storeStage(r *run) bool {
	if r.opt.store == nil {
		return true
	}
	value := r.result
	if r.omit {
		value = []byte("null")
	}
	ent, err := b.opts.State.Set(r.opt.store.Key, value, r.opt.store.Scope)
	if err != nil {
		return r.fail(StageExecute, stateError(err))
	}
	r.stored = &ent
	return true
}

// stateError types a state store failure.
func stateError(err error) *ToolError {
	var (
		ke  *state.KeyError
		ve  *state.ValueError
		se  *state.ScopeError
		le  *state.LimitError
		ste *state.StorageError
	)
	switch {
	case errors.As(err, &ke), errors.As(err, &ve), errors.As(err, &se):
		return (&ToolError{Kind: ContractError, Code: CodeSchemaInvalid, Message: err.Error()}).WithCause(err)
	case errors.Is(err, state.ErrPersistentDisabled):
		return (&ToolError{Kind: ContractError, Code: CodeSchemaInvalid,
			Message: "persistent state is off: no state dir is set, or the configured one could not be used at start (a warning logged at start says why; add -v to a terminal command to see it)",
			Hint:    "use store_scope session, or fix paths.state_dir (AWBRIDGE_STATE_DIR) and restart"}).WithCause(err)
	case errors.As(err, &le):
		return (&ToolError{Kind: PolicyError, Code: CodeBudgetExceeded, Message: err.Error(),
			Hint: "unset or clear keys with the state tool, or store a smaller (shaped) result"}).WithCause(err)
	case errors.As(err, &ste):
		return (&ToolError{Kind: SystemError, Code: CodeStorage, Retryable: true, Message: "the state file could not be written",
			Hint: "check the state dir's free space and permissions"}).WithCause(err)
	}
	return (&ToolError{Kind: SystemError, Code: CodeInternal, Message: "internal error"}).WithCause(err)
}
