package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
)

// startSim serves a simulator on addr until ctx ends; stop waits for it.
// addr must be on loopback, as serve --http's (the same check): the
// simulator answers anyone who reaches it.
func startSim(ctx context.Context, addr string, probe bool) (url string, stop func(), err error) {
	ln, err := listenHTTP(addr)
	if errors.Is(err, errNotLoopback) {
		return "", nil, fmt.Errorf("sim: %q is not on loopback: the simulator listens on 127.0.0.1, [::1] or localhost only (it answers anyone who reaches it)", addr)
	}
	if err != nil {
		return "", nil, fmt.Errorf("sim: %w", err)
	}
	sim := awsim.New(awsim.Options{Hostname: "awsim", Seed: time.Now().UnixNano(), Probe: probe})
	sim.Seed(time.Now())
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cancel()
		}
	})
	wg.Go(func() { _ = sim.Run(ctx, time.Second) })
	wg.Go(func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	})
	return "http://" + ln.Addr().String(), func() { cancel(); wg.Wait() }, nil
}

func cmdSim(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "sim")
	acceptConfig(fs)
	addr := fs.String("addr", "127.0.0.1:5666", "loopback address to listen on")
	noProbe := fs.Bool("no-probe", false, "do not serve /probe")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	url, stop, err := startSim(ctx, *addr, !*noProbe)
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge "+err.Error())
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "simulated ActivityWatch at %s (probe at %s/probe); Ctrl-C stops\n", url, url)
	fmt.Fprintf(e.stderr, "try: AWBRIDGE_AW_URL=%s awbridge nowframe\n", url)
	<-ctx.Done()
	stop()
	return exitOK
}
