package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/toolbus"
)

func cmdCall(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "call")
	noRelay := fs.Bool("no-relay", false, "call in this process even when the service runs")
	l, log, code := prepareArgs(e, fs, args, 2)
	if l == nil {
		return code
	}
	if fs.NArg() == 0 || fs.Arg(0) == "" {
		fmt.Fprintln(e.stderr, "awbridge call: name a tool, e.g. awbridge call help")
		return exitUsage
	}
	name := fs.Arg(0)
	var raw json.RawMessage
	if fs.NArg() > 1 {
		raw = json.RawMessage(fs.Arg(1))
		if !json.Valid(raw) {
			fmt.Fprintln(e.stderr, "awbridge call: JSON-ARGS is not valid JSON")
			return exitUsage
		}
	}
	c, via := openCaller(e, "call", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	out := c.Call(ctx, toolbus.Request{Name: name, Args: raw})
	if out.Err != nil && (out.Stage == toolbus.StageResolve || out.Stage == toolbus.StageValidate || len(out.Body) == 0) {
		return sayFailed(e, "call", callRefusal(out.Err))
	}
	fmt.Fprintln(e.stdout, string(withServedBy(out.Body, via)))
	if out.Err != nil {
		return exitDegraded
	}
	return exitOK
}

// callRefusal is the refused call's error as one sentence: the message,
// its suggestions once ("did you mean A or B?"), or where to find the
// tools.
func callRefusal(te *toolbus.ToolError) *toolbus.ToolError {
	c := *te
	switch {
	case len(c.DidYouMean) > 0 && !strings.Contains(c.Message, "did you mean"):
		c.Message += "; did you mean " + strings.Join(c.DidYouMean, " or ") + "?"
	case c.Code == toolbus.CodeUnknownTool && len(c.DidYouMean) == 0:
		c.Message += "; run 'awbridge tools' to list them"
	}
	return &c
}
