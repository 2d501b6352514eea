package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrAlreadyServing is returned by ListenSocket when a live process
// already answers on the socket.
var ErrAlreadyServing = errors.New("another awbridge already answers on this socket")

// ServeListener serves each connection on ln with Serve until ctx ends,
// then returns once every connection has answered its calls in flight.
// At most Options.MaxConnections are served at once; one more gets a single
// JSON-RPC error line from a Refuser and is closed.
func (srv *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	slots := make(chan struct{}, srv.maxConns)
	var (
		refused  int // since the last warning
		warnedAt time.Time
	)
	var wg sync.WaitGroup
	defer wg.Wait()
	var refusals Refuser
	defer refusals.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of file descriptors: wait for connections to end.
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			return err
		}
		select {
		case slots <- struct{}{}:
		default:
			// A flood of connections is one warning a minute, not one each.
			if refused++; time.Since(warnedAt) >= refusedWarnEvery {
				srv.log.Warn().Int("max_connections", srv.maxConns).Int("refused", refused).Msg("mcp: connections refused: too many")
				refused, warnedAt = 0, time.Now()
			}
			refusals.Refuse(conn, tooManyConnections(srv.maxConns))
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer conn.Close()
			if err := srv.Serve(ctx, conn, conn); err != nil {
				srv.log.Debug().Err(err).Msg("mcp: connection ended")
			}
		})
	}
}

// Bounds of a Refuser: how many refusals are written at once, and how long
// each may take (written, then the peer's bytes drained until it closes).
const (
	maxRefusals  = 16
	refusalGrace = time.Second
)

// Refuser answers connections over a cap with a last message, each in a
// goroutine of its own, never in the accept loop: a peer that does not
// read would stall accepting for as long as the write may take. At most
// maxRefusals are written at once, each within refusalGrace; beyond that a
// connection is closed without a word (a flood gets no answer, and costs
// neither goroutines nor descriptors). The zero value is ready; Refuse is
// called from one goroutine (the accept loop), Wait once it is done.
type Refuser struct {
	// HTTP: read the request's head (at most 64 KiB, within the grace)
	// before answering. An HTTP client that gets an answer before it has
	// sent its request takes it for an unsolicited response and fails
	// instead of reading the 503.
	HTTP bool

	wg     sync.WaitGroup
	active atomic.Int32
}

// Refuse writes msg to conn and closes it, or closes it at once when
// maxRefusals are being written already. The write is followed by a
// half-close and a short drain of what the peer sent, so that its unread
// request does not turn the close into a reset that loses msg.
func (r *Refuser) Refuse(conn net.Conn, msg []byte) {
	if r.active.Add(1) > maxRefusals {
		r.active.Add(-1)
		conn.Close()
		return
	}
	r.wg.Go(func() {
		defer r.active.Add(-1)
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(refusalGrace))
		if r.HTTP {
			http.ReadRequest(bufio.NewReader(io.LimitReader(conn, 64<<10)))
		}
		if _, err := conn.Write(msg); err != nil {
			return
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			io.Copy(io.Discard, io.LimitReader(conn, 64<<10))
		}
	})
}

// Wait waits for the refusals being written.
func (r *Refuser) Wait() { r.wg.Wait() }

// refusedWarnEvery spaces the warnings about refused connections.
const refusedWarnEvery = time.Minute

func tooManyConnections(n int) []byte {
	msg := "too many connections: this awbridge serves at most " + strconv.Itoa(n) + " at once"
	data := `{"kind":"PolicyError","code":"ConcurrencyLimited","retryable":true,"retry_after_ms":1000}`
	return append(errorReply(nil, CodeServerError, msg, []byte(data)), '\n')
}
