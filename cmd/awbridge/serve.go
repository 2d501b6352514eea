package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/mcp"
)

// cmdServe is the long-running process the OS service starts: one engine,
// a frame kept warm every second, and the same line JSON-RPC as stdio on a
// Unix socket private to the user. SIGTERM or SIGINT: stop accepting,
// answer the calls in flight, flush state, remove the socket, exit 0.
func cmdServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve")
	socket := fs.String("socket", "", "socket path (default: AWBRIDGE_SOCKET, else $XDG_RUNTIME_DIR/awbridge/awbridge.sock)")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	path := *socket
	if path == "" {
		path = config.SocketPath(config.Env{Lookup: e.lookup, GOOS: runtime.GOOS}, os.Getuid())
	}
	ln, err := mcp.ListenSocket(path)
	if err != nil {
		if errors.Is(err, mcp.ErrAlreadyServing) {
			fmt.Fprintf(e.stderr, "awbridge serve: another awbridge already serves on %s (stop it first: awbridge stop)\n", path)
			return exitDegraded
		}
		fmt.Fprintln(e.stderr, "awbridge serve: "+oneLine(err.Error()))
		return exitUsage
	}
	defer ln.Close()
	eng := startEngine(e, "serve", l, log, engine.Deps{})
	if eng == nil {
		return exitUsage
	}
	defer eng.Close()
	eng.Prime(ctx)
	srv := stdioServer(eng, l.Config, e, log, "service")
	log.Info().Str("socket", path).Msg("serving")
	var wg sync.WaitGroup
	wg.Go(func() { _ = eng.Run(ctx) })
	err = srv.ServeListener(ctx, ln)
	wg.Wait()
	if err != nil {
		log.Error().Err(err).Msg("accepting connections failed")
		return exitDegraded
	}
	log.Info().Msg("stopped")
	return exitOK
}
