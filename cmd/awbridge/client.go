package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/toolbus"
)

// caller is what the terminal commands call: the running service over its
// socket, or an engine in this process.
type caller interface {
	Call(ctx context.Context, req engine.Request) engine.Outcome
	ToolsList() json.RawMessage
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
		return &serviceCaller{conn: conn, r: newReader(conn)}, servedByService
	}
	eng := startEngine(e, name, l, log, d)
	if eng == nil {
		return nil, ""
	}
	return engineCaller{eng}, servedByInProcess
}

func newReader(conn net.Conn) *bufio.Reader { return bufio.NewReaderSize(conn, 1<<20) }

type engineCaller struct{ *engine.Engine }

func (c engineCaller) Close() { c.Engine.Close() }

// serviceCaller speaks line JSON-RPC to the service, one call at a time.
type serviceCaller struct {
	conn net.Conn
	r    *bufio.Reader
	id   int
}

func (c *serviceCaller) Close() { c.conn.Close() }

type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int                `json:"code"`
		Message string             `json:"message"`
		Data    *toolbus.ToolError `json:"data"`
	} `json:"error"`
}

func (c *serviceCaller) roundTrip(method string, params any) (rpcReply, error) {
	c.id++
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return rpcReply{}, err
	}
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return rpcReply{}, fmt.Errorf("the service went away: %w", err)
	}
	for {
		l, err := c.r.ReadBytes('\n')
		if err != nil {
			return rpcReply{}, fmt.Errorf("the service went away: %w", err)
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

func (c *serviceCaller) ToolsList() json.RawMessage {
	r, err := c.roundTrip("tools/list", map[string]any{})
	if err != nil || r.Error != nil {
		return json.RawMessage(`{"tools":[]}`)
	}
	return r.Result
}

// Call maps a Request to the wire and the reply back to an Outcome.
func (c *serviceCaller) Call(_ context.Context, req engine.Request) engine.Outcome {
	var args any = json.RawMessage(req.Args)
	if len(req.Args) == 0 {
		args = map[string]any{}
	}
	method, params := req.Name, args
	if req.Kind == engine.KindTool {
		method, params = "tools/call", map[string]any{"name": req.Name, "arguments": args}
	}
	r, err := c.roundTrip(method, params)
	if err != nil {
		return engine.Outcome{Stage: engine.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.ExecutionError,
			Code: "ServiceUnavailable", Retryable: true, Message: err.Error()}}
	}
	if r.Error != nil {
		te := r.Error.Data
		if te == nil {
			te = &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeSchemaInvalid, Message: r.Error.Message}
		}
		stage := engine.StageExecute
		switch r.Error.Code {
		case -32602:
			stage = engine.StageValidate
			if te.Code == toolbus.CodeUnknownTool {
				stage = engine.StageResolve
			}
		case -32601:
			stage = engine.StageResolve
		}
		return engine.Outcome{Err: te, Stage: stage}
	}
	if req.Kind == engine.KindDirect {
		return engine.Outcome{Body: r.Result}
	}
	var res struct {
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return engine.Outcome{Stage: engine.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "unreadable reply"}}
	}
	out := engine.Outcome{Body: res.Structured}
	if res.IsError {
		var env struct {
			Error *toolbus.ToolError `json:"error"`
		}
		_ = json.Unmarshal(res.Structured, &env)
		out.Err, out.Stage = env.Error, engine.StageExecute
		if out.Err == nil {
			out.Err = &toolbus.ToolError{Kind: toolbus.SystemError, Code: toolbus.CodeInternal, Message: "the call failed"}
		}
	}
	return out
}
