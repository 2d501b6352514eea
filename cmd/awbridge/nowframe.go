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
