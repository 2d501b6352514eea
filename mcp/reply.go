package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/toolbus"
)

// JSON-RPC error codes. The standard ones, then the server range
// (-32000..-32019) used for execution failures of direct methods, one stable
// code per ToolError code (see ServerErrorCode).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeServerError        = -32000 // any other ToolError code, e.g. Internal
	CodeAwUnavailable      = -32001 // toolbus.CodeAwUnavailable
	CodeSidecarUnavailable = -32002 // toolbus.CodeSidecarUnavailable
	CodeTimeout            = -32003 // toolbus.CodeTimeout
	CodeCircuitOpen        = -32004 // toolbus.CodeCircuitOpen
	CodeRateLimited        = -32005 // toolbus.CodeRateLimited
	CodeConcurrencyLimited = -32006 // toolbus.CodeConcurrencyLimited
	CodeCancelled          = -32007 // toolbus.CodeCancelled
)

// ServerErrorCode is the JSON-RPC code of a direct method that failed while
// executing with the ToolError code toolCode:
//
//	AwUnavailable      -32001
//	SidecarUnavailable -32002
//	Timeout            -32003
//	CircuitOpen        -32004
//	RateLimited        -32005
//	ConcurrencyLimited -32006
//	Cancelled          -32007
//	anything else      -32000
func ServerErrorCode(toolCode string) int {
	switch toolCode {
	case toolbus.CodeAwUnavailable:
		return CodeAwUnavailable
	case toolbus.CodeSidecarUnavailable:
		return CodeSidecarUnavailable
	case toolbus.CodeTimeout:
		return CodeTimeout
	case toolbus.CodeCircuitOpen:
		return CodeCircuitOpen
	case toolbus.CodeRateLimited:
		return CodeRateLimited
	case toolbus.CodeConcurrencyLimited:
		return CodeConcurrencyLimited
	case toolbus.CodeCancelled:
		return CodeCancelled
	}
	return CodeServerError
}

// appendReplyHead appends `{"jsonrpc":"2.0","id":ID,` (null for a nil id).
func appendReplyHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	return append(dst, ',')
}

// resultReply renders a success reply.
func resultReply(id, result []byte) []byte {
	dst := make([]byte, 0, 40+len(id)+len(result))
	dst = appendReplyHead(dst, id)
	dst = append(dst, `"result":`...)
	dst = appendRawJSON(dst, result)
	return append(dst, '}')
}

// errorReply renders an error reply; data is raw JSON or nil.
func errorReply(id []byte, code int, msg string, data []byte) []byte {
	dst := make([]byte, 0, 64+len(id)+len(msg)+len(data))
	dst = appendReplyHead(dst, id)
	dst = append(dst, `"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonw.AppendString(dst, msg)
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = appendRawJSON(dst, data)
	}
	return append(dst, `}}`...)
}

// toolResultReply renders an MCP CallToolResult carrying the envelope body
// both as text content and as structuredContent.
// head, when not nil, holds the members a modern result starts with.
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

// toolErrorJSON renders e for error.data.
func toolErrorJSON(e *toolbus.ToolError) []byte {
	b, err := json.Marshal(e)
	if err == nil {
		return b
	}
	// Details held something JSON cannot carry: drop them.
	c := *e
	c.Details = nil
	if b, err = json.Marshal(&c); err == nil {
		return b
	}
	return []byte(`{"kind":"SystemError","code":"Internal","retryable":false,"message":"unrenderable tool error"}`)
}

// internalError stands for a Backend call that panicked.
func internalError() *toolbus.ToolError {
	return &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "internal error"}
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
	if v > LatestVersion {
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
		return errorReply(id, ServerErrorCode(e.Code), errMessage(e, "execution failed"), toolErrorJSON(e))
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
		if v <= Version20250618 {
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
