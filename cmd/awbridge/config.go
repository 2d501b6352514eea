package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func cmdConfig(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "config")
	asJSON := fs.Bool("json", false, "print the settings alone on stdout as JSON")
	l, _, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	tokenPath := filepath.Join(l.Config.Paths.StateDir, httpTokenFile)
	token, _ := os.ReadFile(tokenPath)
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"file": l.File, "settings": l.Settings,
			"http_token_file": tokenPath, "http_token": strings.TrimSpace(string(token))})
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
	if len(token) > 0 {
		fmt.Fprintf(e.stdout, "HTTP bearer token (%s): %s\n", tokenPath, strings.TrimSpace(string(token)))
	} else {
		fmt.Fprintf(e.stdout, "HTTP bearer token: made at %s when `serve` first starts with server.http set\n", tokenPath)
	}
	return exitOK
}
