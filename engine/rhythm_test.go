package engine

// serve's poll rhythm through the engine: calls and subscriptions (both
// MCP eras) keep the 1 s rhythm, nothing else does. Each test runs in a
// synctest bubble, ActivityWatch answering in memory, so the 30 s sleeps
// at rest take no real time.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

// memTransport answers HTTP requests from a handler in memory, counting
// them.
type memTransport struct {
	h    http.Handler
	hits atomic.Int64
}

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	m.hits.Add(1)
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}

// runningEngine is an engine whose Run (serve's poller) runs until the
// test ends, reading the recorded ActivityWatch in memory. Call inside a
// synctest bubble.
func runningEngine(t *testing.T) (*Engine, *memTransport) {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr := &memTransport{h: awfixture.NewServer(xs)}
	c := config.Defaults()
	c.AW.URL = "http://aw.invalid:5600"
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		e.Close()
	})
	<-e.Warm()
	synctest.Wait()
	return e, tr
}

// polls counts the frames built so far (the poller's, while the test
// makes no call).
func polls(e *Engine) int {
	if f := e.builder.Latest(); f != nil {
		return int(f.Version)
	}
	return 0
}

// pass lets d pass in the bubble and returns the poller's frames
// meanwhile.
func pass(e *Engine, d time.Duration) int {
	before := polls(e)
	time.Sleep(d)
	synctest.Wait()
	return polls(e) - before
}

// At rest serve reads ActivityWatch once per 30 s. A call then gets a
// fresh frame (the warm one is older than its max_age_ms), and the poller
// goes back to one frame a second at once.
func TestServeRestsUntilACallComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, tr := runningEngine(t)
		reads := tr.hits.Load()
		if n := pass(e, 25*time.Second); n != 0 || tr.hits.Load() != reads {
			t.Fatalf("25 s at rest: %d frames, %d reads of ActivityWatch; want none", n, tr.hits.Load()-reads)
		}
		warm := e.builder.Latest()
		out := e.Call(context.Background(), toolbus.Request{Name: "nowframe_build", Args: json.RawMessage(`{}`)})
		var env struct {
			Success bool `json:"success"`
			Result  struct {
				Version uint64 `json:"frame_version"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out.Body, &env); err != nil || !env.Success {
			t.Fatalf("nowframe_build: %v %s", err, out.Body)
		}
		// Fresh: built for the call, or by the poller the call woke at the
		// same instant (the call then joins it, a cache hit on a new frame).
		if env.Result.Version <= warm.Version {
			t.Fatalf("a call at rest was answered from the 25 s old frame: %s", out.Body)
		}
		if !e.poller.Active() {
			t.Fatal("the poller is not active after a call")
		}
		// The next poll comes within a second, not after the rest of the
		// 30 s sleep.
		if n := pass(e, 1100*time.Millisecond); n < 1 {
			t.Fatal("no frame from the poller in the second after a call at rest")
		}
		if n := pass(e, 10*time.Second); n < 9 {
			t.Fatalf("%d frames in the 10 s after a call, want one a second", n)
		}
		// Five minutes after the last call it rests again.
		pass(e, 5*time.Minute)
		if n := pass(e, time.Minute); n > 2 {
			t.Fatalf("%d frames in a minute, 5 minutes after the last call; want the rest rhythm", n)
		}
	})
}

// mcpSession is a real MCP session over pipes with the engine behind it.
type mcpSession struct {
	in     *io.PipeWriter
	lines  *bufio.Scanner
	done   chan error
	closed sync.Once
}

func startSession(t *testing.T, e *Engine) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &mcpSession{in: inW, lines: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.lines.Buffer(nil, 1<<20)
	go func() {
		s.done <- mcp.NewServer(e, mcp.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { s.close(t) })
	return s
}

// ask sends line and returns the next line that contains want.
func (s *mcpSession) ask(t *testing.T, line, want string) string {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	for s.lines.Scan() {
		if strings.Contains(s.lines.Text(), want) {
			return s.lines.Text()
		}
	}
	t.Fatalf("the session ended before %s", want)
	return ""
}

// close ends the session (once) and waits for it.
func (s *mcpSession) close(t *testing.T) {
	t.Helper()
	s.closed.Do(func() {
		s.in.Close()
		for s.lines.Scan() {
		}
		if err := <-s.done; err != nil {
			t.Error(err)
		}
	})
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}`

// A subscription to the frame or health keeps the 1 s rhythm for as long
// as it lasts, well beyond the 5 minutes a call is worth, in both MCP
// eras: resources/subscribe until resources/unsubscribe, and
// subscriptions/listen until the client cancels it or the session ends.
// Neither subscribing nor unsubscribing counts as a call.
func TestSubscriptionsKeepServeActive(t *testing.T) {
	for _, tc := range []struct {
		name, uri string
		sub       func(t *testing.T, s *mcpSession, uri string)
		unsub     func(t *testing.T, s *mcpSession, uri string)
	}{
		{"legacy frame", "nowframe://current", legacySub, legacyUnsub},
		{"legacy health", "health://current", legacySub, legacyUnsub},
		{"modern frame", "nowframe://current", modernListen, modernCancel},
		{"modern session ends", "health://current", modernListen, func(t *testing.T, s *mcpSession, _ string) { s.close(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, _ := runningEngine(t)
				s := startSession(t, e)
				tc.sub(t, s, tc.uri)
				if !e.poller.Active() {
					t.Fatal("not active once the subscription was acknowledged")
				}
				if n := pass(e, 1100*time.Millisecond); n < 1 {
					t.Fatal("no frame in the second after a subscription at rest")
				}
				if n := pass(e, 10*time.Minute); n < 540 {
					t.Fatalf("%d frames in 10 minutes of a subscription, want one a second", n)
				}
				tc.unsub(t, s, tc.uri)
				synctest.Wait()
				if e.poller.Active() {
					t.Fatal("still active after the subscription ended")
				}
				pass(e, 2*time.Second)
				if n := pass(e, time.Minute); n > 2 {
					t.Fatalf("%d frames in the minute after the subscription ended; want the rest rhythm", n)
				}
			})
		})
	}
}

func legacySub(t *testing.T, s *mcpSession, uri string) {
	s.ask(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, `"id":1`)
	s.ask(t, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`, `"id":2,"result":{}`)
}

func legacyUnsub(t *testing.T, s *mcpSession, uri string) {
	s.ask(t, `{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"`+uri+`"}}`, `"id":3,"result":{}`)
}

func modernListen(t *testing.T, s *mcpSession, uri string) {
	s.ask(t, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"resourceSubscriptions":["`+uri+`"]}}}`,
		`notifications/subscriptions/acknowledged`)
}

func modernCancel(t *testing.T, s *mcpSession, _ string) {
	s.ask(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`+"\n"+
		`{"jsonrpc":"2.0","id":"p","method":"ping","params":{`+modernMeta+`}}`, `"id":"p"`)
}
