package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/engine"
)

func cmdCall(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "call")
	noRelay := fs.Bool("no-relay", false, "call in this process even when the service runs")
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
		if code := parse(fs, args); code >= 0 {
			return code
		}
		fmt.Fprintln(e.stderr, "awbridge call: name a tool, e.g. awbridge call help")
		return exitUsage
	}
	name, rest := args[0], args[1:]
	var raw json.RawMessage
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		raw, rest = json.RawMessage(rest[0]), rest[1:]
		if !json.Valid(raw) {
			fmt.Fprintln(e.stderr, "awbridge call: JSON-ARGS is not valid JSON")
			return exitUsage
		}
	}
	l, log, code := prepare(e, fs, rest)
	if l == nil {
		return code
	}
	c, via := openCaller(e, "call", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	out := c.Call(ctx, engine.Request{Kind: engine.KindTool, Name: name, Args: raw})
	if out.Stage == engine.StageResolve || out.Stage == engine.StageValidate {
		fmt.Fprintln(e.stderr, "awbridge call: "+oneLine(out.Err.Error()))
		if len(out.Err.DidYouMean) > 0 {
			fmt.Fprintf(e.stderr, "did you mean: %v\n", out.Err.DidYouMean)
		}
		return exitUsage
	}
	fmt.Fprintln(e.stdout, string(withServedBy(out.Body, via)))
	if out.Err != nil {
		return exitDegraded
	}
	return exitOK
}
