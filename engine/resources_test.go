package engine_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/mcp"
)

// Resources over a real session: list, read, subscribe; a change in
// health (ActivityWatch goes down) arrives as notifications/resources/updated.
func TestResourcesReadAndSubscribe(t *testing.T) {
	c := config.Defaults()
	c.AW.URL = "http://127.0.0.1:1" // refused: health will change from checking to degraded
	c.AW.Timeout = 300 * time.Millisecond
	e, err := engine.New(engine.Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := mcp.NewServer(e, mcp.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error)
	go func() { done <- srv.Serve(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(s string) { io.WriteString(inW, s+"\n") }
	next := func() string {
		if !lines.Scan() {
			t.Fatal("the session ended")
		}
		return lines.Text()
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	if l := next(); !strings.Contains(l, `"resources":{"subscribe":true`) {
		t.Fatalf("initialize: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
	if l := next(); !strings.Contains(l, `"uri":"nowframe://current"`) || !strings.Contains(l, `"uri":"health://current"`) {
		t.Fatalf("list: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"health://current"}}`)
	if l := next(); l != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("subscribe: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"health://current"}}`)
	got := map[string]bool{}
	for range 2 { // the read's reply and the update, in either order
		l := next()
		switch {
		case strings.Contains(l, `"id":4`) && strings.Contains(l, `"contents":[{"mimeType":"application/json","text":`):
			got["read"] = true
		case strings.Contains(l, `"method":"notifications/resources/updated","params":{"uri":"health://current"}`):
			got["update"] = true
		default:
			t.Fatalf("unexpected line: %s", l)
		}
	}
	if !got["read"] || !got["update"] {
		t.Fatalf("got %v", got)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"nope://x"}}`)
	if l := next(); !strings.Contains(l, `"code":-32602`) {
		t.Fatalf("unknown resource: %s", l)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
