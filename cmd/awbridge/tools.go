package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/config"
)

func cmdTools(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "tools")
	cf := config.Bind(fs)
	asJSON := fs.Bool("json", false, "print the tools/list result alone on stdout")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	l, code := loadConfig(e, cf)
	if l == nil {
		return code
	}
	eng, err := newEngine(e, l, newLogger(e, l.Config.Log.Level))
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge tools: "+oneLine(err.Error()))
		return exitUsage
	}
	defer eng.Close()
	list := eng.ToolsList()
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
