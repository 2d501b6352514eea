// Package toolbus is the transport-agnostic tool bus: the registry of tools,
// the call pipeline (resolve, validate, execute, envelope) and ToolError.
// It never sees JSON-RPC.
package toolbus
