// Package mcp owns awbridge's wire protocol: JSON-RPC 2.0 and MCP in one
// message-level core. Each incoming line or HTTP body is decoded once
// (encoding/json validates it, then its top-level members are walked in
// order, so member names match exactly and repeated members are seen;
// params are then decoded into the few members each method reads, with no
// allocation per token), dispatched once, and each reply
// encoded once and handed to the connection's sink: the single writer of a
// stream, or the POST (or GET stream) an HTTP reply belongs to.
//
// The package knows no tool and no direct method by behaviour: every call is
// handed to a Backend (the engine in production), and tools/list is whatever
// the Backend pre-rendered for the request's protocol version. Stream
// transports (stdio, Unix socket) hand Serve one reader and one writer per
// connection; Streamable HTTP (HTTPHandler) hands decoded bodies to the same
// core.
//
// # Two MCP eras
//
// Legacy (2024-11-05 to 2025-11-25): initialize negotiates a version for the
// connection (stdio, socket) or the HTTP session (Mcp-Session-Id, GET stream,
// DELETE); resources/subscribe sends notifications/resources/updated.
//
// Modern (2026-07-28): a request whose params._meta carries
// io.modelcontextprotocol/protocolVersion is served on its own, beside any
// legacy session on the same connection or endpoint. It needs
// io.modelcontextprotocol/clientCapabilities (-32602 without); another
// version is -32022 with data {supported, requested}. server/discover lists
// every version served, the capabilities and the instructions. Every result
// has resultType "complete" and _meta io.modelcontextprotocol/serverInfo;
// lists and server/discover add ttlMs 3600000 and cacheScope "public",
// resources/read ttlMs 0 and cacheScope "private". Methods the era removed
// (initialize, ping, logging/setLevel, resources/subscribe,
// resources/unsubscribe, ...) and unknown ones are -32601; an unknown
// resource is -32602 with data {uri}. subscriptions/listen is acknowledged
// (notifications/subscriptions/acknowledged with the honoured filter: the
// known resources among resourceSubscriptions), then sends
// notifications/resources/updated tagged with
// io.modelcontextprotocol/subscriptionId (the request's id); it ends with
// no reply when the client cancels it (notifications/cancelled, or closing
// the HTTP stream), and with a completion result when the server ends it.
// On HTTP a modern request needs no session; MCP-Protocol-Version,
// Mcp-Method and, for tools/call and resources/read, Mcp-Name must match
// the body, else 400 with -32020. Their values must be visible ASCII (space
// and tab aside); a name outside it comes as =?base64?{base64 of its
// UTF-8}?=, decoded before the comparison (a raw non-ASCII byte or a bad
// sentinel is -32020 as well); an unknown
// method is 404. Each modern HTTP request runs on a session of its own, so
// the transport bounds them as a whole: at most HTTPOptions.MaxModernCalls
// in progress and HTTPOptions.MaxListens open listen streams; beyond, 503
// with Retry-After and -32006 (ConcurrencyLimited) under the request's id.
// A W3C traceparent in _meta (either era) reaches the tool
// bus as toolbus.Request.TraceParent. A direct method's params are its
// arguments except _meta, protocol metadata that is taken out (its
// traceparent kept) and must be an object when present. Invalid tool arguments are a tool
// result with isError true from 2025-11-25 on, a -32602 error before.
//
// # Progress
//
// A call whose params._meta carries a progressToken (a string or an
// integer; anything else is ignored) gets notifications/progress
// {progressToken, progress, total?, message?} while it runs, in either
// era: on a stream as lines before its reply (the stdio relay passes them
// on); over HTTP on the POST's own response, which becomes an SSE stream
// (when the request's Accept names text/event-stream) carrying them and
// then the reply. The tool bus paces them (toolbus.Call.Progress): none
// from a call quicker than a second, at most four a second, growing.
// None comes after the reply, after the client cancelled the call, or for
// a batch element; one the connection has no room for is dropped.
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
//   - A response from the client (a message with "result" or "error" and
//     no "method") answers nothing: the server sends no request that
//     expects one. It is dropped without a reply, whatever its id (even
//     one of a call in flight, which goes on); on HTTP a POST of responses
//     only is 202 Accepted with no body, with or without a session.
//   - An "id" must be a string or a number and is echoed byte for byte; null,
//     booleans, objects and arrays are -32600 with id null (MCP forbids null).
//   - A request under the id of a call or subscriptions/listen still in
//     flight on the connection (and not cancelled) is -32600 "invalid
//     request: id already in use by a request in flight" under that id;
//     the one in flight goes on. The id is free again once that one is
//     answered or cancelled.
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
//     On a stream the array is written reply by reply as its elements
//     finish (anything else for the peer waits behind its end), and the
//     reader waits for room in the byte budget between elements as between
//     lines: a batch holds no more reply bytes than separate lines would.
//   - notifications/cancelled matches requestId against calls in flight:
//     strings by value, numbers by their exact text. The cancelled call's
//     ctx is cancelled and its reply, if it comes anyway, is dropped.
//
// # Concurrency
//
// Each call to the Backend runs in its own goroutine, so replies may come out
// of order; ping, initialize, tools/list and notifications are answered by the
// reading goroutine itself and never wait behind calls. At most
// Options.MaxInFlight calls run per connection, and reply bytes queued for a
// stream's writer plus an estimate per call in flight stay within
// Options.MaxConnReplyBytes per connection and Options.MaxReplyBytes across
// the Server; beyond either, reading pauses (backpressure, not errors). A
// message read before the session stops always gets its one reply: a call
// that could not start then is answered Cancelled ("the server is shutting
// down").
package mcp
