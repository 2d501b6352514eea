package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

// cmdStdio serves one assistant on stdin and stdout. When the service
// (`awbridge serve`) answers on its socket, the session is relayed to it,
// so every assistant shares one warm engine and its state; otherwise, or
// with --no-relay / AWBRIDGE_RELAY=0, an engine runs in this process.
func cmdStdio(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "stdio")
	noRelay := fs.Bool("no-relay", false, "never relay to the service; run the engine in this process")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	if path, ok := e.lookup("AWBRIDGE_CPUPROFILE"); ok && path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintln(e.stderr, "awbridge: "+err.Error())
			return exitUsage
		}
		defer stop()
	}
	if _, set := e.lookup("GOMAXPROCS"); !set {
		// I/O-bound ping-pong: one P answers on one thread without waking
		// another (server CPU per call about halves; docs/performance.md).
		runtime.GOMAXPROCS(1)
	}
	in, out := e.stdin, e.stdout
	if f, ok := in.(*os.File); ok {
		pf, restore := pollable(f, "stdin")
		defer restore()
		in = pf
	}
	if f, ok := out.(*os.File); ok {
		pf, restore := pollable(f, "stdout")
		defer restore()
		out = pf
	}

	inProcess := func(ctx context.Context, r io.Reader, w io.Writer) error {
		eng := startEngine(e, "stdio", l, log, engine.Deps{})
		if eng == nil {
			return errNoEngine // startEngine said why
		}
		defer eng.Close()
		eng.Prime(ctx)
		log.Debug().Str("aw_url", l.Config.AW.URL).Bool("sidecar", l.Config.Sidecar.URL != "").Msg("serving stdio in-process")
		return stdioServer(eng, l.Config, e, log, "in-process").Serve(ctx, r, w)
	}
	var err error
	if conn := dialService(e, l.Config, *noRelay); conn != nil {
		log.Debug().Str("socket", conn.RemoteAddr().String()).Msg("relaying stdio to the service")
		warnOtherAW(ctx, e, l)
		err = mcp.Relay(ctx, conn, in, out, mcp.RelayOptions{
			MaxLineBytes: l.Config.Server.MaxLineBytes, ServerName: "awbridge", ServerVersion: e.version, Fallback: inProcess,
			FirstReply: serviceTimeout(l.Config), // as the terminal commands wait for the service
		})
	} else {
		err = inProcess(ctx, in, out)
	}
	switch {
	case errors.Is(err, errNoEngine):
		return exitUsage
	case err != nil:
		log.Error().Err(err).Msg("stdio session ended")
		return exitDegraded
	}
	return exitOK
}

// errNoEngine ends a session whose engine could not start (said on stderr).
var errNoEngine = errors.New("no engine")

// warnOtherAW says on stderr when this process's settings name another
// ActivityWatch URL than the service it relays to uses.
func warnOtherAW(ctx context.Context, e *env, l *config.Loaded) {
	s, ok := l.Get("activitywatch.url")
	if !ok || s.Source == config.SourceDefault {
		return
	}
	conn := dialService(e, l.Config, false)
	if conn == nil {
		return
	}
	c := newServiceCaller(conn, l.Config)
	c.Timeout = time.Second
	defer c.Close()
	out := c.Call(ctx, toolbus.Request{Direct: true, Name: "system.health"})
	var r health.Report
	if out.Err != nil || json.Unmarshal(out.Body, &r) != nil || r.Settings == nil {
		return
	}
	theirs := r.Settings["activitywatch_url"]
	if theirs == "" || urlShown(theirs) == urlShown(l.Config.AW.URL) {
		return
	}
	from := s.Origin
	if from == "" {
		from = string(s.Source)
	}
	fmt.Fprintf(e.stderr, "awbridge stdio: the running service answers this session and reads ActivityWatch at %s, not at %s from %s "+
		"(the service reads only its config file: set activitywatch.url there and run 'awbridge restart', or use --no-relay)\n",
		theirs, urlShown(l.Config.AW.URL), from)
}

// urlShown is u as scheme://host/path, without credentials, query or a
// trailing slash: two URLs that show the same name the same place.
func urlShown(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	return strings.ToLower(p.Scheme) + "://" + strings.ToLower(p.Host) + strings.TrimRight(p.Path, "/")
}

// stdioServer is the JSON-RPC server of a session.
func stdioServer(eng *engine.Engine, c config.Config, e *env, log zerolog.Logger, mode string) *mcp.Server {
	return mcp.NewServer(eng, mcp.Options{
		MaxLineBytes: c.Server.MaxLineBytes, MaxInFlight: c.Server.MaxInFlight, MaxConnections: c.Server.MaxConnections,
		DirectMethods: engine.DirectMethods(), ServerName: "awbridge", ServerVersion: e.version,
		Instructions: engine.Instructions, Logger: log, Engine: mode,
	})
}

// dialService connects to the service's socket when relaying is allowed
// and it answers; nil otherwise.
func dialService(e *env, c config.Config, noRelay bool) net.Conn {
	if noRelay || c.Server.Relay == "never" || c.Server.Relay == "0" {
		return nil
	}
	for _, path := range config.SocketCandidates(config.Env{Lookup: e.lookup, GOOS: runtime.GOOS}, os.Getuid()) {
		// Trust only a socket in a folder private to this user: another
		// user could otherwise pose as the service.
		if mcp.CheckSocketDir(path) != nil {
			continue
		}
		if conn, err := mcp.DialService(path); err == nil {
			return conn
		}
	}
	return nil
}
