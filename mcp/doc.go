// Package mcp owns awbridge's wire protocol: JSON-RPC 2.0 and MCP in one
// message-level core. Each incoming line or HTTP body is decoded once
// (encoding/json validates it, then its top-level members are walked in
// order, so names match exactly and repeated members are seen), dispatched
// once, and each reply encoded once and handed to the connection's sink:
// the single writer of a stream, or the POST (or GET stream) an HTTP reply
// belongs to. The package knows no tool: every call goes to a Backend (the
// engine), and tools/list is whatever the Backend pre-rendered for the
// request's version; resources and prompts are served (and advertised)
// when the Backend is also a ResourceBackend or a PromptBackend. Transports: stdio and the Unix socket (Serve), the
// Windows token listener (endpoint.go), Streamable HTTP (HTTPHandler), the
// stdio relay to the service (Relay) and the terminal's Client.
//
// Two eras: legacy (2024-11-05 to 2025-11-25) negotiates a version with
// initialize, per connection or per HTTP session (Mcp-Session-Id); modern
// (2026-07-28) names its version and capabilities in params._meta and is
// served on its own, beside any legacy session. docs/protocol.md says what
// each era answers; the rules below are the core's.
//
// Framing: one message per line ("\n" or "\r\n"; the last may lack it;
// blank lines ignored). A line over Options.MaxLineBytes is never buffered
// whole: it gets one -32600 "request too large", under its id when that is
// a complete string or number among its first 4 KiB, and is skipped.
//
// Leniency and strictness:
//   - Direct methods, ping and tools/* answer without initialize (as the
//     oldest version: invalid tool arguments are -32602, no batches).
//   - A message without "id" is a notification: never a reply, and a call
//     sent as one is not executed. A client's response answers nothing
//     and gets no reply (on HTTP, 202).
//   - An id must be a string or a number, echoed byte for byte; anything
//     else is -32600 with id null. An id in use by a call or listen in
//     flight (not cancelled) is -32600; the first goes on.
//   - Member names match exactly; a repeated jsonrpc, id, method or
//     params is -32600; params, when not null, must be an object (-32602).
//   - Batches only in a 2025-03-26 session: one reply per request
//     element, in any order; an empty batch is one -32600; initialize may
//     not be batched. On a stream the array is written reply by reply,
//     paced by the byte budget like separate lines.
//   - notifications/cancelled matches requestId (strings by value,
//     numbers by their text); the call's ctx is cancelled and its reply
//     dropped.
//   - A call with _meta.progressToken (a string or an integer) gets
//     notifications/progress while it runs, never after its reply or for
//     a batch element; over HTTP the POST's answer becomes an SSE stream.
//
// Concurrency: each Backend call runs in its own goroutine, so replies may
// come out of order; ping, initialize, tools/list and notifications are
// answered by the reading goroutine. Options.MaxInFlight calls run per
// connection, and reply bytes queued or estimated for calls in flight stay
// within a per-connection and a per-Server budget; beyond either, reading
// pauses (backpressure, not errors). A message read before the session
// stops always gets its one reply (Cancelled at shutdown).
package mcp
