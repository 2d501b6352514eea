package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// TestServeReturnsAtShutdownWhenPeerStopsReading: a client that stops
// reading its replies (a hung assistant) while calls are in flight: the
// writer blocks on the peer, its queue fills, and the goroutines of the
// calls block queueing their replies. When the process is told to stop
// (SIGTERM: Serve's ctx is cancelled), Serve must still return once the
// drain grace is over, interrupting the blocked write (the writer has
// deadlines, as a socket or a pollable stdout does). Today it waits
// forever for those goroutines: the hard cancel at the end of the grace
// does not reach a reply blocked in the queue. Against the built binary,
// `awbridge stdio` fed 5000 pings by a client that reads nothing is still
// running 20 s after SIGTERM (the build before the core merge exits after
// its 5 s drain); `awbridge serve` cannot stop while one socket client is
// in that state.
func TestServeReturnsAtShutdownWhenPeerStopsReading(t *testing.T) {
	const calls, enough = 1000, 500
	b := &countingBackend{at: enough, reached: make(chan struct{})}
	srv := tuned(NewServer(b, Options{}), 64<<20, 64<<20, 50*time.Millisecond)
	var in strings.Builder
	for i := range calls {
		in.WriteString(toolCall(strconv.Itoa(i), "ok", `{}`) + "\n")
	}
	stdin := &openInput{r: strings.NewReader(in.String()), block: make(chan struct{})}
	defer close(stdin.block)
	out := newStuckWriter()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, stdin, out) }()
	// The writer is stuck on the peer and more replies were produced than
	// its buffer (32 KiB) and queue (128) hold: some call is blocked
	// queueing its reply.
	for _, ch := range []chan struct{}{out.entered, b.reached} {
		select {
		case <-ch:
		case <-time.After(waitLimit):
			t.Fatal("the load did not build up")
		}
	}
	cancel() // SIGTERM
	select {
	case <-done:
	case <-time.After(waitLimit):
		out.close() // let everything end
		<-done
		t.Fatal("Serve did not return after its ctx was cancelled and the drain grace passed: a client that stops reading keeps the server from shutting down")
	}
}

// countingBackend answers at once with a small envelope and closes
// reached once it has answered at calls.
type countingBackend struct {
	n       atomic.Int64
	at      int64
	reached chan struct{}
}

func (b *countingBackend) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }
func (b *countingBackend) Call(context.Context, toolbus.Request) toolbus.Response {
	if b.n.Add(1) == b.at {
		close(b.reached)
	}
	return toolbus.Response{Body: json.RawMessage(okEnvelope)}
}

// stuckWriter is a peer that never reads: Write blocks until a write
// deadline is set or it is closed. entered is closed at the first Write.
type stuckWriter struct {
	entered  chan struct{}
	unblock  chan struct{}
	once     sync.Once
	unonce   sync.Once
	deadline atomic.Bool
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{entered: make(chan struct{}), unblock: make(chan struct{})}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.unblock
	if w.deadline.Load() {
		return 0, os.ErrDeadlineExceeded
	}
	return 0, errors.New("closed")
}

func (w *stuckWriter) SetWriteDeadline(time.Time) error {
	w.deadline.Store(true)
	w.close()
	return nil
}

func (w *stuckWriter) close() { w.unonce.Do(func() { close(w.unblock) }) }

// openInput reads r, then blocks like an open stdin with nothing more to
// say until block is closed.
type openInput struct {
	r     *strings.Reader
	block chan struct{}
}

func (s *openInput) Read(p []byte) (int, error) {
	if s.r.Len() > 0 {
		return s.r.Read(p)
	}
	<-s.block
	return 0, context.Canceled
}
