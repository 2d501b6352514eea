package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
)

// masked stands for a secret that is set but not shown.
const masked = "********"

// cmdConfig prints each effective setting and where it came from, then
// what another command would refuse (exit 2) and warnings.
func cmdConfig(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "config")
	asJSON := fs.Bool("json", false, "print the settings alone on stdout as JSON")
	showSecrets := fs.Bool("show-secrets", false, "show the HTTP bearer token and the ActivityWatch API key instead of "+masked)
	l, _, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	cenv := config.Env{Lookup: e.lookup, GOOS: runtime.GOOS}
	problems := configProblems(e, l, fs)
	warnings := config.UnknownEnv(envNames(e), "AWBRIDGE_CPUPROFILE")
	sock := config.ResolveSocket(cenv, os.Getuid())
	settings := append([]config.Setting(nil), l.Settings...)
	if *showSecrets {
		for i := range settings {
			if settings[i].Secret {
				settings[i].Value, _ = l.Unmasked(settings[i].Key)
			}
		}
	}
	tokenPath := filepath.Join(l.Config.Paths.StateDir, httpTokenFile)
	raw, _ := os.ReadFile(tokenPath)
	token := strings.TrimSpace(string(raw))
	shownToken := token
	if token != "" && !*showSecrets {
		shownToken = masked
	}

	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false) // rules hold "=>"
		_ = enc.Encode(map[string]any{
			"file": l.File, "looked_for": l.LookedFor, "settings": settings,
			"socket": sock.Path, "socket_note": sock.Note,
			"http_token_file": tokenPath, "http_token": shownToken,
			"problems": nonNil(problems), "warnings": nonNil(warnings),
		})
	} else {
		fmt.Fprintln(e.stdout, "config file: "+configFileLine(l))
		for _, s := range settings {
			origin := string(s.Source)
			if s.Origin != "" {
				origin += " " + s.Origin
			}
			fmt.Fprintf(e.stdout, "%-30s %-32s %s\n", s.Key, s.TOML(), origin)
		}
		line := "service socket: " + sock.Path
		if sock.Note != "" {
			line += " (" + sock.Note + ")"
		}
		fmt.Fprintln(e.stdout, line)
		switch {
		case l.Config.Server.HTTPToken == "none":
			fmt.Fprintln(e.stdout, "HTTP bearer token: none (server.http_token is \"none\")")
		case token == "":
			fmt.Fprintf(e.stdout, "HTTP bearer token: made at %s when `serve` first starts with server.http set\n", tokenPath)
		case *showSecrets:
			fmt.Fprintf(e.stdout, "HTTP bearer token (%s): %s\n", tokenPath, token)
		default:
			fmt.Fprintf(e.stdout, "HTTP bearer token (%s): %s (--show-secrets shows it)\n", tokenPath, masked)
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "awbridge config: warning: "+w)
	}
	for _, p := range problems {
		fmt.Fprintln(e.stderr, p)
	}
	if len(problems) > 0 {
		return exitUsage
	}
	return exitOK
}

// configFileLine says which config file was read, or which one was looked
// for and why none was read.
func configFileLine(l *config.Loaded) string {
	switch {
	case l.File != "" && l.FileSource == config.SourceDefault:
		return l.File
	case l.File != "" && l.FileSource == config.SourceFlag:
		return l.File + " (from --config)"
	case l.File != "":
		return l.File + " (from " + config.ConfigEnv + ")"
	case l.LookedFor != "":
		return l.LookedFor + " (not found; defaults apply)"
	case l.FileSource == config.SourceFlag:
		return "none (--config is empty; defaults apply)"
	case l.FileSource == config.SourceEnv:
		return "none (" + config.ConfigEnv + " is empty; defaults apply)"
	}
	return "none (the home folder is unknown, so there is no default file; defaults apply)"
}

// configProblems lists what the other commands refuse beyond what Load
// refused: a rate limit for no tool, unwatchable protect lists.
func configProblems(e *env, l *config.Loaded, fs *flag.FlagSet) []string {
	var out []string
	if err := l.CheckTools(engine.ToolNames()); err != nil {
		out = append(out, oneLine(err.Error()))
	}
	if _, _, err := protectItems(e, l, fs, configProtectLists, false); err != nil {
		out = append(out, "awbridge config: "+oneLine(err.Error()))
	}
	return out
}

// envNames lists the environment variables e.lookup sees.
func envNames(e *env) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := e.lookup(name); ok && name != "" {
			out = append(out, name)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
