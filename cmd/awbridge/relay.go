package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// replayID is the id the relay gives the client's initialize when it
// replays it to an in-process engine; its reply is not passed on.
const replayID = `"awbridge-relay-replay"`

// lineWriter writes whole lines to the client; both directions of the
// relay and the failover share it. Safe for concurrent use.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
	// drop, when set, is the raw id of a reply not to pass on.
	drop []byte
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for line := range bytes.SplitAfterSeq(p, []byte("\n")) {
		if lw.drop != nil && bytes.Equal(bytes.TrimSpace([]byte(gjson.GetBytes(line, "id").Raw)), lw.drop) {
			lw.drop = nil
			continue
		}
		if _, err := lw.w.Write(line); err != nil {
			return 0, err
		}
	}
	return len(p), lw.w.Flush()
}

// relaySession relays a stdio client to the service behind conn. When the
// service goes away mid-stream, the calls it had not answered get a
// retryable error and the session goes on with an in-process engine
// (fallback), after replaying the client's initialize to it.
type relaySession struct {
	out     *lineWriter
	mu      sync.Mutex
	pending map[string]bool // raw ids sent to the service, not yet answered
	// answeredOnFailure are the ids the service's failure answered.
	answeredOnFailure map[string]bool
	initLine          []byte
	dest              io.Writer // the service's socket, then the in-process pipe
	failed            bool
}

// relay runs the session until the client's input ends. fallback serves
// an in-process engine on (r, w) until r ends.
func relay(ctx context.Context, conn net.Conn, in io.Reader, out io.Writer,
	fallback func(ctx context.Context, r io.Reader, w io.Writer) error) error {
	rs := &relaySession{out: &lineWriter{w: bufio.NewWriterSize(out, 64<<10)}, pending: map[string]bool{},
		answeredOnFailure: map[string]bool{}, dest: conn}
	// SIGTERM: stop reading the client and drop the service connection.
	stop := context.AfterFunc(ctx, func() {
		if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
			d.SetReadDeadline(time.Now())
		}
		conn.Close()
	})
	defer stop()
	var wg sync.WaitGroup
	var pw *io.PipeWriter
	switchOver := make(chan struct{})

	// Service -> client.
	wg.Go(func() {
		r := bufio.NewReaderSize(conn, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break // a fragment without its newline is dropped, never half-written
			}
			rs.answered(line)
			rs.out.Write(line)
		}
		rs.mu.Lock()
		closing := rs.dest == nil // the client's input ended first
		// The connection ended: answer at once what the service still owed
		// (the client may be waiting for it), then switch on the next line.
		rs.failed = true
		for id := range rs.pending {
			rs.answeredOnFailure[id] = true
			rs.out.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"the awbridge service went away before answering; retry",` +
				`"data":{"kind":"ExecutionError","code":"ServiceUnavailable","retryable":true,"message":"the awbridge service went away before answering","retry_after_ms":100}}}` + "\n"))
		}
		rs.pending = map[string]bool{}
		rs.mu.Unlock()
		if !closing {
			close(switchOver)
		}
	})

	// Client -> service (or, after a failover, the in-process engine).
	br := bufio.NewReaderSize(in, 64<<10)
	var fbErr error
	fallbackStarted := false
	startFallback := func() {
		// Continue with an in-process engine, replaying initialize.
		rs.mu.Lock()
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		rs.dest = pw
		init := rs.initLine
		rs.mu.Unlock()
		fallbackStarted = true
		wg.Go(func() {
			fbErr = fallback(ctx, pr, rs.out)
			// Whatever is still written to it fails instead of blocking.
			pr.CloseWithError(errors.New("the in-process engine ended"))
		})
		if init != nil {
			rs.out.mu.Lock()
			rs.out.drop = []byte(replayID)
			rs.out.mu.Unlock()
			replay, _ := setID(init, replayID)
			pw.Write(replay)
		}
	}
	for {
		select {
		case <-switchOver:
			if !fallbackStarted {
				startFallback()
			}
		default:
		}
		line, err := readLine(br)
		select {
		case <-switchOver:
			if !fallbackStarted {
				startFallback()
			}
		default:
		}
		if len(line) > 0 {
			rs.sent(line)
			rs.mu.Lock()
			dest := rs.dest
			rs.mu.Unlock()
			if _, werr := dest.Write(line); werr != nil {
				if fallbackStarted {
					break // the in-process engine ended
				}
				<-switchOver
				startFallback()
				// Resend only if the service's failure did not already
				// answer this call.
				if rs.owed(line) {
					rs.mu.Lock()
					dest = rs.dest
					rs.mu.Unlock()
					if _, err := dest.Write(line); err != nil {
						break
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	// Input ended: let the service (or the engine) answer what is in flight.
	rs.mu.Lock()
	if !fallbackStarted {
		rs.dest = nil
	}
	rs.mu.Unlock()
	if fallbackStarted {
		pw.Close()
	} else if uc, ok := conn.(interface{ CloseWrite() error }); ok {
		uc.CloseWrite()
	}
	wg.Wait()
	conn.Close()
	return fbErr
}

// readLine returns the next line with its newline; a line longer than the
// reader's buffer is returned in pieces, never held whole (the engine's
// own line limit answers it with one error).
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return bytes.Clone(line), nil
	}
	return bytes.Clone(line), err
}

// sent notes a request the service now owes an answer, and the client's
// initialize for a replay.
func (rs *relaySession) sent(line []byte) {
	if !gjson.ValidBytes(line) {
		return
	}
	method := gjson.GetBytes(line, "method")
	id := gjson.GetBytes(line, "id")
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if method.Str == "initialize" {
		rs.initLine = bytes.Clone(line)
	}
	if id.Exists() && id.Type != gjson.Null && method.Exists() && !rs.failed {
		rs.pending[id.Raw] = true
	}
}

// owed reports whether line is a request the client has had no answer to
// (it was not among the calls the service's failure answered).
func (rs *relaySession) owed(line []byte) bool {
	id := gjson.GetBytes(line, "id")
	if !id.Exists() {
		return true // a notification
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return !rs.answeredOnFailure[id.Raw]
}

// answered notes a reply from the service.
func (rs *relaySession) answered(line []byte) {
	id := gjson.GetBytes(line, "id")
	if !id.Exists() {
		return
	}
	rs.mu.Lock()
	delete(rs.pending, id.Raw)
	rs.mu.Unlock()
}

// setID returns the request line with its id replaced.
func setID(line []byte, id string) ([]byte, error) {
	r := gjson.GetBytes(line, "id")
	if !r.Exists() || r.Index <= 0 {
		return nil, errors.New("no id")
	}
	out := append([]byte{}, line[:r.Index]...)
	out = append(out, id...)
	return append(out, line[r.Index+len(r.Raw):]...), nil
}
