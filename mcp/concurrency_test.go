package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// A blocked call does not delay ping: its answer comes first, even when the
// call holds the only in-flight slot.
func TestOutOfOrderReplies(t *testing.T) {
	g := newGate()
	c := startConn(t, NewServer(g, direct(Options{MaxInFlight: 1})))
	c.send(toolCall("1", "slow", `{}`))
	g.waitStarted(t, 1)
	c.send(ping("2"), `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, initLine("4", Version20250618))
	for _, want := range []string{"2", "3", "4"} {
		if r := c.recv(); string(r.ID) != want || r.Error != nil {
			t.Fatalf("reply %s, want a result for id %s while call 1 is blocked", r.Raw, want)
		}
	}
	g.release <- struct{}{}
	if r := c.recv(); string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("reply %s, want call 1", r.Raw)
	}
	if rest, err := c.closeAndWait(); err != nil || len(rest) != 0 {
		t.Fatalf("Serve = %v, rest %q", err, rest)
	}
}

// With MaxInFlight 2, a third call is not dispatched (and the line after it
// not read) until one of the first two finishes.
func TestInFlightCapPausesReading(t *testing.T) {
	g := newGate()
	srv := NewServer(g, direct(Options{MaxInFlight: 2}))
	paused := make(chan struct{}, 16)
	srv.hooks.readPaused = func() { paused <- struct{}{} }
	c := startConn(t, srv)

	c.send(toolCall("1", "a", `{}`), toolCall("2", "b", `{}`))
	g.waitStarted(t, 2)
	c.send(toolCall("3", "c", `{}`), ping("4"))
	select {
	case <-paused:
	case <-time.After(waitLimit):
		t.Fatal("the reader never waited for a slot")
	}
	if n := g.started64.Load(); n != 2 {
		t.Fatalf("%d calls started while the cap is 2", n)
	}

	g.release <- struct{}{}
	// The released call's reply comes before the ping: reading was paused
	// behind call 3 and resumes only once a slot is free.
	r := c.recv()
	if id := string(r.ID); id != "1" && id != "2" {
		t.Fatalf("first reply %s, want call 1 or 2", r.Raw)
	}
	started := g.waitStarted(t, 1)
	if started[0].Name != "c" {
		t.Fatalf("call %q started, want c", started[0].Name)
	}
	if r := c.recv(); string(r.ID) != "4" {
		t.Fatalf("reply %s, want the ping", r.Raw)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	rest, err := c.closeAndWait()
	if err != nil || len(rest) != 2 {
		t.Fatalf("Serve = %v, rest %q; want two more replies", err, rest)
	}
}

// notifications/cancelled cancels the ctx the backend sees, and no reply
// ever appears for that call.
func TestCancelledNotification(t *testing.T) {
	for _, id := range []string{`7`, `"seven"`, `"s\u0065ven"`} {
		t.Run(id, func(t *testing.T) {
			g := newGate()
			c := startConn(t, NewServer(g, direct(Options{})))
			c.send(toolCall(id, "slow", `{}`), toolCall("8", "other", `{}`))
			g.waitStarted(t, 2)
			rid := id
			if id == `"s\u0065ven"` {
				rid = `"seven"` // the same string, written differently
			}
			c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + rid + `,"reason":"user"}}`)
			select {
			case name := <-g.cancelled:
				if name != "slow" {
					t.Fatalf("cancelled %q, want slow", name)
				}
			case <-time.After(waitLimit):
				t.Fatal("the backend's ctx was not cancelled")
			}
			c.send(ping("9"))
			if r := c.recv(); string(r.ID) != "9" {
				t.Fatalf("reply %s, want the ping (the cancelled call must not answer)", r.Raw)
			}
			g.release <- struct{}{}
			rest, err := c.closeAndWait()
			if err != nil {
				t.Fatal(err)
			}
			if len(rest) != 1 || !strings.Contains(rest[0], `"id":8`) {
				t.Fatalf("after the cancel got %q, want only call 8's reply", rest)
			}
		})
	}
}

// A call that completes although it was cancelled has its reply dropped; a
// cancel for another id changes nothing.
func TestCancelledCallCompletingAnyway(t *testing.T) {
	g := newGate()
	g.ignoreCtx = true
	c := startConn(t, NewServer(g, direct(Options{})))
	c.send(toolCall("1", "a", `{}`), toolCall("2", "b", `{}`))
	g.waitStarted(t, 2)
	c.send(
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2"}}`, // a string, not the number 2
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
	)
	c.send(ping("3"))
	if r := c.recv(); string(r.ID) != "3" {
		t.Fatalf("reply %s, want the ping", r.Raw)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	rest, err := c.closeAndWait()
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || !strings.Contains(rest[0], `"id":2`) {
		t.Fatalf("got %q, want only call 2's reply", rest)
	}
}

// At the end of input every call in flight is answered before Serve returns.
func TestEOFWaitsForCalls(t *testing.T) {
	g := newGate()
	c := startConn(t, NewServer(g, direct(Options{})))
	c.send(toolCall("1", "a", `{}`), toolCall("2", "b", `{}`), `{"jsonrpc":"2.0","id":3,"method":"nowframe.build"}`)
	g.waitStarted(t, 3)
	c.in.Close()
	select {
	case err := <-c.done:
		t.Fatalf("Serve returned (%v) with 3 calls in flight", err)
	default:
	}
	for range 3 {
		g.release <- struct{}{}
	}
	rest, err := c.wait()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range rest {
		ids[string(parseLine(t, l).Reply.ID)] = true
	}
	if len(rest) != 3 || !ids["1"] || !ids["2"] || !ids["3"] {
		t.Fatalf("after EOF got %q, want the replies to 1, 2 and 3", rest)
	}
	if n := g.running.Load(); n != 0 {
		t.Fatalf("%d backend calls still running after Serve returned", n)
	}
}

// Cancelling Serve's ctx stops reading; calls that finish within the grace
// are answered and Serve returns nil.
func TestShutdownDrains(t *testing.T) {
	g := newGate()
	srv := tuned(NewServer(g, direct(Options{})), 0, 0, time.Hour)
	client, server := net.Pipe() // deadlines: Serve can interrupt its Read
	defer client.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(ctx, server, outW)
		outW.Close()
	}()
	lines := make(chan string, 16)
	go readLines(outR, lines)

	if _, err := io.WriteString(client, toolCall("1", "a", `{}`)+"\n"); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, 1)
	cancel()
	// Serve waits for the call (the grace is an hour), then answers it.
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) before the call finished", err)
	default:
	}
	g.release <- struct{}{}
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"released"`) {
		t.Fatalf("got %q, want call 1's result", got)
	}
	// Serve stopped reading: the input is still open but nobody reads it.
	_ = client.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := io.WriteString(client, ping("2")+"\n"); err == nil {
		t.Fatal("a line was read after Serve returned")
	}
}

// When the grace runs out the calls' ctx is cancelled, their replies still
// go out, and Serve reports ErrDrainTimeout.
func TestShutdownGraceExpires(t *testing.T) {
	g := newGate()
	srv := tuned(NewServer(g, direct(Options{})), 0, 0, 10*time.Millisecond)
	inR, inW := io.Pipe() // no deadlines: the blocked Read is left behind
	defer inW.Close()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, inR, &out) }()
	if _, err := io.WriteString(inW, toolCall("1", "a", `{}`)+"\n"); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, 1)
	cancel()
	if err := waitErr(t, done); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("Serve = %v, want ErrDrainTimeout", err)
	}
	select {
	case <-g.cancelled:
	default:
		t.Fatal("the call's ctx was not cancelled")
	}
	got := parseOutput(t, out.String())
	if len(got) != 1 || got[0].Reply.Result == nil || !strings.Contains(string(got[0].Reply.Result), `"isError":true`) {
		t.Fatalf("got %q, want call 1's cancelled result", out.String())
	}
}

// A write error (the peer is gone) cancels the calls in flight and is
// returned.
func TestWriteErrorEndsSession(t *testing.T) {
	g := newGate()
	srv := NewServer(g, direct(Options{}))
	inR, inW := io.Pipe()
	defer inW.Close()
	boom := errors.New("peer gone")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), inR, failWriter{boom}) }()
	if _, err := io.WriteString(inW, toolCall("1", "a", `{}`)+"\n"); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, 1)
	if _, err := io.WriteString(inW, ping("2")+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(t, done); !errors.Is(err, boom) {
		t.Fatalf("Serve = %v, want the write error", err)
	}
	select {
	case <-g.cancelled:
	default:
		t.Fatal("the call in flight was not cancelled")
	}
}

// Several connections share one Server.
func TestConcurrentConnections(t *testing.T) {
	srv := NewServer(&stageBackend{}, direct(Options{}))
	const conns, calls = 8, 200
	errs := make(chan error, conns)
	for i := range conns {
		go func() {
			var in strings.Builder
			in.WriteString(initLine("0", SupportedVersions()[i%4]) + "\n")
			for j := 1; j <= calls; j++ {
				in.WriteString(toolCall(itoa(j), "ok", `{}`) + "\n")
			}
			var out syncBuffer
			if err := srv.Serve(context.Background(), strings.NewReader(in.String()), &out); err != nil {
				errs <- err
				return
			}
			if n := strings.Count(out.String(), "\n"); n != calls+1 {
				errs <- errors.New("connection got " + itoa(n) + " replies")
				return
			}
			errs <- nil
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func waitErr(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(waitLimit):
		t.Fatal("Serve did not return")
	}
	return nil
}

func readLines(r io.Reader, out chan<- string) {
	buf, _ := io.ReadAll(r)
	for _, l := range strings.Split(string(buf), "\n") {
		if l != "" {
			out <- l
		}
	}
	close(out)
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// syncBuffer is a strings.Builder safe for a writer and a later reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// saturatedBackend answers Saturated calls at once, as the engine does
// (ConcurrencyLimited, without running the tool); others go to the gate.
type saturatedBackend struct {
	*gateBackend
	saturated chan toolbus.Request
}

func (b saturatedBackend) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	if req.Saturated {
		b.saturated <- req
		return toolbus.Response{Body: json.RawMessage(`{"success":false}`), Stage: toolbus.StageExecute,
			Err: &toolbus.ToolError{Kind: toolbus.PolicyError, Code: toolbus.CodeConcurrencyLimited, Retryable: true, Message: "busy"}}
	}
	return b.gateBackend.Call(ctx, req)
}

// A call that says wait:false is not queued behind a full connection: the
// backend is asked at once, marked Saturated, and its answer goes out
// while the other call still runs; a call without it waits.
func TestNoWaitCallIsAnsweredAtOnceWhenSaturated(t *testing.T) {
	g := saturatedBackend{newGate(), make(chan toolbus.Request, 4)}
	srv := NewServer(g, direct(Options{MaxInFlight: 1}))
	c := startConn(t, srv)
	c.send(toolCall("1", "slow", `{}`))
	g.waitStarted(t, 1)
	c.send(toolCall("2", "quick", `{"wait":false}`))
	if r := c.recv(); string(r.ID) != "2" || !strings.Contains(string(r.Raw), `"isError":true`) {
		t.Fatalf("first reply %s, want the no-wait call's error while call 1 still runs", r.Raw)
	}
	if req := <-g.saturated; req.Name != "quick" {
		t.Fatalf("saturated call %+v", req)
	}
	g.release <- struct{}{}
	rest, err := c.closeAndWait()
	if err != nil || len(rest) != 1 {
		t.Fatalf("Serve = %v, rest %q", err, rest)
	}
}

// A request whose id is that of a call in flight is refused with -32600
// under that id (its replies could not be told apart); the call goes on
// and is answered once. Once the call is answered, or cancelled, the id is
// free again.
func TestDuplicateIDOfCallInFlight(t *testing.T) {
	g := newGate()
	c := startConn(t, NewServer(g, direct(Options{})))
	c.send(initLine("0", Version20250326))
	c.recv()
	c.send(toolCall("5", "first", `{}`))
	g.waitStarted(t, 1)
	for _, line := range []string{
		toolCall("5", "second", `{}`),
		`{"jsonrpc":"2.0","id":5,"method":"nowframe.build"}`,
	} {
		c.send(line)
		if r := c.recv(); string(r.ID) != "5" || r.Error == nil || r.Error.Code != CodeInvalidRequest || r.Error.Message != errIDInUse {
			t.Fatalf("got %s, want -32600 %q", r.Raw, errIDInUse)
		}
	}
	// In a batch, the second element under one id is refused the same way.
	c.send(`[` + toolCall("6", "b1", `{}`) + `,` + toolCall("6", "b2", `{}`) + `]`)
	g.waitStarted(t, 1)
	g.release <- struct{}{}
	g.release <- struct{}{}
	got := map[string]int{}
	for range 2 {
		select {
		case l := <-c.lines:
			ol := parseLine(t, l)
			if ol.Batch == nil {
				if ol.Reply.Error != nil || string(ol.Reply.ID) != "5" || !strings.Contains(string(ol.Reply.Result), `"released":"first"`) {
					t.Fatalf("got %s, want call 5's result", l)
				}
				got["5"]++
				continue
			}
			if len(ol.Batch) != 2 {
				t.Fatalf("batch reply %s, want two elements", l)
			}
			for _, r := range ol.Batch {
				if r.Error != nil && r.Error.Code == CodeInvalidRequest {
					got["6 refused"]++
				} else if r.Error == nil {
					got["6 result"]++
				}
			}
		case <-time.After(waitLimit):
			t.Fatal("no reply")
		}
	}
	if got["5"] != 1 || got["6 refused"] != 1 || got["6 result"] != 1 {
		t.Fatalf("replies %v, want call 5's result and a batch of one result and one refusal", got)
	}
	// Answered: id 5 is free again. Cancelled: id 7 is free at once.
	c.send(toolCall("5", "again", `{}`), toolCall("7", "slow", `{}`))
	g.waitStarted(t, 2)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, toolCall("7", "new", `{}`))
	g.waitStarted(t, 1)
	g.release <- struct{}{}
	g.release <- struct{}{}
	rest, err := c.closeAndWait()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, l := range rest {
		r := parseLine(t, l).Reply
		if r.Error != nil {
			t.Fatalf("got %s, want results", l)
		}
		ids[string(r.ID)]++
	}
	if len(rest) != 2 || ids["5"] != 1 || ids["7"] != 1 {
		t.Fatalf("got %q, want one result for 5 and one for the new 7", rest)
	}
}
