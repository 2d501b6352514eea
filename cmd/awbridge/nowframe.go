package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
)

func cmdNowframe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "nowframe")
	cf := config.Bind(fs)
	reason := fs.String("reason", "cli", "the frame's reason")
	asJSON := fs.Bool("json", false, "print the frame alone on stdout")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	l, code := loadConfig(e, cf)
	if l == nil {
		return code
	}
	log := newLogger(e, l.Config.Log.Level)
	eng, err := newEngine(e, l, log)
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge nowframe: "+oneLine(err.Error()))
		return exitUsage
	}
	defer eng.Close()
	params, _ := json.Marshal(map[string]string{"reason": *reason})
	out := eng.Call(ctx, engine.Request{Kind: engine.KindDirect, Name: "nowframe.build", Args: params})
	if out.Err != nil {
		fmt.Fprintln(e.stderr, "awbridge nowframe: "+oneLine(out.Err.Error()))
		return exitUsage
	}
	if *asJSON {
		fmt.Fprintln(e.stdout, string(out.Body))
		return exitOK
	}
	printFrame(e.stdout, out.Body)
	return exitOK
}

// frameView is what the terminal shows of a frame.
type frameView struct {
	Timestamp string `json:"timestamp"`
	Now       struct {
		Summary string `json:"summary"`
	} `json:"now"`
	Sources map[string]struct {
		Configured bool    `json:"configured"`
		OK         bool    `json:"ok"`
		Error      *string `json:"error"`
	} `json:"sources"`
}

func printFrame(w io.Writer, body []byte) {
	var v frameView
	if err := json.Unmarshal(body, &v); err != nil {
		fmt.Fprintln(w, string(body))
		return
	}
	fmt.Fprintf(w, "%s  %s\n", v.Timestamp, v.Now.Summary)
	for _, name := range []string{"activitywatch", "sidecar"} {
		s := v.Sources[name]
		if s.Configured && !s.OK && s.Error != nil {
			fmt.Fprintf(w, "  %s failed: %s\n", name, oneLine(*s.Error))
		}
	}
}

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

func cmdCall(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "call")
	cf := config.Bind(fs)
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
	if code := parse(fs, rest); code >= 0 {
		return code
	}
	l, code := loadConfig(e, cf)
	if l == nil {
		return code
	}
	eng, err := newEngine(e, l, newLogger(e, l.Config.Log.Level))
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge call: "+oneLine(err.Error()))
		return exitUsage
	}
	defer eng.Close()
	out := eng.Call(ctx, engine.Request{Kind: engine.KindTool, Name: name, Args: raw, ProtocolVersion: "2025-11-25"})
	if out.Stage == engine.StageResolve || out.Stage == engine.StageValidate {
		fmt.Fprintln(e.stderr, "awbridge call: "+oneLine(out.Err.Error()))
		if len(out.Err.DidYouMean) > 0 {
			fmt.Fprintf(e.stderr, "did you mean: %v\n", out.Err.DidYouMean)
		}
		return exitUsage
	}
	fmt.Fprintln(e.stdout, string(out.Body))
	if out.Err != nil {
		return exitDegraded
	}
	return exitOK
}

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

func cmdVersion(_ context.Context, e *env, _ []string) int {
	fmt.Fprintln(e.stdout, "awbridge "+e.version)
	return exitOK
}
