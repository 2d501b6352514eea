package mcp

import (
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
	srv := NewServer(bigBackend{body: body}, Options{MaxReplyBytes: budget, MaxConnReplyBytes: perConn})
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
	if peak, limit := srv.budget.Peak(), int64(budget+conns*2*oneReply); peak > limit {
		t.Fatalf("peak reply bytes %d, over the budget %d plus one reply per connection (%d)", peak, budget, limit)
	} else {
		t.Logf("peak reply bytes %d (budget %d)", peak, budget)
	}
}
