package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/install"
)

// serviceDeps is what the service commands need from the machine (tests
// run them against a fake service manager).
type serviceDeps struct {
	goos        string
	executable  func() (string, error)                      // this binary, symlinks resolved
	newService  func(install.Spec) (install.Service, error) // kardianos/service
	platform    func() string                               // the service manager here
	uid         int
	dialTimeout time.Duration                         // bounds status's socket check
	lookupUser  func(name string) (*user.User, error) // nil: user.Lookup
	currentUser func() (*user.User, error)            // nil: user.Current
}

// hostServiceDeps is the real machine.
func hostServiceDeps() serviceDeps {
	return serviceDeps{
		goos: runtime.GOOS,
		executable: func() (string, error) {
			exe, err := os.Executable()
			if err != nil {
				return "", err
			}
			return filepath.EvalSymlinks(exe)
		},
		newService:  install.NewService,
		platform:    install.Platform,
		uid:         os.Getuid(),
		dialTimeout: 500 * time.Millisecond,
		lookupUser:  lookupAccount,
		currentUser: user.Current,
	}
}

// lookupAccount is user.Lookup and, on Linux, for an account it does not
// know, what `getent passwd` says: built without cgo, os/user reads only
// /etc/passwd, while the account that ran sudo may live in LDAP, sssd or
// systemd-homed.
func lookupAccount(name string) (*user.User, error) {
	u, err := user.Lookup(name)
	var unknown user.UnknownUserError
	if err == nil || !errors.As(err, &unknown) || runtime.GOOS != "linux" || name == "" || name[0] == '-' {
		return u, err
	}
	out, gerr := exec.Command("getent", "passwd", name).Output()
	if gerr != nil {
		return nil, err
	}
	if pu, ok := passwdEntry(string(out), name); ok {
		return pu, nil
	}
	return nil, err
}

// passwdEntry reads name's line of passwd(5) ("name:x:uid:gid:gecos:home:shell").
func passwdEntry(line, name string) (*user.User, bool) {
	f := strings.Split(strings.TrimSpace(line), ":")
	if len(f) != 7 || f[0] != name || f[5] == "" {
		return nil, false
	}
	for _, id := range f[2:4] {
		if _, err := strconv.ParseUint(id, 10, 32); err != nil {
			return nil, false
		}
	}
	gecos, _, _ := strings.Cut(f[4], ",")
	return &user.User{Username: f[0], Uid: f[2], Gid: f[3], Name: gecos, HomeDir: f[5]}, true
}

// onHost is a service command run against this machine.
func onHost(run func(context.Context, *env, []string, serviceDeps) int) func(context.Context, *env, []string) int {
	return func(ctx context.Context, e *env, args []string) int { return run(ctx, e, args, hostServiceDeps()) }
}

// serviceFlags parses the flags every control command takes: --system
// and --config (accepted for uniformity). ok is false when the command
// must stop with code.
func serviceFlags(e *env, name string, args []string, more func(*flag.FlagSet)) (system bool, ok bool, code int) {
	fs := newFlags(e, name)
	sys := fs.Bool("system", false, "the system-wide service instead of the per-user one")
	if more != nil {
		more(fs)
	}
	acceptConfig(fs)
	if code := parse(fs, args); code >= 0 {
		return false, false, code
	}
	return *sys, true, -1
}

// homeDir is the user's home folder: HOME (USERPROFILE on Windows), else
// what the OS says.
func homeDir(e *env, goos string) string {
	name := "HOME"
	if goos == "windows" {
		name = "USERPROFILE"
	}
	if h, ok := e.lookup(name); ok && h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// control runs the control command name (uninstall, start, stop,
// restart): act acts on the installed service and says what it did. A
// service that is not installed is said on stderr, exit 1.
func control(e *env, name string, args []string, d serviceDeps, act func(m *install.Manager) (string, error)) int {
	system, ok, code := serviceFlags(e, name, args, nil)
	if !ok {
		return code
	}
	spec := install.Spec{System: system, GOOS: d.goos, Home: homeDir(e, d.goos)}
	svc, err := d.newService(spec)
	if err != nil {
		serviceError(e, name, spec, err)
		return exitUsage
	}
	said, err := act(&install.Manager{Spec: spec, Service: svc})
	switch {
	case errors.Is(err, install.ErrNotInstalled):
		fmt.Fprintf(e.stderr, "awbridge %s: awbridge is not installed as a %s (install it: awbridge install%s)\n", name, spec.Kind(), systemFlag(spec))
		return exitDegraded
	case err != nil:
		serviceError(e, name, spec, err)
		return exitDegraded
	}
	fmt.Fprintln(e.stdout, said)
	return exitOK
}

// serviceError prints err of command name on one line, and a hint on the
// next when there is one.
func serviceError(e *env, name string, spec install.Spec, err error) {
	msg := strings.TrimPrefix(oneLine(err.Error()), "install: ")
	fmt.Fprintf(e.stderr, "awbridge %s: %s\n", name, msg)
	if h := install.Hint(spec, err); h != "" {
		fmt.Fprintf(e.stderr, "awbridge %s: hint: %s\n", name, h)
	}
}

// sudo is the prefix of a command line that needs root.
func sudo(spec install.Spec) string {
	if spec.System && spec.GOOS != "windows" {
		return "sudo "
	}
	return ""
}

// systemFlag is " --system" for a system-wide spec.
func systemFlag(spec install.Spec) string {
	if spec.System {
		return " --system"
	}
	return ""
}

// unitWhere is the kind of service and, when it has one, its unit file.
func unitWhere(spec install.Spec) string {
	if p := spec.UnitPath(); p != "" {
		return spec.Kind() + " " + p
	}
	return spec.Kind()
}

func runStart(_ context.Context, e *env, args []string, d serviceDeps) int {
	return control(e, "start", args, d, func(m *install.Manager) (string, error) {
		started, err := m.Start()
		if !started {
			return "awbridge already runs (" + m.Spec.Kind() + ")", err
		}
		return "started awbridge (" + m.Spec.Kind() + ")", err
	})
}

func runStop(_ context.Context, e *env, args []string, d serviceDeps) int {
	return control(e, "stop", args, d, func(m *install.Manager) (string, error) {
		stopped, err := m.Stop()
		if !stopped {
			return "awbridge was not running (" + m.Spec.Kind() + ")", err
		}
		return "stopped awbridge (" + m.Spec.Kind() + "); it starts again at the next " + startsAt(m.Spec), err
	})
}

func runRestart(_ context.Context, e *env, args []string, d serviceDeps) int {
	return control(e, "restart", args, d, func(m *install.Manager) (string, error) {
		return "restarted awbridge (" + m.Spec.Kind() + ")", m.Restart()
	})
}

// startsAt is when the service manager starts the service by itself.
func startsAt(spec install.Spec) string {
	if spec.System || spec.GOOS == "windows" {
		return "boot"
	}
	return "login"
}

// statusReport is `awbridge status --json`.
type statusReport struct {
	State         string `json:"state"` // not installed, running, stopped, unknown, unsupported
	Installed     bool   `json:"installed"`
	Kind          string `json:"kind"`
	UnitPath      string `json:"unit_path,omitempty"`
	Manager       string `json:"service_manager"`
	Error         string `json:"error,omitempty"`
	Socket        string `json:"socket"`
	SocketAnswers bool   `json:"socket_answers"`
}

func runStatus(_ context.Context, e *env, args []string, d serviceDeps) int {
	var asJSON *bool
	system, ok, code := serviceFlags(e, "status", args, func(fs *flag.FlagSet) {
		asJSON = fs.Bool("json", false, "print the status as one JSON object")
	})
	if !ok {
		return code
	}
	spec := install.Spec{System: system, GOOS: d.goos, Home: homeDir(e, d.goos)}
	r := statusReport{Kind: spec.Kind(), UnitPath: spec.UnitPath(), Manager: d.platform()}
	if svc, err := d.newService(spec); err != nil {
		r.State, r.Error = "unsupported", strings.TrimPrefix(oneLine(err.Error()), "install: ")
	} else {
		m := &install.Manager{Spec: spec, Service: svc}
		st, err := m.State()
		r.State, r.Installed = string(st), st != install.NotInstalled
		if err != nil {
			r.Error = oneLine(err.Error())
		}
	}
	for i, p := range config.SocketCandidates(config.Env{Lookup: e.lookup, GOOS: d.goos}, d.uid) {
		if answers := socketAnswers(p, d.dialTimeout); i == 0 || answers {
			r.Socket, r.SocketAnswers = p, answers
		}
		if r.SocketAnswers {
			break
		}
	}
	code = exitOK
	if !r.SocketAnswers {
		code = exitDegraded
	}
	if *asJSON {
		b, _ := json.Marshal(r) // plain strings and bools
		fmt.Fprintf(e.stdout, "%s\n", b)
		return code
	}
	where := unitWhere(spec)
	switch install.State(r.State) {
	case install.Running:
		fmt.Fprintf(e.stdout, "service: installed, running (%s)\n", where)
	case install.Stopped:
		fmt.Fprintf(e.stdout, "service: installed, stopped (%s); start it: %sawbridge start%s\n", where, sudo(spec), systemFlag(spec))
	case install.NotInstalled:
		fmt.Fprintf(e.stdout, "service: not installed as a %s; install it: %sawbridge install%s\n", spec.Kind(), sudo(spec), systemFlag(spec))
	case install.Unknown:
		fmt.Fprintf(e.stdout, "service: installed, state unknown (%s): %s\n", where, r.Error)
	default:
		fmt.Fprintf(e.stdout, "service: %s\n", r.Error)
	}
	if r.SocketAnswers {
		fmt.Fprintf(e.stdout, "socket:  %s answers\n", r.Socket)
	} else {
		fmt.Fprintf(e.stdout, "socket:  %s does not answer\n", r.Socket)
	}
	return code
}

// socketAnswers reports whether a Unix socket connection to path succeeds
// within timeout.
func socketAnswers(path string, timeout time.Duration) bool {
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
