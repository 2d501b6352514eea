package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/toolbus"
)

// JSON-RPC error codes: the standard ones, then the server range used for
// execution failures of direct methods (see serverErrorCode).
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeServerError        = -32000 // a ToolError code without one of its own, e.g. Internal
	CodeConcurrencyLimited = -32006 // toolbus.CodeConcurrencyLimited
)

// serverErrorCode is the JSON-RPC code of a direct method that failed while
// executing with the ToolError code toolCode: one stable code each from
// -32001 (AwUnavailable) to -32007 (Cancelled), -32000 for any other.
func serverErrorCode(toolCode string) int {
	codes := []string{toolbus.CodeAwUnavailable, toolbus.CodeSidecarUnavailable, toolbus.CodeTimeout,
		toolbus.CodeCircuitOpen, toolbus.CodeRateLimited, toolbus.CodeConcurrencyLimited, toolbus.CodeCancelled}
	if i := slices.Index(codes, toolCode); i >= 0 {
		return CodeServerError - 1 - i
	}
	return CodeServerError
}

// outMessage is a JSON-RPC message the server writes: a reply (ID,
// then Result or Error) or a notification (Method, Params).
type outMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func (m outMessage) render() []byte {
	m.JSONRPC = "2.0"
	return marshal(m)
}

// notification renders a notification.
func notification(method string, params any) []byte {
	return outMessage{Method: method, Params: params}.render()
}

// marshal renders v with jsonw.Marshal (no HTML escaping): raw members
// (ids, bodies) go out byte for byte.
func marshal(v any) []byte {
	b, err := jsonw.Marshal(v)
	if err != nil {
		panic(err) // only our own values, whose raw members are valid JSON
	}
	return b
}

// replyID is a reply's id: null for a nil one.
func replyID(id []byte) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// appendReplyHead appends `{"jsonrpc":"2.0","id":ID,` (null for a nil id).
func appendReplyHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	return append(append(dst, replyID(id)...), ',')
}

// resultReply renders a success reply. Its bytes are appended, not
// marshalled: the result is a whole tools/list or direct method's body,
// which encoding/json would re-scan (see toolResultReply).
func resultReply(id, result []byte) []byte {
	dst := make([]byte, 0, 40+len(id)+len(result))
	dst = appendReplyHead(dst, id)
	dst = append(dst, `"result":`...)
	dst = appendRawJSON(dst, result)
	return append(dst, '}')
}

// errorReply renders an error reply; data is raw JSON or nil.
func errorReply(id []byte, code int, msg string, data []byte) []byte {
	return outMessage{ID: replyID(id), Error: &RPCError{Code: code, Message: msg, Data: data}}.render()
}

// toolResultReply renders an MCP CallToolResult carrying the envelope body
// both as text content and as structuredContent.
// head, when not nil, holds the members a modern result starts with.
// Every tools/call answer takes this path, so its bytes are appended:
// encoding/json would re-scan the body it embeds raw (a json.RawMessage
// is validated and compacted, ~140 MB/s on the benchmark machine), +50 µs
// for a 7 KB frame, as much as a whole warm nowframe_build round trip over
// stdio (BenchmarkStdioWarmNowframe, ~45 µs of server CPU).
func toolResultReply(id, body []byte, isError bool, head []byte) []byte {
	// The fixed members, the body twice, one byte per escaped quote in
	// the text copy and a little for the rarer escapes: one allocation.
	dst := make([]byte, 0, 128+len(id)+len(head)+2*len(body)+bytes.Count(body, []byte{'"'})+len(body)/32)
	dst = appendReplyHead(dst, id)
	dst = append(dst, `"result":{`...)
	if head != nil {
		dst = append(dst, head...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[{"type":"text","text":`...)
	dst = jsonw.AppendString(dst, body)
	dst = append(dst, `}],"structuredContent":`...)
	dst = appendRawJSON(dst, body)
	if isError {
		dst = append(dst, `,"isError":true}}`...)
	} else {
		dst = append(dst, `,"isError":false}}`...)
	}
	return dst
}

// toolErrorJSON renders e for error.data. Only Details can hold what JSON
// cannot carry: then they are dropped.
func toolErrorJSON(e *toolbus.ToolError) []byte {
	if b, err := jsonw.Marshal(e); err == nil {
		return b
	}
	c := *e
	c.Details = nil
	b, _ := jsonw.Marshal(&c)
	return b
}

func errMessage(e *toolbus.ToolError, fallback string) string {
	if e.Message != "" {
		return e.Message
	}
	return fallback
}

// renderOutcome maps a toolbus.Response to the reply for id. v is the
// session's negotiated version ("" without initialize) or the modern
// request's version.
func (srv *Server) renderOutcome(id []byte, direct bool, v string, out toolbus.Response) []byte {
	e := out.Err
	var head []byte
	if atLeast(v, ModernVersion) {
		head = srv.modernHead
	}
	if direct {
		if e == nil {
			return resultReply(id, out.Body)
		}
		switch out.Stage {
		case toolbus.StageResolve:
			return errorReply(id, CodeMethodNotFound, errMessage(e, "method not found"), toolErrorJSON(e))
		case toolbus.StageValidate:
			return errorReply(id, CodeInvalidParams, errMessage(e, "invalid params"), toolErrorJSON(e))
		}
		return errorReply(id, serverErrorCode(e.Code), errMessage(e, "execution failed"), toolErrorJSON(e))
	}

	if e == nil {
		body := out.Body
		if len(body) == 0 {
			body = []byte("{}")
		}
		return toolResultReply(id, body, false, head)
	}
	switch out.Stage {
	case toolbus.StageResolve:
		return errorReply(id, CodeInvalidParams, errMessage(e, "unknown tool"), toolErrorJSON(e))
	case toolbus.StageValidate:
		// SEP-1303: from 2025-11-25 on, invalid arguments are a tool
		// result the model can read and correct.
		if !atLeast(v, Version20251125) {
			return errorReply(id, CodeInvalidParams, errMessage(e, "invalid params"), toolErrorJSON(e))
		}
	}
	body := out.Body
	if len(body) == 0 {
		body = append([]byte(`{"success":false,"error":`), toolErrorJSON(e)...)
		body = append(body, '}')
	}
	return toolResultReply(id, body, true, head)
}
