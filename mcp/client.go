package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// maxClientReplyBytes bounds one reply line a Client reads.
const maxClientReplyBytes = 64 << 20

// Client calls an awbridge service over one stream connection, one call at
// a time, without initialize (direct methods and tools/* need none). Each
// exchange ends when its ctx does or after Timeout, so a service that
// accepts and never answers cannot hold the caller; a progress
// notification of the call (see Do) starts the Timeout again: a service
// that reports progress is working.
type Client struct {
	conn    net.Conn
	lr      *lineReader
	id      int
	Timeout time.Duration // bounds one exchange
}

// NewClient returns a Client on conn; it owns conn from now on.
func NewClient(conn net.Conn, timeout time.Duration) *Client {
	return &Client{conn: conn, lr: newLineReader(conn, maxClientReplyBytes), Timeout: timeout}
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// RPCError is a JSON-RPC error reply's error.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"` // raw JSON, nil when absent
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// ErrNoAnswer is an exchange that ran out of the Client's Timeout.
var ErrNoAnswer = errors.New("mcp: no answer within the timeout")

// call sends one request and returns its result, or an *RPCError for an
// error reply. Any other error is the exchange's failure: ctx's error
// (wrapped) when ctx ended it, ErrNoAnswer (wrapped) when Timeout did, else
// the connection's error. With progress set, params (an object) ask for
// progress (_meta.progressToken, the request's id) and progress receives
// each notifications/progress for it.
func (c *Client) call(ctx context.Context, method string, params map[string]json.RawMessage, progress func(toolbus.ProgressUpdate)) (json.RawMessage, error) {
	c.id++
	id := strconv.Itoa(c.id)
	if progress != nil {
		params["_meta"] = json.RawMessage(`{"` + MetaProgressToken + `":` + id + `}`)
	}
	line, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", c.id, method, params})
	if err != nil {
		return nil, fmt.Errorf("mcp: encode %s: %w", method, err)
	}
	deadline := func() { _ = c.conn.SetDeadline(time.Now().Add(c.Timeout)) }
	deadline()
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	failed := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("mcp: %s: %w", method, ctx.Err())
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("mcp: %s: %w", method, ErrNoAnswer)
		}
		return fmt.Errorf("mcp: %s: %w", method, err)
	}
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return nil, failed(err)
	}
	for {
		l, tooLong, err := c.lr.next()
		if err != nil {
			return nil, failed(err)
		}
		if tooLong {
			if string(idFromPrefix(l)) == id {
				return nil, fmt.Errorf("mcp: %s: the reply is longer than %d bytes", method, maxClientReplyBytes)
			}
			continue
		}
		m, err := decodeMessage(l)
		if err != nil {
			continue
		}
		if !m.hasID {
			if u, ok := progressOf(m, id); ok && progress != nil && ctx.Err() == nil {
				deadline()
				if ctx.Err() != nil {
					// ctx ended meanwhile: its stop must win over the new deadline.
					_ = c.conn.SetDeadline(time.Unix(1, 0))
				}
				progress(u)
			}
			continue
		}
		if string(m.id) != id {
			continue // not ours
		}
		return replyOf(l)
	}
}

// progressOf reads a notifications/progress for the request whose
// progressToken is token (the request's id, digits).
func progressOf(m message, token string) (toolbus.ProgressUpdate, bool) {
	if m.method != MethodProgress || !isObject(m.params) {
		return toolbus.ProgressUpdate{}, false
	}
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress *float64        `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(m.params, &p) != nil || string(p.Token) != token || p.Progress == nil {
		return toolbus.ProgressUpdate{}, false
	}
	return toolbus.ProgressUpdate{Progress: *p.Progress, Total: max(p.Total, 0), Message: p.Message}, true
}

// replyOf decodes a reply's result or error.
func replyOf(line []byte) (json.RawMessage, error) {
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("mcp: unreadable reply: %w", err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// ToolsList returns the service's tools/list result.
func (c *Client) ToolsList(ctx context.Context) (json.RawMessage, error) {
	return c.call(ctx, "tools/list", map[string]json.RawMessage{}, nil)
}

// Do performs req on the service: a direct method, or tools/call. The
// service's answer (a result or a JSON-RPC error) is the Response, mapped
// back as the core mapped it to the wire; err is the exchange's failure
// (see call), never an answer. When req.Progress is set the request asks
// for progress, and req.Progress receives each update the service sends
// (on this goroutine, before Do returns); the message is the service's
// text, as it sent it.
func (c *Client) Do(ctx context.Context, req toolbus.Request) (toolbus.Response, error) {
	args := json.RawMessage(req.Args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	method, params := "tools/call", map[string]json.RawMessage{"name": marshal(req.Name), "arguments": args}
	if req.Direct {
		// A direct method's params are its arguments (an object).
		method, params = req.Name, map[string]json.RawMessage{}
		if err := json.Unmarshal(args, &params); err != nil || params == nil {
			return toolbus.Response{}, fmt.Errorf("mcp: encode %s: the arguments are not an object", method)
		}
	}
	result, err := c.call(ctx, method, params, req.Progress)
	var re *RPCError
	if errors.As(err, &re) {
		return responseOfError(re), nil
	}
	if err != nil {
		return toolbus.Response{}, err
	}
	if req.Direct {
		return toolbus.Response{Body: result}, nil
	}
	var res struct {
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return toolbus.Response{Stage: toolbus.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "unreadable reply"}}, nil
	}
	out := toolbus.Response{Body: res.Structured}
	if res.IsError {
		var env struct {
			Error *toolbus.ToolError `json:"error"`
		}
		_ = json.Unmarshal(res.Structured, &env)
		out.Err, out.Stage = env.Error, toolbus.StageExecute
		if out.Err == nil {
			out.Err = &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "the call failed"}
		}
	}
	return out, nil
}

// responseOfError maps a JSON-RPC error back to the stage it stands for:
// -32601 resolve, -32602 validate (resolve for an unknown tool), anything
// else execute; error.data is the ToolError when it is one.
func responseOfError(re *RPCError) toolbus.Response {
	var te *toolbus.ToolError
	if len(re.Data) > 0 {
		_ = json.Unmarshal(re.Data, &te)
	}
	if te == nil {
		te = &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeSchemaInvalid, Message: re.Message}
	}
	stage := toolbus.StageExecute
	switch re.Code {
	case CodeInvalidParams:
		stage = toolbus.StageValidate
		if te.Code == toolbus.CodeUnknownTool {
			stage = toolbus.StageResolve
		}
	case CodeMethodNotFound:
		stage = toolbus.StageResolve
	}
	return toolbus.Response{Err: te, Stage: stage}
}
