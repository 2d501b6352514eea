package toolbus

import "fmt"

// Kind is a ToolError's category.
type Kind string

// The error taxonomy of the tool bus.
const (
	ContractError  Kind = "ContractError"
	PolicyError    Kind = "PolicyError"
	AuthError      Kind = "AuthError"
	ExecutionError Kind = "ExecutionError"
	SystemError    Kind = "SystemError"
)

// Stable error codes. Callers branch on these; never rename one.
const (
	CodeSchemaInvalid      = "SchemaInvalid"
	CodeUnknownTool        = "UnknownTool"
	CodeTimeout            = "Timeout"
	CodeRateLimited        = "RateLimited"
	CodeCircuitOpen        = "CircuitOpen"
	CodeConcurrencyLimited = "ConcurrencyLimited"
	CodeCancelled          = "Cancelled"
	CodeAwUnavailable      = "AwUnavailable"
	CodeSidecarUnavailable = "SidecarUnavailable"
	CodeInternal           = "Internal"
	CodeBudgetExceeded     = "BudgetExceeded"
	CodeStorage            = "StorageFailed"
	CodeNotFound           = "NotFound"
	CodeOutputMissing      = "OutputMissing"
	// CodeInvalidArgument: the arguments fit the schema but not together
	// or not the tool (an unknown period, start after end, a bad cursor);
	// details.argument names the one to fix.
	CodeInvalidArgument = "InvalidArgument"

	// AuthError codes: the source answered and refused us. Not retryable:
	// the hint names the setting to fix.
	CodeAwAuthFailed      = "AwAuthFailed"      // ActivityWatch answered 401 or 403 (activitywatch.api_key)
	CodeAwHostRejected    = "AwHostRejected"    // aw-server refused the Host header (activitywatch.host_header)
	CodeSidecarAuthFailed = "SidecarAuthFailed" // the sidecar answered 401 or 403 to /probe (sidecar.url)
	// CodeAwEventsUnreadable: ActivityWatch answered its server info and
	// bucket list but the events of a selected bucket could not be read
	// (health's sources.activitywatch.code; frames say "unreadable").
	CodeAwEventsUnreadable = "AwEventsUnreadable"
)

// ToolError is the typed error of a tool call, as it appears in the
// envelope's error field and in JSON-RPC error.data. It is immutable once
// built; share it freely.
type ToolError struct {
	Kind         Kind           `json:"kind"`
	Code         string         `json:"code"`
	Retryable    bool           `json:"retryable"`
	Message      string         `json:"message"`
	Hint         string         `json:"hint,omitempty"`
	Details      map[string]any `json:"details,omitempty"`
	RetryAfterMs *int64         `json:"retry_after_ms,omitempty"`
	DidYouMean   []string       `json:"did_you_mean,omitempty"`

	err error
}

// Error implements error.
func (e *ToolError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%s %s: %s: %v", e.Kind, e.Code, e.Message, e.err)
	}
	return fmt.Sprintf("%s %s: %s", e.Kind, e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *ToolError) Unwrap() error { return e.err }

// WithCause returns a copy of e that wraps err.
func (e *ToolError) WithCause(err error) *ToolError {
	c := *e
	c.err = err
	return &c
}

// Invalid is a ContractError SchemaInvalid for bad arguments.
func Invalid(msg, hint string, details map[string]any) *ToolError {
	return &ToolError{Kind: ContractError, Code: CodeSchemaInvalid, Message: msg, Hint: hint, Details: details}
}
