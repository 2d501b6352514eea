package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/awbridge/awbridge/engine"
)

func cmdNowframe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "nowframe")
	reason := fs.String("reason", "cli", "the frame's reason")
	asJSON := fs.Bool("json", false, "print the frame alone on stdout")
	noRelay := fs.Bool("no-relay", false, "build the frame in this process even when the service runs")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	c, via := openCaller(e, "nowframe", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	params, _ := json.Marshal(map[string]string{"reason": *reason})
	out := c.Call(ctx, engine.Request{Kind: engine.KindDirect, Name: "nowframe.build", Args: params})
	if out.Err != nil {
		return sayFailed(e, "nowframe", out.Err)
	}
	if *asJSON {
		fmt.Fprintln(e.stdout, string(withServedBy(out.Body, via)))
	} else {
		printFrame(e.stdout, out.Body)
	}
	// Exit 1 when ActivityWatch did not answer: the frame is best-effort,
	// but a script should notice.
	var f struct {
		Sources struct {
			ActivityWatch struct {
				OK bool `json:"ok"`
			} `json:"activitywatch"`
		} `json:"sources"`
	}
	if json.Unmarshal(out.Body, &f) == nil && !f.Sources.ActivityWatch.OK {
		return exitDegraded
	}
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

// withServedBy adds "served_by" to a JSON object (the frame or envelope a
// terminal command prints alone on stdout).
func withServedBy(obj []byte, via string) []byte {
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	out := append([]byte{}, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	return append(out, `"served_by":"`+via+`"}`...)
}
