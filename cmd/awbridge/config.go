package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/config"
)

func cmdConfig(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "config")
	cf := config.Bind(fs)
	asJSON := fs.Bool("json", false, "print the settings alone on stdout as JSON")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	l, code := loadConfig(e, cf)
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
