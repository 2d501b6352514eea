// Package mcp owns awbridge's wire protocol: hand-written JSON-RPC 2.0 and
// MCP over newline-delimited streams. It holds the bounded line reader, the
// per-connection session (negotiated protocol version, in-flight calls and
// their cancellation, batches), the single writer per connection, and the
// mapping of an toolbus.Response to JSON-RPC results and errors.
//
// The package knows no tool and no direct method by behaviour: every call is
// handed to a Backend (the engine in production), and tools/list is whatever
// the Backend pre-rendered. Transports (stdio, Unix socket, HTTP, relay) hand
// Serve one reader and one writer per connection.
//
// # Framing
//
// One JSON-RPC message per line; "\n" or "\r\n" ends a line; the final line
// may lack its terminator. Blank lines are ignored. A line longer than
// Options.MaxLineBytes (terminator excluded) is never buffered whole: it gets
// exactly one -32600 "request too large" error and is skipped up to its
// newline. That reply carries the line's id when the id is a complete string
// or number among the line's first 4 KiB (the common `{"jsonrpc":"2.0","id":N,
// "method":...}` order), else id null; a too-long notification therefore may
// get that one error reply, since it cannot be told apart without reading it.
//
// # Leniency and strictness
//
//   - Direct methods (Options.DirectMethods), ping and tools/* answer without
//     initialize; a session that never initialized is treated as the oldest
//     version for the version-dependent rules (invalid tool arguments are
//     -32602, no batches).
//   - A message without an "id" member is a notification and never gets a
//     reply, whatever is wrong with it; calls (tools/call, direct methods)
//     sent as notifications are not executed. Unknown notifications are
//     ignored.
//   - An "id" must be a string or a number and is echoed byte for byte; null,
//     booleans, objects and arrays are -32600 with id null (MCP forbids null).
//   - Member names are matched exactly (case-sensitive); a repeated
//     "jsonrpc", "id", "method" or "params" member is -32600. Unknown members
//     are ignored.
//   - "params", when present and not null, must be an object for every
//     method; otherwise -32602.
//   - A second initialize renegotiates the version.
//   - Batches (2025-03-26 sessions only): the reply array holds one reply per
//     element that is a request, in any order, including -32600 with id null
//     for elements that are not objects or carry a bad id (JSON-RPC 2.0 §6);
//     notifications add nothing, so a batch of only notifications gets no
//     reply; an empty batch is one -32600; initialize may not be batched.
//   - notifications/cancelled matches requestId against calls in flight:
//     strings by value, numbers by their exact text. The cancelled call's
//     ctx is cancelled and its reply, if it comes anyway, is dropped.
//
// # Concurrency
//
// Each call to the Backend runs in its own goroutine, so replies may come out
// of order; ping, initialize, tools/list and notifications are answered by the
// reading goroutine itself and never wait behind calls. At most
// Options.MaxInFlight calls run per connection; beyond that, reading pauses
// (backpressure, not errors).
package mcp
