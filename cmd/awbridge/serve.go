package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/install"
	"github.com/awbridge/awbridge/mcp"
	"github.com/rs/zerolog"
)

// cmdServe is the long-running process the OS service starts: one engine
// and JSON-RPC on a Unix socket private to the user. SIGTERM or SIGINT:
// stop accepting, answer the calls in flight, flush state, exit 0.
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
	// Under the Windows service manager stop requests cancel ctx.
	code = exitOK
	if err := install.RunService(ctx, func(ctx context.Context) error {
		code = serveOn(ctx, e, l, log, path)
		return nil
	}); err != nil {
		return fail(e, "serve", err, exitDegraded)
	}
	return code
}

// warmWait bounds the wait for the poller's first frame before serve
// accepts calls: the default deadline of a source.
const warmWait = 2 * time.Second

// serveOn runs the service on path until ctx ends.
func serveOn(ctx context.Context, e *env, l *config.Loaded, log zerolog.Logger, path string) int {
	ln, err := mcp.ListenSocket(path)
	if err != nil {
		if errors.Is(err, mcp.ErrAlreadyServing) {
			fmt.Fprintf(e.stderr, "awbridge serve: another awbridge already serves on %s (stop it first: awbridge stop)\n", path)
			return exitDegraded
		}
		return fail(e, "serve", err, exitUsage)
	}
	defer ln.Close()
	var web *httpEndpoint
	deps := engine.Deps{SocketPath: path}
	if l.Config.Server.HTTP != "" {
		if web, err = openHTTP(l.Config, log); err != nil {
			return fail(e, "serve", err, exitUsage)
		}
		defer web.Close()
		deps.Checks = web.Checks
	}
	eng := startEngine(e, "serve", l, log, deps)
	if eng == nil {
		return exitUsage
	}
	defer eng.Close()
	eng.Prime(ctx)
	srv := stdioServer(eng, l.Config, e, log, "service")
	log.Info().Str("socket", path).Msg("serving")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { _ = eng.Run(ctx) })
	// The first caller is answered from the poller's first frame, tried
	// for at most warmWait (a hung ActivityWatch must not mute serve).
	warm := time.NewTimer(warmWait)
	select {
	case <-eng.Warm():
	case <-warm.C:
	case <-ctx.Done():
	}
	warm.Stop()
	if web != nil {
		handler := func(ln net.Listener, token string) *mcp.HTTPTransport {
			return srv.HTTPHandler(mcp.HTTPOptions{
				Token:        token,
				AllowedHosts: httpAllowedHosts(ln),
				Other:        engineStatus(eng).serve,
				Logger:       log,
			})
		}
		wg.Go(func() { web.Run(ctx, handler, l.Config.Server.MaxConnections) })
	}
	notifyReady(e, log)
	err = srv.ServeListener(ctx, ln)
	cancel()
	wg.Wait()
	if err != nil {
		log.Error().Err(err).Msg("accepting connections failed")
		return exitDegraded
	}
	log.Info().Msg("stopped")
	return exitOK
}

// notifyReady tells systemd (Type=notify) that serve now answers: READY=1
// on the datagram socket NOTIFY_SOCKET names, when set.
func notifyReady(e *env, log zerolog.Logger) {
	name, ok := e.lookup("NOTIFY_SOCKET")
	if !ok || name == "" {
		return
	}
	c, err := net.Dial("unixgram", name)
	if err == nil {
		_, err = c.Write([]byte("READY=1"))
		c.Close()
	}
	if err != nil {
		log.Warn().Err(err).Msg("could not tell NOTIFY_SOCKET that serve is ready")
	}
}
