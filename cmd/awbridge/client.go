package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

// caller is what the terminal commands call: the running service over its
// socket, or an engine in this process.
type caller interface {
	Call(ctx context.Context, req toolbus.Request) toolbus.Response
	ToolsList(ctx context.Context) (json.RawMessage, error)
	Close()
}

// Who answered a terminal command (--json puts it in served_by).
const (
	servedByService   = "service"
	servedByInProcess = "in-process"
)

// openCaller connects to the service when it answers (unless relaying is
// off), else starts an engine here. nil means stop with exitUsage.
func openCaller(e *env, name string, l *config.Loaded, log zerolog.Logger, d engine.Deps, noRelay bool) (caller, string) {
	if conn := dialService(e, l.Config, noRelay); conn != nil {
		return newServiceCaller(conn, l.Config), servedByService
	}
	eng := startEngine(e, name, l, log, d)
	if eng == nil {
		return nil, ""
	}
	return engineCaller{eng}, servedByInProcess
}

type engineCaller struct{ *engine.Engine }

func (c engineCaller) Close() { c.Engine.Close() }

func (c engineCaller) ToolsList(context.Context) (json.RawMessage, error) {
	return c.Engine.ToolsList(mcp.LatestVersion), nil
}

// serviceCaller speaks line JSON-RPC to the service, one call at a time.
// Each exchange ends when its context does (Ctrl-C) or after timeout: a
// service that accepts and never answers cannot hold a terminal command.
type serviceCaller struct {
	conn    net.Conn
	r       *bufio.Reader
	id      int
	timeout time.Duration
}

// serviceTimeout bounds one exchange with the service: its sources'
// deadlines (the service waits for them at most) and a margin.
func serviceTimeout(c config.Config) time.Duration {
	return max(c.AW.Timeout, c.Sidecar.Timeout) + 3*time.Second
}

func newServiceCaller(conn net.Conn, c config.Config) *serviceCaller {
	return &serviceCaller{conn: conn, r: bufio.NewReaderSize(conn, 1<<20), timeout: serviceTimeout(c)}
}

// errInterrupted is an exchange ended by the command's context (Ctrl-C).
var errInterrupted = errors.New("interrupted")

func (c *serviceCaller) Close() { c.conn.Close() }

type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int                `json:"code"`
		Message string             `json:"message"`
		Data    *toolbus.ToolError `json:"data"`
	} `json:"error"`
}

func (c *serviceCaller) roundTrip(ctx context.Context, method string, params any) (rpcReply, error) {
	c.id++
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return rpcReply{}, err
	}
	_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Now()) })
	defer stop()
	failed := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return errInterrupted
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("the awbridge service did not answer within %s (is it stuck? 'awbridge restart' restarts it; --no-relay answers from this process)", c.timeout)
		}
		return fmt.Errorf("the awbridge service went away before answering (%w)", err)
	}
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return rpcReply{}, failed(err)
	}
	for {
		l, err := c.r.ReadBytes('\n')
		if err != nil {
			return rpcReply{}, failed(err)
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(l, &probe) != nil || string(probe.ID) != strconv.Itoa(c.id) {
			continue // a notification, or not ours
		}
		var r rpcReply
		return r, json.Unmarshal(l, &r)
	}
}

func (c *serviceCaller) ToolsList(ctx context.Context) (json.RawMessage, error) {
	r, err := c.roundTrip(ctx, "tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, fmt.Errorf("the awbridge service refused tools/list: %s", oneLine(r.Error.Message))
	}
	return r.Result, nil
}

// Call maps a Request to the wire and the reply back to an Outcome.
func (c *serviceCaller) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	var args any = json.RawMessage(req.Args)
	if len(req.Args) == 0 {
		args = map[string]any{}
	}
	method, params := req.Name, args
	if !req.Direct {
		method, params = "tools/call", map[string]any{"name": req.Name, "arguments": args}
	}
	r, err := c.roundTrip(ctx, method, params)
	if err != nil {
		return toolbus.Response{Stage: toolbus.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.ExecutionError,
			Code: "ServiceUnavailable", Retryable: true, Message: err.Error()}}
	}
	if r.Error != nil {
		te := r.Error.Data
		if te == nil {
			te = &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeSchemaInvalid, Message: r.Error.Message}
		}
		stage := toolbus.StageExecute
		switch r.Error.Code {
		case -32602:
			stage = toolbus.StageValidate
			if te.Code == toolbus.CodeUnknownTool {
				stage = toolbus.StageResolve
			}
		case -32601:
			stage = toolbus.StageResolve
		}
		return toolbus.Response{Err: te, Stage: stage}
	}
	if req.Direct {
		return toolbus.Response{Body: r.Result}
	}
	var res struct {
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return toolbus.Response{Stage: toolbus.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "unreadable reply"}}
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
	return out
}

// sayFailed prints the one line a terminal command ends with when its call
// failed: the command's name and the error's sentence (its message, without
// the kind and code a program reads in --json). It returns the exit code:
// exitUsage (cannot check), the same for an interrupted call.
func sayFailed(e *env, name string, te *toolbus.ToolError) int {
	msg := te.Message
	if msg == "" {
		msg = te.Error()
	}
	fmt.Fprintf(e.stderr, "awbridge %s: %s\n", name, oneLine(msg))
	return exitUsage
}
