package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/health"
)

func cmdHealth(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "health")
	asJSON := fs.Bool("json", false, "print the health object alone on stdout")
	noRelay := fs.Bool("no-relay", false, "check from this process even when the service runs")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	// A person asked: wait for the probes (bounded by the sources' deadlines).
	wait := max(l.Config.AW.Timeout, l.Config.Sidecar.Timeout) + 500*time.Millisecond
	c, via := openCaller(e, "health", l, log, engine.Deps{HealthFirstWait: wait}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	out := c.Call(ctx, engine.Request{Kind: engine.KindDirect, Name: "system.health"})
	var r health.Report
	if out.Err != nil || json.Unmarshal(out.Body, &r) != nil {
		msg := "no readable answer"
		if out.Err != nil {
			msg = oneLine(out.Err.Error())
		}
		fmt.Fprintln(e.stderr, "awbridge health: cannot check: "+msg)
		return exitUsage
	}
	if ctx.Err() != nil {
		fmt.Fprintln(e.stderr, "awbridge health: interrupted")
		return exitUsage
	}
	r.ServedBy = via
	if *asJSON {
		b, _ := json.Marshal(&r)
		fmt.Fprintln(e.stdout, string(b))
	} else {
		printHealth(e.stdout, &r, l.Config)
	}
	if r.Healthy() {
		return exitOK
	}
	return exitDegraded
}

func printHealth(w io.Writer, r *health.Report, c config.Config) {
	aw := r.Sources.ActivityWatch
	if r.AWOK {
		fmt.Fprintf(w, "ActivityWatch: ok at %s (%.1f ms)\n", c.AW.URL, aw.LatencyMs)
	} else {
		fmt.Fprintf(w, "ActivityWatch: not reachable at %s: %s. Is ActivityWatch running? (start aw-qt or aw-server, or set AWBRIDGE_AW_URL)\n",
			c.AW.URL, oneLine(aw.Error))
	}
	sc := r.Sources.Sidecar
	switch {
	case !sc.Configured:
		fmt.Fprintln(w, "Sidecar:       not configured (set AWBRIDGE_SIDECAR_URL to use one)")
	case r.SidecarProbeStatus != nil && *r.SidecarProbeStatus:
		fmt.Fprintf(w, "Sidecar:       ok at %s (%.1f ms)\n", c.Sidecar.URL, sc.LatencyMs)
	case sc.OK:
		fmt.Fprintf(w, "Sidecar:       answered at %s but reports ok=false\n", c.Sidecar.URL)
	default:
		fmt.Fprintf(w, "Sidecar:       not reachable at %s: %s\n", c.Sidecar.URL, oneLine(sc.Error))
	}
	for _, ch := range r.Preflight {
		mark := "ok"
		if !ch.OK {
			mark = "FAILED"
		}
		fmt.Fprintf(w, "Preflight:     %-18s %s (%s)\n", ch.Name, mark, ch.Detail)
	}
	fmt.Fprintf(w, "Overall:       %s (answered by %s)\n", r.Status, map[string]string{servedByService: "the running service", servedByInProcess: "this process"}[r.ServedBy])
}
