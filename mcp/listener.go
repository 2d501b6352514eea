package mcp

import (
	"context"
	"errors"
	"net"
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
func (srv *Server) ServeListener(ctx context.Context, ln net.Listener) error {
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
		wg.Go(func() {
			defer conn.Close()
			if err := srv.Serve(ctx, conn, conn); err != nil {
				srv.log.Debug().Err(err).Msg("mcp: connection ended")
			}
		})
	}
}
