package mcp

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrAlreadyServing is returned by ListenSocket when a live process
// already answers on the socket.
var ErrAlreadyServing = errors.New("another awbridge already answers on this socket")

// ServeListener accepts connections on ln until ctx ends and serves each
// with Serve, concurrently. When ctx ends it stops accepting, lets every
// connection answer its calls in flight (bounded by Options.DrainTimeout)
// and returns once all are done.
//
// At most Options.MaxConnections connections are served at once; one more
// gets a single JSON-RPC error line and is closed.
func (srv *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	slots := make(chan struct{}, srv.maxConns)
	var (
		refused  int // since the last warning
		warnedAt time.Time
	)
	var wg sync.WaitGroup
	defer wg.Wait()
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
			conn.SetWriteDeadline(time.Now().Add(time.Second))
			conn.Write(tooManyConnections(srv.maxConns))
			conn.Close()
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

// refusedWarnEvery spaces the warnings about refused connections.
const refusedWarnEvery = time.Minute

func tooManyConnections(n int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many connections: this awbridge serves at most ` +
		strconv.Itoa(n) + ` at once","data":{"kind":"PolicyError","code":"ConcurrencyLimited","retryable":true,"retry_after_ms":1000}}}` + "\n")
}
