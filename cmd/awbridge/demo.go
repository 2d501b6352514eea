package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/internal/text"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

// cmdDemo runs the simulator, a real engine and a real JSON-RPC session
// against it, shows an MCP exchange, then frames as they change.
func cmdDemo(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "demo")
	acceptConfig(fs)
	dur := fs.Duration("duration", 30*time.Second, "how long to watch frames change (0: until Ctrl-C)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	url, stop, err := startSim(ctx, "127.0.0.1:0", true)
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge demo: "+err.Error())
		return exitUsage
	}
	defer stop()
	fmt.Fprintf(e.stdout, "Simulated ActivityWatch (and its /probe sidecar) at %s\n\n", url)

	c := config.Defaults()
	c.AW.URL, c.Sidecar.URL = url, url
	c.Log.Level = "warn"
	log := newLogger(e, c)
	eng, err := engine.New(engine.Deps{Config: c, Logger: log, Version: e.version})
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge demo: "+err.Error())
		return exitUsage
	}
	defer eng.Close()

	if code := demoSession(ctx, e, eng); code != exitOK {
		return code
	}

	fmt.Fprintf(e.stdout, "\nWatching the simulated desktop (frames change as the simulated person works; Ctrl-C stops):\n")
	last := ""
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		out := eng.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build", Args: json.RawMessage(`{"reason":"demo"}`)})
		if out.Err == nil {
			if line := describeFrame(out.Body); line != last {
				fmt.Fprintf(e.stdout, "%s  %s\n", time.Now().Format(time.TimeOnly), line)
				last = line
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(e.stdout, "\nDone. Point an MCP client at `awbridge stdio` (see README) to use it with your own ActivityWatch.")
			return exitOK
		case <-tick.C:
		}
	}
}

// demoSession shows real JSON-RPC lines through the real MCP server.
func demoSession(ctx context.Context, e *env, eng *engine.Engine) int {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(eng, mcp.Options{DirectMethods: engine.DirectMethods(), ServerName: "awbridge", ServerVersion: e.version, Instructions: engine.Instructions})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = srv.Serve(ctx, inR, outW)
		outW.Close()
	})
	defer wg.Wait()
	defer inW.Close()
	replies := bufio.NewScanner(outR)
	replies.Buffer(make([]byte, 0, 64<<10), 4<<20)
	reqs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"system.health"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"reason":"demo"}}}`,
	}
	for _, r := range reqs {
		fmt.Fprintf(e.stdout, "-> %s\n", r)
		if _, err := io.WriteString(inW, r+"\n"); err != nil {
			return exitUsage
		}
		if !strings.Contains(r, `"id":`) {
			continue // a notification gets no reply
		}
		if !replies.Scan() {
			fmt.Fprintln(e.stderr, "awbridge demo: the session ended early")
			return exitUsage
		}
		fmt.Fprintf(e.stdout, "<- %s\n", clipLine(replies.Text(), 600))
		var reply struct {
			Result struct {
				StructuredContent struct {
					Result struct {
						Now json.RawMessage `json:"now"`
					} `json:"result"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		_ = json.Unmarshal(replies.Bytes(), &reply)
		if now := reply.Result.StructuredContent.Result.Now; len(now) > 0 && now[0] == '{' {
			var b bytes.Buffer
			if json.Indent(&b, now, "   ", "  ") == nil {
				fmt.Fprintf(e.stdout, "   its \"now\" part, what an assistant reads first:\n   %s\n", b.String())
			}
		}
	}
	return exitOK
}

// clipLine shortens s to about n bytes on a rune boundary, saying how long
// it was.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return text.Head(s, n) + fmt.Sprintf(" … (%d bytes)", len(s))
}

// describeFrame is one terminal line of what a frame says now.
func describeFrame(body []byte) string {
	var v frameView
	if json.Unmarshal(body, &v) != nil {
		return "(unreadable frame)"
	}
	win, br := v.Now.Window, v.Now.Browser
	line := v.Now.Summary
	switch {
	case win.Excluded:
		line += " | window: [excluded]"
	case win.Title != "":
		line += fmt.Sprintf(" | window: %q", clipLine(win.Title, 60))
	}
	if br.Focused && br.URL != "" {
		line += " | tab: " + clipLine(br.URL, 60)
	}
	return line
}
