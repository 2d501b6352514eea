package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/engine"
)

func cmdTools(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "tools")
	noRelay := fs.Bool("no-relay", false, "list from this process even when the service runs")
	asJSON := fs.Bool("json", false, "print the tools/list result alone on stdout")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	c, _ := openCaller(e, "tools", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	list, err := c.ToolsList(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge tools: "+oneLine(err.Error()))
		return exitUsage
	}
	if *asJSON {
		fmt.Fprintln(e.stdout, string(list))
		return exitOK
	}
	var v struct {
		Tools []struct {
			Name, Title string
		} `json:"tools"`
	}
	_ = json.Unmarshal(list, &v)
	for _, t := range v.Tools {
		fmt.Fprintf(e.stdout, "%-16s %s\n", t.Name, t.Title)
	}
	return exitOK
}
