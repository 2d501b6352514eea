package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/toolbus"
)

func cmdHealth(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "health")
	asJSON := fs.Bool("json", false, "print the health object alone on stdout")
	noRelay := fs.Bool("no-relay", false, "check from this process even when the service runs")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	// A person asked: wait for the probes, bounded by their deadlines.
	wait := max(l.Config.AW.Timeout, l.Config.Sidecar.Timeout) + 2*time.Second
	c, via := openCaller(e, "health", l, log, engine.Deps{HealthFirstWait: wait}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	out := c.Call(ctx, toolbus.Request{Direct: true, Name: "system.health"})
	if out.Err != nil {
		return sayFailed(e, "health", out.Err)
	}
	var r health.Report
	if json.Unmarshal(out.Body, &r) != nil {
		fmt.Fprintln(e.stderr, "awbridge health: cannot check: the answer was unreadable")
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

// healthView is what the readable report needs besides the report: the
// settings of whoever answered, and who that was.
type healthView struct {
	awURL, host, sidecarURL string
	service                 bool
}

// printHealth writes the readable report: when healthy, who answered and
// what it uses; otherwise one line per failure, each with what fixes it.
func printHealth(w io.Writer, r *health.Report, c config.Config) {
	v := healthView{awURL: c.AW.URL, host: c.AW.Host, sidecarURL: c.Sidecar.URL, service: r.ServedBy == servedByService}
	if s := r.Settings; s != nil { // the answering bridge's settings win
		v.awURL, v.host, v.sidecarURL = s["activitywatch_url"], s["activitywatch_host"], s["sidecar_url"]
	}
	problems := healthProblems(r, v)
	if len(problems) > 0 || !r.Healthy() {
		if len(problems) == 0 {
			problems = []string{"awbridge is " + r.Status + " for a reason this version cannot name: run 'awbridge health --json'"}
		}
		for _, p := range problems {
			fmt.Fprintln(w, p)
		}
		return
	}
	who := "this process (no service runs)"
	if v.service {
		who = "the running service"
	}
	fmt.Fprintf(w, "healthy, answered by %s\n", who)
	host := v.host
	if host == "" {
		host = "chosen automatically"
	}
	server := ""
	if r.AWServer != "" {
		server = ", " + r.AWServer
	}
	fmt.Fprintf(w, "ActivityWatch: ok%s at %s (host %s, %s)\n", server, v.awURL, host, ms(r.Sources.ActivityWatch.LatencyMs))
	if r.Sources.Sidecar.Configured {
		fmt.Fprintf(w, "Sidecar:       ok at %s (%s)\n", v.sidecarURL, ms(r.Sources.Sidecar.LatencyMs))
	} else {
		fmt.Fprintln(w, "Sidecar:       not configured")
	}
	if r.ProtectedEnvConfigured {
		fmt.Fprintln(w, "Protected:     unchanged since the baseline")
	}
}

func ms(v float64) string { return fmt.Sprintf("%.1f ms", v) }

// awAnsweredBut says in fixed words (never the server's) how ActivityWatch
// answered without giving awbridge what it needs, by the failure's code.
var awAnsweredBut = map[string]string{
	toolbus.CodeAwAuthFailed:       "refused awbridge's API key (HTTP 401 or 403)",
	toolbus.CodeAwHostRejected:     "refused the Host header awbridge sends (HTTP 400)",
	toolbus.CodeAwEventsUnreadable: "answers, but the events of a bucket awbridge reads could not be read",
}

// healthProblems names every reason r is not healthy, each with what
// fixes it.
func healthProblems(r *health.Report, v healthView) []string {
	var out []string
	// The service reads only its config file.
	set := func(key, env, to string) string {
		if to != "" {
			to = " " + to
		}
		if v.service {
			return "set " + key + to + " in the service's config file, then run 'awbridge restart'"
		}
		return "set " + key + " (or " + env + ")" + to
	}
	checkedBy := ""
	if v.service {
		checkedBy = ", checked by the running service"
	}

	aw := r.Sources.ActivityWatch
	answered := "ActivityWatch" // the server that answered, when known
	if r.AWServer != "" {
		answered += " (" + r.AWServer + ")"
	}
	switch {
	case aw.OK:
	case !aw.Checked:
		out = append(out, fmt.Sprintf("ActivityWatch at %s has not answered yet (the first check is still under way%s): run 'awbridge health' again in a few seconds", v.awURL, checkedBy))
	case aw.Code == toolbus.CodeAwAuthFailed:
		out = append(out, fmt.Sprintf("%s at %s %s%s: %s", answered, v.awURL, awAnsweredBut[aw.Code], checkedBy,
			set("activitywatch.api_key", "AWBRIDGE_AW_API_KEY", "to the api_key of aw-server-rust's [auth] section")))
	case aw.Code == toolbus.CodeAwHostRejected:
		out = append(out, fmt.Sprintf("%s at %s %s%s: %s", answered, v.awURL, awAnsweredBut[aw.Code], checkedBy,
			set("activitywatch.host_header", "AWBRIDGE_AW_HOST_HEADER", "to a Host it accepts, e.g. 127.0.0.1:5600")))
	case aw.Code == toolbus.CodeAwEventsUnreadable:
		out = append(out, fmt.Sprintf("%s at %s %s%s: see ActivityWatch's own log; 'awbridge nowframe --json' shows which parts are unreadable",
			answered, v.awURL, awAnsweredBut[aw.Code], checkedBy))
	default:
		out = append(out, fmt.Sprintf("ActivityWatch does not answer at %s (%s%s): start ActivityWatch (aw-qt or aw-server), or %s",
			v.awURL, failureCause(aw.Error), checkedBy, set("activitywatch.url", "AWBRIDGE_AW_URL", "to where it runs")))
	}

	sc := r.Sources.Sidecar
	sidecarOK := r.SidecarProbeStatus != nil && *r.SidecarProbeStatus
	switch {
	case !sc.Configured:
	case !sc.Checked:
		out = append(out, fmt.Sprintf("The sidecar at %s has not answered yet (the first check is still under way): run 'awbridge health' again in a few seconds", v.sidecarURL))
	case sc.Code == toolbus.CodeSidecarAuthFailed:
		out = append(out, fmt.Sprintf("The sidecar at %s refused awbridge's GET /probe (HTTP 401 or 403%s): awbridge sends no credentials, so check that %s",
			v.sidecarURL, checkedBy, strings.Replace(set("sidecar.url", "AWBRIDGE_SIDECAR_URL", ""), "set ", "", 1)+" names the probe sidecar"))
	case !sc.OK:
		out = append(out, fmt.Sprintf("The sidecar does not answer at %s (%s%s): start it, or %s to run without it",
			v.sidecarURL, failureCause(sc.Error), checkedBy, strings.Replace(set("sidecar.url", "AWBRIDGE_SIDECAR_URL", ""), "set ", "unset ", 1)))
	case !sidecarOK:
		out = append(out, fmt.Sprintf("The sidecar at %s answers but reports itself unhealthy: check the sidecar", v.sidecarURL))
	}

	ownOK := true
	for _, ch := range r.Preflight {
		if !ch.OK {
			ownOK = false
			out = append(out, checkProblem(ch, v, set))
		}
	}
	if ownOK && !r.PreflightOK && sidecarOK {
		out = append(out, fmt.Sprintf("The sidecar at %s reports its own preflight failing: check the sidecar", v.sidecarURL))
	}

	if r.ProtectedEnvConfigured && !r.ProtectedEnvOK {
		out = append(out, protectProblem(r))
	}
	return out
}

// checkProblem is the sentence of a failed preflight or live check.
func checkProblem(ch health.Check, v healthView, set func(key, env, to string) string) string {
	d := oneLine(ch.Detail)
	switch ch.Name {
	case "config":
		return fmt.Sprintf("The configuration is not usable (%s): run 'awbridge config' to see each setting", d)
	case "activitywatch_url":
		return fmt.Sprintf("The ActivityWatch URL %q is %s: %s", v.awURL, d, set("activitywatch.url", "AWBRIDGE_AW_URL", "to an http URL, e.g. http://127.0.0.1:5600"))
	case "artifact_root":
		return fmt.Sprintf("Artifacts are off: the context root was %s", d)
	case "state_file":
		return "The state file was " + d
	case "context_root":
		return fmt.Sprintf("The context root is not usable (%s): make it a folder of yours that only you can write, or %s", d, set("paths.context_root", "AWBRIDGE_CONTEXT_ROOT", "to another folder"))
	case "artifact_writes":
		return fmt.Sprintf("Artifact writes are failing (%s): free space on the context root's disk or make it writable", d)
	case httpCheck:
		return fmt.Sprintf("The HTTP endpoint is not served (%s): the Unix socket and 'awbridge stdio' still work; on a shared machine prefer them, or %s",
			d, set("server.http", "AWBRIDGE_HTTP", "to a port only you use"))
	case "socket_path":
		return fmt.Sprintf("The service's socket folder is not usable (%s): set XDG_RUNTIME_DIR or AWBRIDGE_SOCKET to a folder only you can write", d)
	}
	name := strings.ReplaceAll(ch.Name, "_", " ")
	if d == "" {
		return fmt.Sprintf("The %s check failed: run 'awbridge config' to review the settings", name)
	}
	return fmt.Sprintf("The %s check failed (%s): run 'awbridge config' to review the settings", name, d)
}

// protectProblem is the sentence of a protected environment that differs
// from its baseline.
func protectProblem(r *health.Report) string {
	n := r.ProtectedDiffCount
	if n < 0 { // no baseline yet, or an unreadable one
		return "Protection is configured but there is no usable baseline to compare with: run 'awbridge protect snapshot' to record one ('awbridge protect status' says why an existing one is unusable)"
	}
	var items []string
	for i, d := range r.ProtectedDiffs {
		if i == 3 {
			items = append(items, fmt.Sprintf("and %d more", len(r.ProtectedDiffs)-3))
			break
		}
		items = append(items, fmt.Sprintf("%s %s", clipLine(oneLine(d.Item), 80), oneLine(d.Change)))
	}
	what := fmt.Sprintf("%d protected items differ from the baseline", n)
	if n == 1 {
		what = "1 protected item differs from the baseline"
	}
	if len(items) > 0 {
		what += " (" + strings.Join(items, ", ") + ")"
	}
	return what + ": if you made the change, run 'awbridge protect snapshot'; otherwise look at 'awbridge protect status'"
}

// failureCause says in a few words why a source failed, from its error
// text: the cause a person can act on, not the chain of calls.
func failureCause(errText string) string {
	s := strings.ToLower(errText)
	switch {
	case errText == "":
		return "no reason given"
	case strings.Contains(s, "circuit open"):
		return "paused after repeated failures"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "no such host"):
		return "unknown host"
	case strings.Contains(s, "no answer within the deadline"), strings.Contains(s, "timeout"), strings.Contains(s, "deadline exceeded"):
		return "no answer in time"
	}
	// The first clause, without the source's own name before it.
	first, _, _ := strings.Cut(oneLine(errText), ";")
	for _, p := range []string{"activitywatch: ", "sidecar: "} {
		first = strings.TrimPrefix(first, p)
	}
	return clipLine(strings.TrimSpace(first), 120)
}
