package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/install"
	"github.com/kardianos/service"
)

// fakeManager is a service manager in memory that behaves like
// kardianos/service's systemd one: Install writes the unit it was given
// (SystemdScript) and refuses to overwrite one; Status says
// ErrNotInstalled when there is none.
type fakeManager struct {
	unitPath, unit     string
	installed, running bool
	calls              []string
	specs              []install.Spec // every spec newService was given
}

var _ service.Service = (*fakeManager)(nil)

func (f *fakeManager) Install() error {
	f.calls = append(f.calls, "install")
	if _, err := os.Stat(f.unitPath); err == nil {
		return fmt.Errorf("Init already exists: %s", f.unitPath)
	}
	if err := os.MkdirAll(filepath.Dir(f.unitPath), 0o755); err != nil {
		return err
	}
	f.installed = true
	return os.WriteFile(f.unitPath, []byte(f.unit), 0o644)
}

func (f *fakeManager) Uninstall() error {
	f.calls = append(f.calls, "uninstall")
	f.installed = false
	return os.Remove(f.unitPath)
}

func (f *fakeManager) Start() error {
	f.calls = append(f.calls, "start")
	f.running = true
	return nil
}

func (f *fakeManager) Stop() error {
	f.calls = append(f.calls, "stop")
	f.running = false
	return nil
}

func (f *fakeManager) Restart() error {
	f.calls = append(f.calls, "restart")
	f.running = true
	return nil
}

func (f *fakeManager) Status() (service.Status, error) {
	switch {
	case !f.installed:
		return service.StatusUnknown, service.ErrNotInstalled
	case f.running:
		return service.StatusRunning, nil
	}
	return service.StatusStopped, nil
}

func (f *fakeManager) Run() error                                  { return nil }
func (f *fakeManager) Logger(chan<- error) (service.Logger, error) { return service.ConsoleLogger, nil }
func (f *fakeManager) SystemLogger(chan<- error) (service.Logger, error) {
	return service.ConsoleLogger, nil
}
func (f *fakeManager) String() string   { return "awbridge" }
func (f *fakeManager) Platform() string { return "fake-systemd" }

// serviceWorld is a home folder, an environment and fake deps for the
// service commands.
type serviceWorld struct {
	home string
	vars map[string]string
	fake *fakeManager
	deps serviceDeps
}

func newServiceWorld(t *testing.T) *serviceWorld {
	t.Helper()
	home := t.TempDir()
	w := &serviceWorld{
		home: home,
		vars: map[string]string{
			"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"),
			"XDG_STATE_HOME": filepath.Join(home, "state"),
			// Short: Unix socket paths are limited to ~100 bytes.
			"AWBRIDGE_SOCKET": filepath.Join(shortDir(t), "s.sock"),
		},
		fake: &fakeManager{unitPath: filepath.Join(home, ".config", "systemd", "user", "awbridge.service")},
	}
	w.deps = serviceDeps{
		goos:       "linux",
		executable: func() (string, error) { return "/opt/awbridge/bin/awbridge", nil },
		newService: func(s install.Spec) (install.Service, error) {
			w.fake.specs = append(w.fake.specs, s)
			c, err := install.ServiceConfig(s)
			if err != nil {
				return nil, err
			}
			if u, ok := c.Option["SystemdScript"].(string); ok {
				w.fake.unit = u
			}
			return w.fake, nil
		},
		platform:    func() string { return "fake-systemd" },
		uid:         1000,
		dialTimeout: 5 * time.Second,
		currentUser: func() (*user.User, error) {
			return &user.User{Username: "tester", Uid: "1000", Gid: "1000", HomeDir: home}, nil
		},
	}
	return w
}

// run runs one service command and returns its exit code, stdout and
// stderr.
func (w *serviceWorld) run(t *testing.T, f func(context.Context, *env, []string, serviceDeps) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, version: "test",
		lookup: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }}
	code := f(context.Background(), e, args, w.deps)
	return code, out.String(), errb.String()
}

func TestInstallTwiceUpdatesTheUnit(t *testing.T) {
	w := newServiceWorld(t)
	cfg := filepath.Join(w.home, "config", "awbridge", "config.toml")

	code, out, errs := w.run(t, runInstall)
	if code != exitOK {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"created the config file " + cfg,
		"installed the systemd user unit " + w.fake.unitPath,
		"runs: /opt/awbridge/bin/awbridge serve --config " + cfg,
		"start it now: awbridge start",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("install output lacks %q:\n%s", want, out)
		}
	}
	unit, _ := os.ReadFile(w.fake.unitPath)
	if !strings.Contains(string(unit), "ExecStart=/opt/awbridge/bin/awbridge serve --config "+cfg+"\n") ||
		!strings.Contains(string(unit), "WantedBy=default.target") {
		t.Fatalf("installed unit:\n%s", unit)
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Fatalf("the config file was not created: %v", err)
	}

	// Running, a new binary: the unit is rewritten and the service restarted.
	w.fake.running = true
	w.deps.executable = func() (string, error) { return "/opt/awbridge-2/bin/awbridge", nil }
	w.fake.calls = nil
	code, out, errs = w.run(t, runInstall)
	if code != exitOK || !strings.Contains(out, "updated the systemd user unit "+w.fake.unitPath+" and restarted awbridge") {
		t.Fatalf("second install: %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "created the config file") {
		t.Fatalf("the config file was created twice:\n%s", out)
	}
	if unit, _ := os.ReadFile(w.fake.unitPath); !strings.Contains(string(unit), "/opt/awbridge-2/bin/awbridge serve") {
		t.Fatalf("the unit was not updated:\n%s", unit)
	}
	if got := strings.Join(w.fake.calls, ","); got != "stop,uninstall,install,start" {
		t.Fatalf("calls %s", got)
	}

	// The same again: nothing to do.
	w.fake.calls = nil
	code, out, _ = w.run(t, runInstall)
	if code != exitOK || !strings.Contains(out, "already installed") || len(w.fake.calls) != 0 {
		t.Fatalf("third install: %d %v\n%s", code, w.fake.calls, out)
	}
}

func TestInstallCarriesAnExplicitConfig(t *testing.T) {
	w := newServiceWorld(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "my.toml")
	if err := os.WriteFile(cfg, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.vars["AWBRIDGE_AW_URL"] = "http://127.0.0.1:5666"
	code, out, errs := w.run(t, runInstall, "--config", cfg)
	if code != exitOK || strings.Contains(out, "created the config file") {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	if unit, _ := os.ReadFile(w.fake.unitPath); !strings.Contains(string(unit), "serve --config "+cfg+"\n") {
		t.Fatalf("unit:\n%s", unit)
	}
	// A setting taken from the environment does not reach the service: say so.
	if !strings.Contains(errs, "AWBRIDGE_AW_URL set here but the service does not see it: it reads only "+cfg) {
		t.Fatalf("no note about the environment:\n%s", errs)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "# mine\n" {
		t.Fatalf("the config file was touched: %q", b)
	}
}

func TestInstallRefusesAGoRunBinary(t *testing.T) {
	w := newServiceWorld(t)
	w.deps.executable = func() (string, error) { return "/tmp/go-build3141/b001/exe/awbridge", nil }
	code, out, errs := w.run(t, runInstall)
	if code != exitUsage || !strings.Contains(errs, "temporary `go run` binary") || !strings.Contains(errs, "go build") {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	if len(w.fake.calls) != 0 || len(w.fake.specs) != 0 {
		t.Fatalf("the service manager was reached: %v", w.fake.calls)
	}
	if _, err := os.Stat(filepath.Join(w.home, "config")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install wrote files: %v", err)
	}
}

func TestInstallDryRunRendersAndChangesNothing(t *testing.T) {
	w := newServiceWorld(t)
	w.deps.platform = func() string { return "unix-systemv" } // whatever init runs
	w.deps.newService = func(install.Spec) (install.Service, error) {
		t.Fatal("a dry run reached the service manager")
		return nil, nil
	}
	code, out, errs := w.run(t, runInstall, "--dry-run")
	if code != exitOK {
		t.Fatalf("dry run: %d\n%s", code, errs)
	}
	cfg := filepath.Join(w.home, "config", "awbridge", "config.toml")
	want, err := install.Render(install.Spec{Executable: "/opt/awbridge/bin/awbridge", ConfigPath: cfg, GOOS: "linux", Home: w.home})
	if err != nil {
		t.Fatal(err)
	}
	if out != want {
		t.Fatalf("stdout is not exactly the unit:\n%s", out)
	}
	for _, s := range []string{"dry run, nothing changed", "systemd user unit", w.fake.unitPath, "unix-systemv", "it would create the config file " + cfg} {
		if !strings.Contains(errs, s) {
			t.Fatalf("stderr lacks %q:\n%s", s, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(w.home, "config")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote files: %v", err)
	}

	// System-wide; and a go run binary still renders, with a note.
	w.deps.executable = func() (string, error) { return "/tmp/go-build1/b001/exe/awbridge", nil }
	code, out, errs = w.run(t, runInstall, "--dry-run", "--system")
	if code != exitOK || !strings.Contains(out, "WantedBy=multi-user.target") || !strings.Contains(errs, "/etc/systemd/system/awbridge.service") ||
		!strings.Contains(errs, "a real install would refuse") {
		t.Fatalf("system dry run: %d\n%s%s", code, out, errs)
	}
}

func TestServiceUninstall(t *testing.T) {
	w := newServiceWorld(t)
	code, out, errs := w.run(t, runUninstall)
	if code != exitOK || !strings.Contains(out, "awbridge is not installed as a systemd user unit: nothing to remove") {
		t.Fatalf("uninstall when not installed: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := w.run(t, runInstall); code != exitOK {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	w.fake.running = true
	code, out, errs = w.run(t, runUninstall)
	if code != exitOK || !strings.Contains(out, "stopped and removed the systemd user unit") || w.fake.running {
		t.Fatalf("uninstall: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(w.fake.unitPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unit is still there: %v", err)
	}
}

func TestServiceStartStopRestart(t *testing.T) {
	w := newServiceWorld(t)
	for _, c := range []struct {
		name string
		f    func(context.Context, *env, []string, serviceDeps) int
	}{{"start", runStart}, {"stop", runStop}, {"restart", runRestart}} {
		code, _, errs := w.run(t, c.f)
		if code != exitDegraded || !strings.Contains(errs, "awbridge "+c.name+": awbridge is not installed as a systemd user unit (install it: awbridge install)") {
			t.Fatalf("%s when not installed: %d %s", c.name, code, errs)
		}
	}
	if code, out, errs := w.run(t, runInstall); code != exitOK {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	steps := []struct {
		f       func(context.Context, *env, []string, serviceDeps) int
		want    string
		running bool
	}{
		{runStop, "awbridge was not running", false},
		{runStart, "started awbridge (systemd user unit)", true},
		{runStart, "awbridge already runs", true},
		{runRestart, "restarted awbridge", true},
		{runStop, "stopped awbridge (systemd user unit); it starts again at the next login", false},
	}
	for i, s := range steps {
		code, out, errs := w.run(t, s.f)
		if code != exitOK || !strings.Contains(out, s.want) || w.fake.running != s.running {
			t.Fatalf("step %d: %d running=%v\n%s%s", i, code, w.fake.running, out, errs)
		}
	}
	// --system reaches the system-wide service.
	w.run(t, runStart, "--system")
	if last := w.fake.specs[len(w.fake.specs)-1]; !last.System {
		t.Fatal("--system was not passed on")
	}
}

func TestServiceStatus(t *testing.T) {
	w := newServiceWorld(t)
	sock := w.vars["AWBRIDGE_SOCKET"]

	code, out, _ := w.run(t, runStatus)
	if code != exitDegraded || out != "service: not installed as a systemd user unit; install it: awbridge install\nsocket:  "+sock+" does not answer\n" {
		t.Fatalf("not installed: %d\n%s", code, out)
	}
	if code, out, errs := w.run(t, runInstall); code != exitOK {
		t.Fatalf("install: %d\n%s%s", code, out, errs)
	}
	code, out, _ = w.run(t, runStatus)
	if code != exitDegraded || !strings.HasPrefix(out, "service: installed, stopped (systemd user unit "+w.fake.unitPath+"); start it: awbridge start\n") {
		t.Fatalf("stopped: %d\n%s", code, out)
	}

	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	w.fake.running = true
	code, out, _ = w.run(t, runStatus)
	if code != exitOK || out != "service: installed, running (systemd user unit "+w.fake.unitPath+")\nsocket:  "+sock+" answers\n" {
		t.Fatalf("running: %d\n%s", code, out)
	}

	code, out, _ = w.run(t, runStatus, "--json")
	var r statusReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitOK {
		t.Fatalf("--json: %d %v\n%s", code, err, out)
	}
	if !r.Installed || r.State != "running" || !r.SocketAnswers || r.Socket != sock || r.UnitPath != w.fake.unitPath || r.Manager != "fake-systemd" {
		t.Fatalf("--json: %+v", r)
	}

	// On a machine awbridge does not install into, status still checks the socket.
	w.deps.newService = func(install.Spec) (install.Service, error) {
		return nil, &install.UnsupportedError{Platform: "unix-systemv"}
	}
	code, out, _ = w.run(t, runStatus)
	if code != exitOK || !strings.Contains(out, "service: this machine's service manager (unix-systemv) is not one awbridge installs into") ||
		!strings.Contains(out, sock+" answers") {
		t.Fatalf("unsupported: %d\n%s", code, out)
	}
}

// TestInstallDryRunOfTheRealBinary runs the built binary: whatever init
// this machine runs, --dry-run prints the systemd user unit (on Linux) for
// this binary and the default config path, and exits 0.
func TestInstallDryRunOfTheRealBinary(t *testing.T) {
	env := baseEnv(t, "http://127.0.0.1:1")
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	code, out, errs := runBin(t, env, "install", "--dry-run")
	if code != 0 {
		t.Fatalf("install --dry-run: exit %d\n%s", code, errs)
	}
	exe, err := filepath.EvalSymlinks(binPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "config", "awbridge", "config.toml")
	if want := "ExecStart=" + exe + " serve --config " + cfg + "\n"; !strings.Contains(out, want) {
		t.Fatalf("stdout lacks %q:\n%s", want, out)
	}
	if !strings.Contains(errs, "dry run, nothing changed") {
		t.Fatalf("stderr:\n%s", errs)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Fatalf("a dry run wrote into the home folder: %v", entries)
	}

	// status of the real binary: the socket does not answer, exit 1.
	sock := filepath.Join(shortDir(t), "s.sock")
	if code, out, _ := runBin(t, append(env, "AWBRIDGE_SOCKET="+sock), "status"); code != exitDegraded || !strings.Contains(out, "socket:  "+sock+" does not answer") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}

// TestInstallSystemRunsAsTheInvokingUser: a system-wide unit runs as the
// person installing it (under sudo, SUDO_USER, with that person's config
// file), never as root; root without sudo is refused with the reason.
func TestInstallSystemRunsAsTheInvokingUser(t *testing.T) {
	users := map[string]*user.User{
		"alice": {Username: "alice", Uid: "1001", Gid: "1001", HomeDir: "/home/alice"},
		"bob":   {Username: "bob", Uid: "1000", Gid: "1000", HomeDir: "/home/bob"},
		"root":  {Username: "root", Uid: "0", Gid: "0", HomeDir: "/root"},
	}
	tests := []struct {
		name     string
		uid      int
		sudoUser string
		code     int
	}{
		{"as-bob", 1000, "", exitOK},
		{"sudo-from-alice", 0, "alice", exitOK},
		{"root-without-sudo", 0, "", exitUsage},
		{"sudo-from-root", 0, "root", exitUsage},
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, tt := range tests {
			t.Run(goos+"-"+tt.name, func(t *testing.T) {
				w := newServiceWorld(t)
				w.deps.goos = goos
				w.deps.uid = tt.uid
				w.deps.lookupUser = func(name string) (*user.User, error) {
					if u, ok := users[name]; ok {
						return u, nil
					}
					return nil, user.UnknownUserError(name)
				}
				w.deps.currentUser = func() (*user.User, error) {
					if tt.uid == 0 {
						return users["root"], nil
					}
					return users["bob"], nil
				}
				// Under sudo, HOME is root's: the service must still get
				// alice's config file, not root's.
				if tt.uid == 0 {
					w.vars["HOME"] = "/root"
					delete(w.vars, "XDG_CONFIG_HOME")
				} else {
					w.vars["HOME"] = "/home/bob"
					delete(w.vars, "XDG_CONFIG_HOME")
				}
				if tt.sudoUser != "" {
					w.vars["SUDO_USER"] = tt.sudoUser
				}
				code, out, errs := w.run(t, runInstall, "--dry-run", "--system")
				if code != tt.code {
					t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
				}
				checkGolden(t, filepath.Join("testdata", "terminal", "install-system-"+goos+"-"+tt.name+".golden"), "stdout:\n"+out+"stderr:\n"+errs)
				if code == exitOK && strings.Contains(out, "/root/") {
					t.Fatalf("the unit reads root's files:\n%s", out)
				}
			})
		}
	}
}
