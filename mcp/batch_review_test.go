package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/awbridge/awbridge/toolbus"
)

// namedGates blocks each tool call on the gate of its name (released by
// closing it) and then answers with a body of the size set for that
// name; a name without a gate answers at once.
type namedGates struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	sizes map[string]int
}

func (g *namedGates) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }

func (g *namedGates) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	g.mu.Lock()
	gate, size := g.gates[req.Name], g.sizes[req.Name]
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return toolbus.Response{Body: json.RawMessage(`{"success":true,"result":"` + strings.Repeat("x", size) + `"}`)}
}

// pausableWriter is the client's end of a stream: every complete line
// written goes to lines; while paused, Write blocks (a client that stops
// reading for a while).
type pausableWriter struct {
	mu      sync.Mutex
	resume  chan struct{} // non-nil while paused
	partial bytes.Buffer
	lines   chan string
}

func (w *pausableWriter) pause() {
	w.mu.Lock()
	w.resume = make(chan struct{})
	w.mu.Unlock()
}

func (w *pausableWriter) unpause() {
	w.mu.Lock()
	close(w.resume)
	w.resume = nil
	w.mu.Unlock()
}

func (w *pausableWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	resume := w.resume
	w.mu.Unlock()
	if resume != nil {
		<-resume
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial.Write(p)
	for {
		i := bytes.IndexByte(w.partial.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- string(w.partial.Next(i + 1)[:i])
	}
}

// drainLines returns the lines written so far.
func drainLines(ch chan string) []string {
	var out []string
	for {
		select {
		case l := <-ch:
			out = append(out, l)
		default:
			return out
		}
	}
}

// A 2025-03-26 client sends a batch while two calls sent before it are
// still running. The batch's reader pauses between elements for room in
// the connection's byte budget; the two earlier replies arrive while the
// batch's array is open, so the writer holds them behind it. Once every
// byte charged is held, the rule "a connection whose bytes are all held
// may go on" should let the reader finish the batch, but connBudget.hold
// wakes nobody: a reader that looked at the budget before the writer held
// the last reply sleeps for ever.
//
// What the user sees: the batch's array is never closed (the stream shows
// `[{...a1},{...a2}` and then nothing), the two earlier calls are never
// answered, and every later request on the connection hangs; the
// assistant's MCP client times out on everything. Expected: the reader
// goes on (hold wakes paused readers, as release does), the batch's array
// closes with a3's reply, and the held replies follow it.
//
// The pause of the client's reading (steps 5 to 7) only makes the race
// between the writer's hold and the reader's check deterministic; on a
// busy machine the same interleaving happens without it.
func TestBatchReaderNotStrandedByHeldReplies_review(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &namedGates{
			gates: map[string]chan struct{}{"y": make(chan struct{}), "z": make(chan struct{}), "a": make(chan struct{})},
			sizes: map[string]int{"z": 4 << 10, "y": 64, "a": 2 << 10},
		}
		// One call's estimate is 1 KiB (the least) after a small reply;
		// three in flight reach the connection's cap.
		srv := tuned(NewServer(g, Options{}), 0, 3<<10, 0)
		ctx, cancel := context.WithCancel(context.Background())
		inR, inW := io.Pipe()
		w := &pausableWriter{lines: make(chan string, 64)}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, inR, w) }()
		defer func() {
			cancel()
			inW.Close()
			<-done
		}()
		send := func(l string) {
			t.Helper()
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				t.Fatalf("send: %v", err)
			}
		}

		// 1. A 2025-03-26 session; a small call sets the estimate to 1 KiB.
		send(initLine("0", Version20250326))
		send(toolCall(`"w"`, "w", `{}`))
		synctest.Wait()
		if got := drainLines(w.lines); len(got) != 2 {
			t.Fatalf("got %d lines after initialize and a call, want 2: %q", len(got), got)
		}
		// 2. Two calls that run on (2 KiB charged).
		send(toolCall(`"y"`, "y", `{}`))
		send(toolCall(`"z"`, "z", `{}`))
		// 3. A batch: a1's reply opens the array, a2 runs, and the reader
		// pauses before a3 (3 KiB charged).
		send(`[` + ping(`"a1"`) + `,` + toolCall(`"a2"`, "a", `{}`) + `,` + ping(`"a3"`) + `]`)
		synctest.Wait()
		// 4. z ends: its reply is held behind the open array.
		close(g.gates["z"])
		synctest.Wait()
		// 5. The client stops reading; a2 ends (its reply goes into the
		// array, and the writer blocks writing it).
		w.pause()
		close(g.gates["a"])
		synctest.Wait()
		// 6. y ends while the writer is blocked: the reader looks at the
		// budget (y's reply charged, not yet held) and waits.
		close(g.gates["y"])
		synctest.Wait()
		// 7. The client reads again: the writer holds y's reply. Every
		// byte charged is now held: the reader may go on.
		w.unpause()
		synctest.Wait()

		got := drainLines(w.lines)
		var arr, y, z bool
		for _, l := range got {
			ol := parseLine(t, l)
			switch {
			case len(ol.Batch) == 3:
				arr = true
			case string(ol.Reply.ID) == `"y"`:
				y = true
			case string(ol.Reply.ID) == `"z"`:
				z = true
			}
		}
		if !arr || !y || !z {
			t.Fatalf("the stream is stuck: batch array closed %v, y answered %v, z answered %v (lines %q); "+
				"the reader waits on a budget whose bytes are all held behind the array it alone can close", arr, y, z, got)
		}
	})
}
