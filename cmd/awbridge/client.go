package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
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

// serviceCaller is the running service as a caller.
type serviceCaller struct {
	*mcp.Client
	// history bounds an exchange of a tool reading ActivityWatch's
	// history: one read may take activitywatch.history_timeout.
	history time.Duration
}

// serviceTimeout bounds one exchange with the service: its sources'
// deadlines and a margin.
func serviceTimeout(c config.Config) time.Duration {
	return max(c.AW.Timeout, c.Sidecar.Timeout) + 3*time.Second
}

func newServiceCaller(conn net.Conn, c config.Config) serviceCaller {
	return serviceCaller{mcp.NewClient(conn, serviceTimeout(c)), max(serviceTimeout(c), c.AW.HistoryTimeout+3*time.Second)}
}

func (c serviceCaller) Close() { c.Client.Close() }

// failed says why an exchange with the service failed.
func (c serviceCaller) failed(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errors.New("interrupted")
	case errors.Is(err, mcp.ErrNoAnswer):
		return fmt.Errorf("the awbridge service did not answer within %s (is it stuck? 'awbridge restart' restarts it; --no-relay answers from this process)", c.Timeout)
	}
	return fmt.Errorf("the awbridge service went away before answering (%w)", errors.Unwrap(err))
}

func (c serviceCaller) ToolsList(ctx context.Context) (json.RawMessage, error) {
	list, err := c.Client.ToolsList(ctx)
	var re *mcp.RPCError
	switch {
	case errors.As(err, &re):
		return nil, fmt.Errorf("the awbridge service refused tools/list: %s", oneLine(re.Message))
	case err != nil:
		return nil, c.failed(err)
	}
	return list, nil
}

// Call performs req on the service.
func (c serviceCaller) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	if engine.ReadsHistory(req.Name) {
		defer func(t time.Duration) { c.Timeout = t }(c.Timeout)
		c.Timeout = c.history
	}
	out, err := c.Do(ctx, req)
	if err != nil {
		return toolbus.Response{Stage: toolbus.StageExecute, Err: &toolbus.ToolError{Kind: toolbus.ExecutionError,
			Code: "ServiceUnavailable", Retryable: true, Message: c.failed(err).Error()}}
	}
	return out
}

// sayFailed prints the line a terminal command ends with when its call
// failed (the error's message, without its kind and code) and returns
// exitUsage.
func sayFailed(e *env, name string, te *toolbus.ToolError) int {
	msg := te.Message
	if msg == "" {
		msg = te.Error()
	}
	fmt.Fprintf(e.stderr, "awbridge %s: %s\n", name, oneLine(msg))
	return exitUsage
}
