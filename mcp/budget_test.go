package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// bigBackend answers every call with a ~4 KiB body at once.
type bigBackend struct{ body json.RawMessage }

func (b bigBackend) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }
func (b bigBackend) Call(context.Context, toolbus.Request) toolbus.Response {
	return toolbus.Response{Body: b.body}
}

// Connections that pipeline thousands of calls without reading a reply
// never make the server hold more reply bytes than its budget (plus one
// reply per connection, which a connection with nothing charged may
// always produce): their readers pause instead.
func TestReplyBytesStayWithinBudget(t *testing.T) {
	body := json.RawMessage(`{"success":true,"result":"` + strings.Repeat("x", 4<<10) + `"}`)
	const (
		conns    = 8
		calls    = 500
		budget   = 256 << 10
		perConn  = 64 << 10
		oneReply = 2*(4<<10) + 512 // text and structuredContent, plus the envelope
	)
	srv := tuned(NewServer(bigBackend{body: body}, direct(Options{})), budget, perConn, 0)
	paused := make(chan struct{}, 1)
	srv.hooks.budgetPaused = func() {
		select {
		case paused <- struct{}{}:
		default:
		}
	}
	var input strings.Builder
	for i := range calls {
		input.WriteString(toolCall(strconv.Itoa(i), "nowframe_build", `{}`) + "\n")
	}
	type result struct {
		lines int
		err   error
	}
	outs := make([]*io.PipeWriter, conns)
	readers := make([]*io.PipeReader, conns)
	done := make(chan error, conns)
	for i := range conns {
		readers[i], outs[i] = io.Pipe()
		go func() {
			done <- srv.Serve(context.Background(), strings.NewReader(input.String()), outs[i])
			outs[i].Close()
		}()
	}
	// Nobody reads yet: every reader fills its share and pauses.
	select {
	case <-paused:
	case <-time.After(waitLimit):
		t.Fatal("no reader paused on the byte budget")
	}
	counted := make(chan result, conns)
	for i := range conns {
		go func() {
			b, err := io.ReadAll(readers[i])
			counted <- result{strings.Count(string(b), "\n"), err}
		}()
	}
	for range conns {
		if err := <-done; err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if r := <-counted; r.err != nil || r.lines != calls {
			t.Fatalf("a connection got %d replies (%v), want %d", r.lines, r.err, calls)
		}
	}
	if peak, limit := peakOf(srv.budget), int64(budget+conns*2*oneReply); peak > limit {
		t.Fatalf("peak reply bytes %d, over the budget %d plus one reply per connection (%d)", peak, budget, limit)
	} else {
		t.Logf("peak reply bytes %d (budget %d)", peak, budget)
	}
}

// TestBatchReplyBytesStayWithinBudget: one 2025-03-26 session sends a
// single batch line (well under MaxLineBytes and MaxMessageItems) of
// tools/call requests. The reader only pauses between lines, each
// element's estimate is released as soon as its reply is appended to the
// batch, and the whole array is charged only when it is queued: the server
// holds every element's reply at once, far beyond the connection's cap and
// the server's budget. 64 such connections with nowframe_build answers
// (~7 KB each, text plus structuredContent) hold gigabytes, the very load
// issue 10 point 1 bounds to 64 MiB.
func TestBatchReplyBytesStayWithinBudget(t *testing.T) {
	body := json.RawMessage(`{"success":true,"result":"` + strings.Repeat("x", 4<<10) + `"}`)
	const (
		budget   = 256 << 10
		perConn  = 64 << 10
		elements = 1000 // 1000 tools/call elements: ~100 KB of input, 5000 items
		oneReply = 2*(4<<10) + 512
	)
	srv := tuned(NewServer(bigBackend{body: body}, direct(Options{})), budget, perConn, 0)
	var b strings.Builder
	b.WriteString(initLine("0", Version20250326) + "\n[")
	for i := range elements {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(toolCall(strconv.Itoa(i+1), "nowframe_build", `{}`))
	}
	b.WriteString("]\n")
	if len(b.String()) > DefaultMaxLineBytes {
		t.Fatalf("the batch line is %d bytes, over MaxLineBytes", len(b.String()))
	}
	var out bytes.Buffer
	if err := srv.Serve(context.Background(), strings.NewReader(b.String()), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	lines := parseOutput(t, out.String())
	if len(lines) != 2 || len(lines[1].Batch) != elements {
		t.Fatalf("got %d lines, want the initialize reply and one array of %d replies", len(lines), elements)
	}
	ids := map[string]bool{}
	for _, r := range lines[1].Batch {
		if r.Error != nil || r.Result == nil {
			t.Fatalf("batch reply %s, want a result", r.Raw)
		}
		ids[string(r.ID)] = true
	}
	if len(ids) != elements {
		t.Fatalf("%d distinct ids in the array, want %d", len(ids), elements)
	}
	if peak, limit := peakOf(srv.budget), int64(budget+2*oneReply); peak > limit {
		t.Fatalf("one batch made the server hold %d reply bytes at once: over the budget %d plus a reply or two (%d)", peak, budget, limit)
	}
}

// While a batch's array is open on a stream, anything else (another
// reply, a notification, another batch's replies) waits behind it and is
// written after its end, each message whole on its own line; every byte
// charged is released once written.
func TestStreamWriterHoldsBehindOpenArray(t *testing.T) {
	srv := NewServer(bigBackend{}, direct(Options{}))
	c := newStreamConn(srv)
	var out bytes.Buffer
	go c.writeLoop(&out)
	a, b := &batch{s: c.s}, &batch{s: c.s}
	for _, o := range []outbound{
		{key: "a", arr: a, b: []byte(`"a1"`)},
		{key: "x", b: []byte(`"x"`)},
		{key: "a", arr: a, b: []byte(`"a2"`)},
		{key: "b", arr: b, b: []byte(`"b1"`)},
		{b: []byte(`"note"`)},
		{key: "a", arr: a, end: true},
		{key: "b", arr: b, b: []byte(`"b2"`)},
		{key: "b", arr: b, end: true},
		{key: "y", b: []byte(`"y"`)},
	} {
		c.enqueue(o)
	}
	close(c.finish)
	<-c.writerExited
	if c.werr != nil {
		t.Fatalf("write: %v", c.werr)
	}
	want := `["a1","a2"]` + "\n" + `"x"` + "\n" + `["b1","b2"]` + "\n" + `"note"` + "\n" + `"y"` + "\n"
	if out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
	if used, held := c.budget.used, c.budget.held; used != 0 || held != 0 {
		t.Fatalf("after writing: %d bytes charged, %d held; want none", used, held)
	}
}

// peakOf returns the most reply bytes b ever had charged at once.
func peakOf(b *byteBudget) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}
