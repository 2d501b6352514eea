package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/awbridge/awbridge/toolbus"
)

// untilCancelled is a Backend whose calls run until the client cancels
// them.
type untilCancelled struct{}

func (untilCancelled) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }

func (untilCancelled) Call(ctx context.Context, _ toolbus.Request) toolbus.Response {
	<-ctx.Done()
	return toolbus.Response{Body: json.RawMessage(`{"success":false}`)}
}

func cancelLine(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
}

// A stdio client behind the relay cancels calls it no longer wants, as
// MCP clients do when the user interrupts the model: the service (a real
// Server) drops their replies, as the protocol says, but the relay keeps
// each one as owed for ever. After maxRelayPending (4096) cancelled calls
// over a session's lifetime the relay stops reading the client.
//
// What the user sees: after a few thousand interrupted tool calls in one
// long session, awbridge stops answering anything (the next ping hangs),
// and at a service restart every cancelled call gets a belated -32000
// "service went away" reply. Expected: notifications/cancelled for an
// owed call settles it in the relay (the service sends nothing more for
// it), and the session goes on answering.
func TestRelayForgetsCancelledCalls_review(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svcEnd, relayEnd := net.Pipe()
		srv := NewServer(untilCancelled{}, Options{})
		svcCtx, stopSvc := context.WithCancel(context.Background())
		svcDone := make(chan error, 1)
		go func() { svcDone <- srv.Serve(svcCtx, svcEnd, svcEnd) }()

		inR, inW := io.Pipe()
		var out syncBuf
		done := make(chan error, 1)
		go func() { done <- Relay(context.Background(), relayEnd, inR, &out, RelayOptions{}) }()
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			for i := range maxRelayPending + 1 {
				id := itoa(i)
				if _, err := io.WriteString(inW, toolCall(id, "t", `{}`)+"\n"+cancelLine(id)+"\n"); err != nil {
					return
				}
			}
			io.WriteString(inW, ping(`"last"`)+"\n")
		}()
		synctest.Wait()
		answered := strings.Contains(out.String(), `"id":"last"`)

		// Unblock and end everything, whatever happened.
		inR.Close()
		<-wrote
		inW.Close()
		stopSvc()
		svcEnd.Close()
		<-svcDone
		<-done
		if !answered {
			t.Fatalf("after %d cancelled calls the relay no longer reads the client: the ping was never answered", maxRelayPending+1)
		}
	})
}
