package main

import (
	"context"
	"encoding/json"
	"fmt"
)

func cmdConfig(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "config")
	asJSON := fs.Bool("json", false, "print the settings alone on stdout as JSON")
	l, _, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"file": l.File, "settings": l.Settings})
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	file := l.File
	if file == "" {
		file = "(none; defaults apply)"
	}
	fmt.Fprintf(e.stdout, "config file: %s\n", file)
	for _, s := range l.Settings {
		origin := string(s.Source)
		if s.Origin != "" {
			origin += " " + s.Origin
		}
		fmt.Fprintf(e.stdout, "%-30s %-32q %s\n", s.Key, s.Value, origin)
	}
	return exitOK
}
