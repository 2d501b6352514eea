// Package engine is the one per-process core: it owns the upstreams, the
// frame builder, health and the tool bus, and Call is the single path for
// MCP tools, direct methods and `awbridge call`.
package engine

import (
	"encoding/json"

	"github.com/awbridge/awbridge/toolbus"
)

// Kind says how a call arrived.
type Kind int

const (
	// KindTool is an MCP tools/call: the outcome body is the envelope.
	KindTool Kind = iota
	// KindDirect is a direct JSON-RPC method (aw.get_state, nowframe.build,
	// system.health): the outcome body is the method's result.
	KindDirect
)

// Request is one call. It carries no JSON-RPC framing.
type Request struct {
	Kind Kind
	// Name is the tool or method name exactly as the caller sent it.
	Name string
	// Args is the arguments object (tools) or params (direct methods);
	// nil or JSON null means none.
	Args json.RawMessage
	// ProtocolVersion is the session's negotiated MCP version, "" if none.
	ProtocolVersion string
	// Saturated says the connection already has its maximum of calls in
	// flight; a call whose arguments say wait:false then fails at once
	// with ConcurrencyLimited.
	Saturated bool
}

// NoWait reports whether a tool call's arguments say wait:false: the
// transport asks before it queues a call beyond its in-flight cap.
func NoWait(args json.RawMessage) bool { return toolbus.NoWait(args) }

// Stage says where a call failed: the tool bus's stages.
type Stage = toolbus.Stage

// The stages a call can fail in.
const (
	// StageNone: the call succeeded.
	StageNone = toolbus.StageNone
	// StageResolve: no tool or method by that name (Err.DidYouMean set).
	StageResolve = toolbus.StageResolve
	// StageValidate: the arguments were rejected before anything ran.
	StageValidate = toolbus.StageValidate
	// StageExecute: the tool ran and failed.
	StageExecute = toolbus.StageExecute
)

// Outcome is the answer to a Request.
type Outcome struct {
	// Body is the JSON to send: for KindTool the envelope (always set,
	// also on failure); for KindDirect the method's result (nil on failure).
	Body json.RawMessage
	// Err is the typed error when the call failed, nil on success.
	Err *toolbus.ToolError
	// Stage is where Err arose.
	Stage Stage
}
