package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/toolbus"
)

// mute is a service that accepts connections and reads requests but never
// answers. Each request line read is sent on arrived.
type mute struct {
	sock    string
	arrived chan string
}

func startMute(t *testing.T) *mute {
	t.Helper()
	m := &mute{sock: filepath.Join(shortDir(t), "s.sock"), arrived: make(chan string, 16)}
	ln, err := net.Listen("unix", m.sock)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					select {
					case m.arrived <- l:
					default:
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return m
}

// TestServiceThatNeverAnswers: a service that accepts and never answers
// holds no terminal command: after the deadline (the sources' deadlines
// and a margin) the command says so on one line and exits 2.
func TestServiceThatNeverAnswers(t *testing.T) {
	m := startMute(t)
	env := baseEnv(t, "http://"+closedAddr(t), "AWBRIDGE_SOCKET="+m.sock,
		"AWBRIDGE_AW_TIMEOUT=100ms", "AWBRIDGE_SIDECAR_TIMEOUT=100ms")
	for _, args := range [][]string{{"nowframe"}, {"health"}, {"tools"}, {"state"}, {"call", "help"}} {
		code, out, errs := runBin(t, env, args...) // a minute at most
		want := fmt.Sprintf("awbridge %s: the awbridge service did not answer within 3.1s", args[0])
		if code != exitUsage || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 || out != "" {
			t.Fatalf("awbridge %v: exit %d, want %d\nstdout: %q\nstderr: %q\nwant one line starting %q", args, code, exitUsage, out, errs, want)
		}
	}
}

// TestCtrlCEndsAWaitForTheService: SIGINT ends a command waiting for the
// service at once, long before its deadline.
func TestCtrlCEndsAWaitForTheService(t *testing.T) {
	m := startMute(t)
	env := baseEnv(t, "http://"+closedAddr(t), "AWBRIDGE_SOCKET="+m.sock, "AWBRIDGE_AW_TIMEOUT=5m")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "nowframe")
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-m.arrived: // the request is on the wire: now it waits
	case err := <-exited:
		t.Fatalf("awbridge nowframe ended before asking the service: %v\n%s", err, errb.String())
	case <-ctx.Done():
		t.Fatal("the request never reached the service")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	if ctx.Err() != nil {
		t.Fatal("Ctrl-C did not end awbridge nowframe")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || errb.String() != "awbridge nowframe: interrupted\n" {
		t.Fatalf("after Ctrl-C: %v\nstdout: %q\nstderr: %q", err, out.String(), errb.String())
	}
}

// TestHealthWithActivityWatchStopped: one plain line, nothing on stderr,
// exit 1; --json says aw_ok false.
func TestHealthWithActivityWatchStopped(t *testing.T) {
	aw := "http://" + closedAddr(t)
	// What a person has: no log level set.
	env := slices.DeleteFunc(baseEnv(t, aw), func(kv string) bool { return kv == "AWBRIDGE_LOG_LEVEL=warn" })
	code, out, errs := runBin(t, env, "health")
	want := "ActivityWatch does not answer at " + aw + " (connection refused): start ActivityWatch (aw-qt or aw-server), " +
		"or set activitywatch.url (or AWBRIDGE_AW_URL) to where it runs\n"
	if code != exitDegraded || out != want || errs != "" {
		t.Fatalf("health: exit %d, want 1\nstdout: %q\nstderr: %q\nwant stdout %q and no stderr", code, out, errs, want)
	}
	_, out, _ = runBin(t, env, "health", "--json")
	var h map[string]any
	if err := json.Unmarshal([]byte(out), &h); err != nil || h["aw_ok"] != false {
		t.Fatalf("--json stdout = %q", out)
	}
}

// TestPrintHealthGolden: the readable report, one plain line per failure
// with its fix; when healthy, who answered and the settings it uses.
func TestPrintHealthGolden(t *testing.T) {
	local := config.Defaults()
	local.AW.URL = "http://127.0.0.1:5600"
	yes, no := true, false
	ok := func(r *health.Report) {
		r.Status, r.AWOK, r.PreflightOK, r.ProtectedEnvOK = "healthy", true, true, true
		r.Sources.ActivityWatch.Configured, r.Sources.ActivityWatch.Checked, r.Sources.ActivityWatch.OK = true, true, true
		r.Sources.ActivityWatch.LatencyMs = 1.25
		r.Preflight = []health.Check{{Name: "config", OK: true, Detail: "loaded and valid"}}
		r.Settings = map[string]string{"activitywatch_url": "http://127.0.0.1:5600", "activitywatch_host": "", "sidecar_url": ""}
		r.ServedBy = servedByInProcess
	}
	awDown := func(r *health.Report) {
		r.Status, r.AWOK = "degraded", false
		r.Sources.ActivityWatch.OK = false
		r.Sources.ActivityWatch.Error = "activitywatch: aw info: unreachable: dial tcp 127.0.0.1:5600: connect: connection refused; aw buckets: unreachable: dial tcp 127.0.0.1:5600: connect: connection refused"
	}
	tests := []struct {
		name string
		edit func(r *health.Report)
	}{
		{"healthy in-process", func(r *health.Report) {}},
		{"healthy, answered by the service with its own settings", func(r *health.Report) {
			r.ServedBy, r.AWServer = servedByService, "aw-server (Python) v0.13.2"
			r.Settings = map[string]string{"activitywatch_url": "http://127.0.0.1:5666", "activitywatch_host": "desk", "sidecar_url": "http://127.0.0.1:5667"}
			r.Sources.Sidecar.Configured, r.Sources.Sidecar.Checked, r.Sources.Sidecar.OK, r.SidecarProbeStatus = true, true, true, &yes
			r.Sources.Sidecar.LatencyMs = 2
			r.ProtectedEnvConfigured = true
		}},
		{"ActivityWatch stopped", awDown},
		{"ActivityWatch stopped, answered by the service", func(r *health.Report) { awDown(r); r.ServedBy = servedByService }},
		{"ActivityWatch timing out", func(r *health.Report) {
			awDown(r)
			r.Sources.ActivityWatch.Error = "activitywatch: no answer within the deadline: aw info: context deadline exceeded"
		}},
		{"ActivityWatch refusing the key", func(r *health.Report) {
			awDown(r)
			r.Sources.ActivityWatch.Error = "activitywatch: aw buckets: 401 Unauthorized"
			r.Sources.ActivityWatch.Code = toolbus.CodeAwAuthFailed
			r.AWServer = "aw-server-rust v0.14.0"
		}},
		{"ActivityWatch refusing the Host header", func(r *health.Report) {
			awDown(r)
			r.Sources.ActivityWatch.Error = "activitywatch: aw info: HTTP 400: host header is invalid"
			r.Sources.ActivityWatch.Code = toolbus.CodeAwHostRejected
		}},
		{"ActivityWatch answering but its events unreadable", func(r *health.Report) {
			awDown(r)
			r.Sources.ActivityWatch.Error = "activitywatch: events of aw-watcher-window_desk: HTTP 500"
			r.Sources.ActivityWatch.Code = toolbus.CodeAwEventsUnreadable
		}},
		{"sidecar refusing the probe", func(r *health.Report) {
			r.Status = "degraded"
			r.Settings["sidecar_url"] = "http://127.0.0.1:5667"
			r.Sources.Sidecar.Configured, r.Sources.Sidecar.Checked, r.SidecarProbeStatus = true, true, &no
			r.Sources.Sidecar.Error = "sidecar: sidecar probe: HTTP 403: refused"
			r.Sources.Sidecar.Code = toolbus.CodeSidecarAuthFailed
		}},
		{"circuit open", func(r *health.Report) {
			awDown(r)
			r.Sources.ActivityWatch.Error = "activitywatch: circuit open after repeated failures, retry in 4.5s"
		}},
		{"first check still under way", func(r *health.Report) {
			r.Status, r.AWOK = "checking", false
			r.Sources.ActivityWatch.Checked, r.Sources.ActivityWatch.OK = false, false
		}},
		{"sidecar down", func(r *health.Report) {
			r.Status = "degraded"
			r.Settings["sidecar_url"] = "http://127.0.0.1:5667"
			r.Sources.Sidecar.Configured, r.Sources.Sidecar.Checked, r.SidecarProbeStatus = true, true, &no
			r.Sources.Sidecar.Error = "sidecar: sidecar probe: unreachable: Get \"…\": dial tcp 127.0.0.1:5667: connect: connection refused"
		}},
		{"sidecar unhealthy", func(r *health.Report) {
			r.Status = "degraded"
			r.Settings["sidecar_url"] = "http://127.0.0.1:5667"
			r.Sources.Sidecar.Configured, r.Sources.Sidecar.Checked, r.Sources.Sidecar.OK, r.SidecarProbeStatus = true, true, true, &no
		}},
		{"protection configured, no baseline yet", func(r *health.Report) {
			r.Status, r.ProtectedEnvOK, r.ProtectedEnvConfigured, r.ProtectedDiffCount = "degraded", false, true, -1
		}},
		{"everything wrong at once", func(r *health.Report) {
			awDown(r)
			r.PreflightOK, r.ProtectedEnvOK, r.ProtectedEnvConfigured = false, false, true
			r.Preflight = append(r.Preflight,
				health.Check{Name: "context_root", OK: false, Detail: "not writable"},
				health.Check{Name: "artifact_writes", OK: false, Detail: "3 writes failed since the last success: the context root is full or not writable; calls go on without artifacts"},
				health.Check{Name: "socket_path", OK: false, Detail: "not writable"},
				health.Check{Name: "artifact_root", OK: false, Detail: "refused: /home/a/ctx is writable by others (chmod 700 it)"},
				health.Check{Name: "state_file", OK: false, Detail: "refused: /home/a/.local/state/awbridge/state.json is a symbolic link; persistent state is off (remove it and restart)"})
			r.ProtectedDiffCount = 2
			r.ProtectedDiffs = []protect.Diff{{Kind: "file", Item: "/home/a/.config/awbridge/config.toml", Change: "changed"}, {Kind: "env", Item: "AWBRIDGE_AW_URL", Change: "added"}}
		}},
	}
	var b strings.Builder
	for _, tt := range tests {
		var r health.Report
		ok(&r)
		tt.edit(&r)
		var out bytes.Buffer
		printHealth(&out, &r, local)
		fmt.Fprintf(&b, "== %s\n%s", tt.name, out.String())
		if s := out.String(); strings.Contains(s, "awbridge: awbridge") || strings.Contains(s, "sources.") || strings.Contains(s, "aw buckets") || strings.Contains(s, "-1 ") {
			t.Errorf("%s: a doubled prefix, a JSON field, a repeated cause or a count of -1:\n%s", tt.name, s)
		}
	}
	checkGolden(t, filepath.Join("testdata", "terminal", "health-report.golden"), b.String())
}

// TestPrintFrameGolden: `awbridge nowframe` in words, in local time.
func TestPrintFrameGolden(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	asOf := time.Date(2026, 3, 2, 9, 45, 30, 0, time.UTC)
	timing := func(ago time.Duration) *nowframe.EventTiming {
		return &nowframe.EventTiming{Since: asOf.Add(-ago), LastSeen: asOf.Add(-time.Second), AgeSeconds: 1}
	}
	base := func() nowframe.Now {
		return nowframe.Now{
			AsOf:   asOf,
			Window: nowframe.Window{Available: true, App: "Code", Title: "main.go - awbridge", EventTiming: timing(3*time.Minute + 10*time.Second)},
			AFK:    nowframe.AFK{Status: "not-afk", EventTiming: timing(40 * time.Minute)},
		}
	}
	tests := []struct {
		name string
		now  func() nowframe.Now
		down string
		code string
	}{
		{"editor, not away", base, "", ""},
		{"browser with its tab", func() nowframe.Now {
			n := base()
			n.Window.App, n.Window.Title = "Google-chrome", "encoding/json - Go Packages - Google Chrome"
			n.Browser = nowframe.Browser{Focused: true, URL: "https://pkg.go.dev/encoding/json", Title: "encoding/json - Go Packages"}
			return n
		}, "", ""},
		{"browser, tab not shown (private)", func() nowframe.Now {
			n := base()
			n.Window.App, n.Window.Title = "Google-chrome", ""
			n.Window.Excluded, n.Window.ExcludedReason = true, "private_tab"
			n.Browser = nowframe.Browser{Focused: true, Excluded: true, ExcludedReason: "private_tab", Private: true}
			return n
		}, "", ""},
		{"password manager, two hours in", func() nowframe.Now {
			n := base()
			n.Window.App, n.Window.Title, n.Window.Excluded, n.Window.ExcludedReason = "1Password", "", true, "password_manager"
			n.Window.EventTiming = timing(2*time.Hour + 5*time.Minute)
			return n
		}, "", ""},
		{"away", func() nowframe.Now {
			n := base()
			n.AFK = nowframe.AFK{Status: "afk", EventTiming: timing(4 * time.Minute)}
			n.Window.EventTiming = timing(25 * time.Second)
			return n
		}, "", ""},
		{"stale", func() nowframe.Now {
			n := base()
			n.Stale = true
			n.NewestEvent = &nowframe.NewestEvent{EndedAt: asOf.Add(-20 * time.Minute)}
			n.Window.EventTiming = &nowframe.EventTiming{Since: asOf.Add(-20*time.Minute - 21*time.Second),
				LastSeen: asOf.Add(-20 * time.Minute), AgeSeconds: 1200, Stale: true}
			n.AFK = nowframe.AFK{Status: "unknown", Reason: "no_events"}
			return n
		}, "", ""},
		{"stale: a 21 s window event seen 2 h 16 min ago, not away then", func() nowframe.Now {
			n := base()
			n.Stale = true
			seen := asOf.Add(-2*time.Hour - 16*time.Minute)
			n.NewestEvent = &nowframe.NewestEvent{EndedAt: seen}
			n.Window.EventTiming = &nowframe.EventTiming{Since: seen.Add(-21 * time.Second), LastSeen: seen, AgeSeconds: 8160, Stale: true}
			n.AFK.EventTiming = &nowframe.EventTiming{Since: seen.Add(-time.Hour), LastSeen: seen, AgeSeconds: 8160, Stale: true}
			return n
		}, "", ""},
		{"away, the AFK watcher stale, the window fresh", func() nowframe.Now {
			n := base()
			n.AFK = nowframe.AFK{Status: "afk", EventTiming: &nowframe.EventTiming{Since: asOf.Add(-time.Hour),
				LastSeen: asOf.Add(-50 * time.Minute), AgeSeconds: 3000, Stale: true}}
			return n
		}, "", ""},
		{"no window watcher", func() nowframe.Now {
			n := base()
			n.Window = nowframe.Window{Reason: "no_window_bucket"}
			return n
		}, "", ""},
		{"ActivityWatch down", base, "activitywatch: aw info: unreachable: dial tcp 127.0.0.1:5600: connect: connection refused; aw buckets: unreachable", "AwUnavailable"},
		// ActivityWatch answered: the line never says it did not, and never
		// quotes the server's own words.
		{"ActivityWatch refusing the key", base, "activitywatch: aw info: http status 401: unauthorized: SERVER-WORDS", toolbus.CodeAwAuthFailed},
		{"ActivityWatch refusing the Host header", base, "activitywatch: aw info: http status 400: SERVER-WORDS", toolbus.CodeAwHostRejected},
		{"ActivityWatch events unreadable", base, "activitywatch: aw events: http status 500: SERVER-WORDS", toolbus.CodeAwEventsUnreadable},
	}
	var b strings.Builder
	for _, tt := range tests {
		f := frameView{Now: tt.now()}
		f.Sources.ActivityWatch = nowframe.SourceReport{Configured: true, OK: tt.down == ""}
		if tt.down != "" {
			f.Sources.ActivityWatch.Error, f.Sources.ActivityWatch.Code = &tt.down, tt.code
		}
		body, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		printFrame(&out, body, loc)
		fmt.Fprintf(&b, "== %s\n%s", tt.name, out.String())
		if strings.Contains(out.String(), "SERVER-WORDS") || (tt.code != "" && tt.code != "AwUnavailable" && strings.Contains(out.String(), "did not answer")) {
			t.Errorf("%s: the line quotes the server or says ActivityWatch did not answer when it did:\n%s", tt.name, out.String())
		}
	}
	checkGolden(t, filepath.Join("testdata", "terminal", "nowframe.golden"), b.String())
	if !strings.Contains(b.String(), "Code: main.go - awbridge (since 10:42, 3 min) - not away\n") {
		t.Fatalf("the README's example line is not what nowframe prints:\n%s", b.String())
	}
}

// runIn runs the CLI in this process with vars as its environment.
func runIn(t *testing.T, vars map[string]string, tty bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{args: args, stdout: &out, stderr: &errb, version: "test", stderrTTY: &tty,
		lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	code := run(context.Background(), e)
	return code, out.String(), errb.String()
}

func cleanVars(t *testing.T) map[string]string {
	home := t.TempDir()
	return map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_STATE_HOME": filepath.Join(home, "state"),
		"AWBRIDGE_AW_URL": "http://" + closedAddr(t), "AWBRIDGE_AW_TIMEOUT": "200ms",
		"AWBRIDGE_SOCKET": filepath.Join(home, "no-service.sock"),
	}
}

// TestHelpFlagsAndArguments: --help on stdout with exit 0; a bad flag or
// an extra argument is one line on stderr with the hint, exit 2.
func TestHelpFlagsAndArguments(t *testing.T) {
	vars := cleanVars(t)
	tests := []struct {
		args       []string
		code       int
		out, errln string
	}{
		{[]string{"--help"}, exitOK, "Commands:", ""},
		{[]string{"help"}, exitOK, "Commands:", ""},
		{[]string{"health", "--help"}, exitOK, "Usage: awbridge health", ""},
		{[]string{"sim", "-h"}, exitOK, "Usage: awbridge sim", ""},
		{[]string{"status", "--help"}, exitOK, "Usage: awbridge status", ""},
		{[]string{"health", "--bogus"}, exitUsage, "", "awbridge health: flag provided but not defined: -bogus; run 'awbridge health --help'"},
		{[]string{"nowframe", "--reason"}, exitUsage, "", "awbridge nowframe: flag needs an argument: -reason; run 'awbridge nowframe --help'"},
		{[]string{"health", "now"}, exitUsage, "", `awbridge health: unexpected argument "now"; run 'awbridge health --help'`},
		{[]string{"tools", "--json", "extra"}, exitUsage, "", `awbridge tools: unexpected argument "extra"; run 'awbridge tools --help'`},
		{[]string{"version", "2"}, exitUsage, "", `awbridge version: unexpected argument "2"; run 'awbridge version --help'`},
		{[]string{"call", "help", "{}", "more"}, exitUsage, "", `awbridge call: unexpected argument "more"; run 'awbridge call --help'`},
		{[]string{"frobnicate"}, exitUsage, "", `awbridge: unknown command "frobnicate"; run 'awbridge --help'`},
	}
	for _, tt := range tests {
		code, out, errs := runIn(t, vars, false, tt.args...)
		if code != tt.code {
			t.Errorf("awbridge %v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
			continue
		}
		if tt.errln == "" {
			if !strings.Contains(out, tt.out) || errs != "" {
				t.Errorf("awbridge %v: stdout lacks %q or stderr is not empty\nstdout: %s\nstderr: %s", tt.args, tt.out, out, errs)
			}
			continue
		}
		if errs != tt.errln+"\n" || out != "" {
			t.Errorf("awbridge %v:\nstderr: %q\nwant:   %q\nstdout: %q", tt.args, errs, tt.errln+"\n", out)
		}
	}
	// The config file named in --help is the one the code reads.
	_, out, _ := runIn(t, vars, false, "health", "--help")
	def := config.DefaultConfigPath(config.Env{Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	if def == "" || !strings.Contains(out, "default "+def+")") {
		t.Errorf("health --help does not name the default config file %q:\n%s", def, out)
	}
}

// TestCallErrorsReadLikeSentences: a refused call is one sentence with its
// suggestions once.
func TestCallErrorsReadLikeSentences(t *testing.T) {
	vars := cleanVars(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"call", "nowframe"}, `awbridge call: unknown tool "nowframe"; did you mean nowframe_build or nowframe_history?`},
		{[]string{"call", "nowframe_build", `{"reasn":"x"}`}, `awbridge call: unknown argument "reasn"; did you mean reason?`},
		{[]string{"call", "zzzzzzzz"}, `awbridge call: unknown tool "zzzzzzzz"; run 'awbridge tools' to list them`},
	}
	for _, tt := range tests {
		code, out, errs := runIn(t, vars, false, tt.args...)
		if code != exitUsage || errs != tt.want+"\n" || out != "" {
			t.Errorf("awbridge %v: exit %d\nstderr: %q\nwant:   %q\nstdout: %q", tt.args, code, errs, tt.want+"\n", out)
		}
	}
}

// TestTerminalLogsFromWarning: on a terminal, informational log lines are
// hidden unless -v or a level set explicitly; a report command prints its
// report and no log line repeating it.
func TestTerminalLogsFromWarning(t *testing.T) {
	vars := cleanVars(t)
	// health with ActivityWatch stopped, on a terminal: the report alone.
	code, out, errs := runIn(t, vars, true, "health")
	if code != exitDegraded || strings.Count(out, "\n") != 1 || errs != "" {
		t.Fatalf("health on a terminal: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	// -v shows the log lines.
	if _, _, errs := runIn(t, vars, true, "health", "-v"); !strings.Contains(errs, "source down") {
		t.Fatalf("health -v shows no log line:\n%s", errs)
	}
	// So does an explicit level.
	vars["AWBRIDGE_LOG_LEVEL"] = "warn"
	if _, _, errs := runIn(t, vars, true, "health"); !strings.Contains(errs, "source down") {
		t.Fatalf("AWBRIDGE_LOG_LEVEL=warn shows no log line:\n%s", errs)
	}
	delete(vars, "AWBRIDGE_LOG_LEVEL")

	lookup := func(extra map[string]string) config.Env {
		return config.Env{Lookup: func(k string) (string, bool) {
			if v, ok := extra[k]; ok {
				return v, true
			}
			v, ok := vars[k]
			return v, ok
		}}
	}
	for _, tt := range []struct {
		name            string
		extra           map[string]string
		verbose, tty    bool
		command, expect string
	}{
		{"serve on a terminal", nil, false, true, "serve", "warn"},
		{"serve under a service manager", nil, false, false, "serve", "info"},
		{"serve -v", nil, true, true, "serve", "debug"},
		{"serve with AWBRIDGE_LOG_LEVEL", map[string]string{"AWBRIDGE_LOG_LEVEL": "info"}, false, true, "serve", "info"},
		{"nowframe", nil, false, false, "nowframe", "error"},
		{"nowframe with AWBRIDGE_LOG_LEVEL", map[string]string{"AWBRIDGE_LOG_LEVEL": "debug"}, false, true, "nowframe", "debug"},
	} {
		l, err := config.Load(lookup(tt.extra), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := logLevel(l, tt.command, tt.verbose, tt.tty); got != tt.expect {
			t.Errorf("%s: level %s, want %s", tt.name, got, tt.expect)
		}
	}
}

// TestStdioWarnsWhenTheServiceReadsAnotherAW: relayed to the service, a
// stdio session whose own environment names another ActivityWatch gets one
// warning line; the same URL gets none.
func TestStdioWarnsWhenTheServiceReadsAnotherAW(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(shortDir(t), "awbridge", "awbridge.sock")
	startServe(t, append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock), sock)
	other := "http://" + closedAddr(t)
	for _, tt := range []struct {
		url  string
		warn bool
	}{{other, true}, {srv.URL + "/", false}} {
		lines, errs := session(t, append(baseEnv(t, tt.url), "AWBRIDGE_SOCKET="+sock), []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`})
		want := "awbridge stdio: the running service answers this session and reads ActivityWatch at " + srv.URL + ", not at " + other + " from AWBRIDGE_AW_URL"
		switch {
		case tt.warn && (!strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1):
			t.Fatalf("stdio with AWBRIDGE_AW_URL=%s: stderr %q, want one line starting %q", tt.url, errs, want)
		case !tt.warn && errs != "":
			t.Fatalf("stdio with the service's own URL warned: %q", errs)
		}
		if len(lines) != 1 || !strings.Contains(lines[0], `"id":1`) {
			t.Fatalf("the relayed session did not answer: %q", lines)
		}
	}
}

// TestDemoShowsTheNowPart: make demo shows a session, frames and the "now"
// part of the answer.
func TestDemoShowsTheNowPart(t *testing.T) {
	code, out, errs := runBin(t, baseEnv(t, "http://127.0.0.1:1"), "demo", "--duration", "3s")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errs)
	}
	for _, want := range []string{`<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"`, `"aw_ok":true`,
		`"sidecar_probe_status":true`, `<- {"jsonrpc":"2.0","id":3,"result":{"content"`,
		`its "now" part`, `"window": {`, `"afk": {`, `"summary": "`} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "Active in ") && !strings.Contains(out, "Away since") {
		t.Fatalf("demo showed no frame:\n%s", out)
	}
}

// TestDemoAndHealthClipLongLines: demo's request and reply lines and
// health's protected items are cut at n bytes on a rune boundary, then
// " … (N bytes)" says how long the line was.
func TestDemoAndHealthClipLongLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcdef", 4, "abcd … (6 bytes)"},
		{"ééé", 3, "é … (6 bytes)"},
	} {
		if got := clipLine(tt.in, tt.n); got != tt.want {
			t.Errorf("clipLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestNowframeStaleSaysHowLongAndHowLongAgo: a window event that lasted
// 21 s and ended 2 h 15 min ago is printed with its length and how long
// ago it was seen, not as "since 19:17, 2 h 16 min" (as if it were still
// going on); so is the AFK state it last reported.
func TestNowframeStaleSaysHowLongAndHowLongAgo(t *testing.T) {
	sim := awsim.New(awsim.Options{Hostname: "vm"})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	now := time.Now().UTC()
	start := now.Add(-(2*time.Hour + 15*time.Minute + 21*time.Second)).Truncate(time.Second)
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/0/buckets/"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	ts := start.Format(time.RFC3339)
	post("aw-watcher-window_vm", `{"client":"aw-watcher-window","type":"currentwindow","hostname":"vm"}`)
	post("aw-watcher-window_vm/events", `[{"timestamp":"`+ts+`","duration":21,"data":{"app":"Code","title":"main.go - awbridge"}}]`)
	post("aw-watcher-afk_vm", `{"client":"aw-watcher-afk","type":"afkstatus","hostname":"vm"}`)
	post("aw-watcher-afk_vm/events", `[{"timestamp":"`+ts+`","duration":21,"data":{"status":"not-afk"}}]`)

	code, out, errs := runBin(t, baseEnv(t, srv.URL, "TZ=UTC"), "nowframe")
	if code != 0 {
		t.Fatalf("nowframe: exit %d\n%s%s", code, out, errs)
	}
	// The minute may turn while the command runs.
	agoNow := span(time.Since(start.Add(21 * time.Second)))
	var line string
	for _, ago := range []string{"2 h 15 min", "2 h 16 min"} {
		l := fmt.Sprintf("Code: main.go - awbridge (at %s for 21 s, seen %s ago) - not away then - nothing new lately: "+
			"the watchers stopped or the machine slept (last seen %s)\n", start.Format("15:04"), ago, start.Add(21*time.Second).Format("15:04"))
		if out == l {
			return
		}
		line = l
	}
	t.Fatalf("a stale frame printed\n%q\nwant (about %s ago)\n%q", out, agoNow, line)
}

// TestFlagsBeforeOrAfterArguments: flags may come before or after a
// command's arguments, as people type them; "--" ends the flags, and an
// argument too many is still refused. The service named here accepts and
// never answers, so an answer proves --no-relay was obeyed wherever it
// stood.
func TestFlagsBeforeOrAfterArguments(t *testing.T) {
	vars := cleanVars(t)
	vars["AWBRIDGE_SOCKET"] = startMute(t).sock
	for _, args := range [][]string{
		{"call", "--no-relay", "system_health"},
		{"call", "system_health", "{}", "--no-relay"},
		{"call", "system_health", "--no-relay", "{}"},
		{"call", "--aw-timeout", "200ms", "system_health", "--no-relay"},
		{"call", "--no-relay", "--", "system_health", "{}"},
	} {
		code, out, errs := runIn(t, vars, false, args...)
		if code == exitUsage || !strings.Contains(out, `"tool":"system_health"`) || !strings.Contains(out, `"served_by":"in-process"`) {
			t.Errorf("awbridge %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	for _, tt := range []struct {
		args  []string
		errln string
	}{
		{[]string{"call", "--no-relay"}, "awbridge call: name a tool, e.g. awbridge call help"},
		{[]string{"call", "--no-relay", "help", "{}", "more"}, `awbridge call: unexpected argument "more"; run 'awbridge call --help'`},
		{[]string{"call", "help", "{", "--no-relay"}, "awbridge call: JSON-ARGS is not valid JSON"},
		{[]string{"tools", "extra", "--no-relay"}, `awbridge tools: unexpected argument "extra"; run 'awbridge tools --help'`},
		{[]string{"health", "--", "--json"}, `awbridge health: unexpected argument "--json"; run 'awbridge health --help'`},
	} {
		code, out, errs := runIn(t, vars, false, tt.args...)
		if code != exitUsage || errs != tt.errln+"\n" || out != "" {
			t.Errorf("awbridge %v: exit %d\nstderr: %q\nwant:   %q\nstdout: %q", tt.args, code, errs, tt.errln+"\n", out)
		}
	}
}

// TestToolsTableKeepsItsColumns: `awbridge tools` fits 80 columns (less
// one) and every title starts in the same column, however long the
// longest name; a name too long for the column puts its title on the next
// line, and a long title wraps under its column.
func TestToolsTableKeepsItsColumns(t *testing.T) {
	code, out, errs := runIn(t, cleanVars(t), false, "tools", "--no-relay")
	if code != exitOK || errs != "" {
		t.Fatalf("tools: exit %d\n%s%s", code, out, errs)
	}
	checkTable := func(out string) {
		t.Helper()
		col := -1
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if width(l) > summaryWidth {
				t.Errorf("a line is %d columns wide:\n%s", width(l), l)
			}
			i := strings.Index(l, " ")
			if i < 0 {
				continue // a long name alone on its line
			}
			at := i + len(l[i:]) - len(strings.TrimLeft(l[i:], " "))
			if col < 0 {
				col = at
			}
			if at != col {
				t.Errorf("a title starts in column %d, the first in %d:\n%s", at, col, out)
			}
		}
	}
	checkTable(out)
	var b bytes.Buffer
	printTools(&b, []byte(`{"tools":[{"name":"help","title":"Help: what awbridge can answer"},`+
		`{"name":"activity_timeline","title":"What the person did when"},`+
		`{"name":"an_extraordinarily_long_tool_name_from_a_plugin","title":"Its title"},`+
		`{"name":"state","title":"A title long enough to need a second line in a table eighty columns wide, and a third"}]}`))
	checkTable(b.String())
	checkGolden(t, filepath.Join("testdata", "terminal", "tools.golden"), b.String())
}

func TestBadConfigIsOneLineAndExit2(t *testing.T) {
	code, _, errs := runBin(t, baseEnv(t, "http://127.0.0.1:5600", "AWBRIDGE_AW_TIMEOUT=soon"), "health")
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "AWBRIDGE_AW_TIMEOUT") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	for _, c := range commands() {
		code, out, errs := runBin(t, baseEnv(t, "http://127.0.0.1:1"), c.name, "--help")
		if code != 0 || !strings.Contains(out, "Example:\n  awbridge "+c.name) || errs != "" {
			t.Fatalf("%s --help: exit %d, no example on stdout:\n%s%s", c.name, code, out, errs)
		}
	}
}

// awbridge call passes the same pipeline: shaping, the envelope, artifacts.
func TestCallCommandPassesThePipeline(t *testing.T) {
	srv, _ := recordedAW(t)
	root := t.TempDir()
	code, out, errs := runBin(t, baseEnv(t, srv.URL, "AWBRIDGE_CONTEXT_ROOT="+root), "call", "aw_get_state",
		`{"trace_id":"cli","span_id":"c1","output":{"path":"info","pick":["hostname"]}}`)
	if code != 0 {
		t.Fatalf("awbridge call: exit %d\n%s", code, errs)
	}
	var env struct {
		Result map[string]any `json:"result"`
		URI    string         `json:"artifact_uri_json"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || len(env.Result) != 1 || env.Result["hostname"] != "vm" ||
		env.URI != "artifact://runs/cli/tool_calls/c1/result.json" {
		t.Fatalf("envelope %s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "artifacts/runs/cli/tool_calls/c1.context")); err != nil {
		t.Fatal(err)
	}
}
