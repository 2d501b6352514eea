package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kardianos/service"
)

// fakeService is a service manager in memory that behaves like
// kardianos/service's systemd and launchd services: Install writes the
// unit it was configured with and refuses to overwrite one, Status says
// ErrNotInstalled when there is none.
type fakeService struct {
	unitPath, unit     string // where Install writes what
	installed, running bool
	statusErr          error            // forced Status error
	fail               map[string]error // method -> error
	calls              []string
}

var _ service.Service = (*fakeService)(nil)

func newFake(t *testing.T, s Spec) *fakeService {
	t.Helper()
	c, err := ServiceConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	unit, _ := c.Option["SystemdScript"].(string)
	if u, ok := c.Option["LaunchdConfig"].(string); ok {
		unit = u
	}
	return &fakeService{unitPath: s.UnitPath(), unit: unit}
}

func (f *fakeService) call(name string) error {
	f.calls = append(f.calls, name)
	return f.fail[name]
}

func (f *fakeService) Install() error {
	if err := f.call("install"); err != nil {
		return err
	}
	if _, err := os.Stat(f.unitPath); err == nil {
		return fmt.Errorf("Init already exists: %s", f.unitPath)
	}
	if err := os.MkdirAll(filepath.Dir(f.unitPath), 0o755); err != nil {
		return err
	}
	f.installed = true
	return os.WriteFile(f.unitPath, []byte(f.unit), 0o644)
}

func (f *fakeService) Uninstall() error {
	if err := f.call("uninstall"); err != nil {
		return err
	}
	f.installed = false
	return os.Remove(f.unitPath)
}

func (f *fakeService) Start() error {
	if err := f.call("start"); err != nil {
		return err
	}
	if !f.installed {
		return errors.New("exit status 5")
	}
	f.running = true
	return nil
}

func (f *fakeService) Stop() error {
	if err := f.call("stop"); err != nil {
		return err
	}
	f.running = false
	return nil
}

func (f *fakeService) Restart() error {
	if err := f.call("restart"); err != nil {
		return err
	}
	f.running = f.installed
	return nil
}

func (f *fakeService) Status() (service.Status, error) {
	switch {
	case f.statusErr != nil:
		return service.StatusUnknown, f.statusErr
	case !f.installed:
		return service.StatusUnknown, service.ErrNotInstalled
	case f.running:
		return service.StatusRunning, nil
	}
	return service.StatusStopped, nil
}

func (f *fakeService) Run() error                                  { return nil }
func (f *fakeService) Logger(chan<- error) (service.Logger, error) { return service.ConsoleLogger, nil }
func (f *fakeService) SystemLogger(chan<- error) (service.Logger, error) {
	return service.ConsoleLogger, nil
}
func (f *fakeService) String() string   { return Name }
func (f *fakeService) Platform() string { return "fake" }

func tempSpec(t *testing.T, goos string) Spec {
	home := t.TempDir()
	return Spec{Executable: "/opt/awbridge/awbridge", ConfigPath: home + "/.config/awbridge/config.toml", GOOS: goos, Home: home}
}

func TestInstallTwiceUpdates(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			spec := tempSpec(t, goos)
			f := newFake(t, spec)
			m := &Manager{Spec: spec, Service: f}

			res, err := m.Install()
			if err != nil || res.Previous != NotInstalled || res.Restarted || res.Unchanged {
				t.Fatalf("first install: %+v %v", res, err)
			}
			want, _ := Render(spec)
			if b, _ := os.ReadFile(spec.UnitPath()); string(b) != want {
				t.Fatalf("the installed unit is not ours:\n%s", b)
			}

			// Installed, stopped, a new binary: replaced, not started.
			spec.Executable = "/opt/awbridge-2/awbridge"
			m.Spec = spec
			f.unit, _ = Render(spec)
			res, err = m.Install()
			if err != nil || res.Previous != Stopped || res.Restarted {
				t.Fatalf("second install: %+v %v (calls %v)", res, err, f.calls)
			}
			if b, _ := os.ReadFile(spec.UnitPath()); !strings.Contains(string(b), "/opt/awbridge-2/awbridge") {
				t.Fatalf("the unit was not updated:\n%s", b)
			}
			if f.running {
				t.Fatal("an update started a stopped service")
			}

			// Running, unchanged: nothing touched.
			f.running = true
			f.calls = nil
			res, err = m.Install()
			if err != nil || !res.Unchanged || len(f.calls) != 0 {
				t.Fatalf("unchanged install: %+v %v calls %v", res, err, f.calls)
			}

			// Running, changed: stopped, replaced, started again.
			spec.ConfigPath = "/etc/awbridge.toml"
			m.Spec = spec
			f.unit, _ = Render(spec)
			res, err = m.Install()
			if err != nil || !res.Restarted || res.Previous != Running {
				t.Fatalf("running install: %+v %v", res, err)
			}
			if !slices.Equal(f.calls, []string{"stop", "uninstall", "install", "start"}) || !f.running {
				t.Fatalf("calls %v running %v", f.calls, f.running)
			}
		})
	}
}

func TestInstallRefusesGoRunBinaries(t *testing.T) {
	spec := tempSpec(t, "linux")
	spec.Executable = "/tmp/go-build4242/b001/exe/awbridge"
	f := newFake(t, spec)
	_, err := (&Manager{Spec: spec, Service: f}).Install()
	var gr *GoRunError
	if !errors.As(err, &gr) || !strings.Contains(err.Error(), "go build") {
		t.Fatalf("err = %v", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("the service manager was called: %v", f.calls)
	}
}

func TestInstallErrorKeepsTheChain(t *testing.T) {
	spec := tempSpec(t, "linux")
	spec.System, spec.User = true, "alice"
	f := newFake(t, spec)
	f.unitPath = filepath.Join(t.TempDir(), "awbridge.service")
	f.fail = map[string]error{"install": &os.PathError{Op: "open", Path: "/etc/systemd/system/awbridge.service", Err: os.ErrPermission}}
	_, err := (&Manager{Spec: spec, Service: f}).Install()
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("err = %v", err)
	}
	if h := Hint(spec, err); !strings.Contains(h, "sudo") {
		t.Fatalf("hint = %q", h)
	}
	if h := Hint(tempSpec(t, "linux"), fmt.Errorf("installing: %w", errors.New("exit status 1"))); !strings.Contains(h, "systemctl --user") {
		t.Fatalf("user hint = %q", h)
	}
}

func TestStates(t *testing.T) {
	spec := tempSpec(t, "linux")
	tests := []struct {
		name    string
		setup   func(f *fakeService)
		want    State
		wantErr string
	}{
		{"not installed", func(*fakeService) {}, NotInstalled, ""},
		{"stopped", func(f *fakeService) { f.installed = true }, Stopped, ""},
		{"running", func(f *fakeService) { f.installed, f.running = true, true }, Running, ""},
		{"failed unit", func(f *fakeService) {
			f.installed, f.statusErr = true, errors.New("service in failed state")
			writeUnit(t, f)
		}, Unknown, "failed state"},
		{"unit on disk, manager does not list it", func(f *fakeService) { writeUnit(t, f) }, Unknown, "does not list it"},
		{"status error, no unit", func(f *fakeService) { f.statusErr = errors.New("exec: systemctl not found") }, NotInstalled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, spec)
			os.Remove(spec.UnitPath())
			tt.setup(f)
			st, err := (&Manager{Spec: spec, Service: f}).State()
			if st != tt.want || (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("State = %q, %v; want %q, %q", st, err, tt.want, tt.wantErr)
			}
		})
	}
}

func writeUnit(t *testing.T, f *fakeService) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.unitPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.unitPath, []byte(f.unit), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestControl(t *testing.T) {
	spec := tempSpec(t, "linux")
	f := newFake(t, spec)
	m := &Manager{Spec: spec, Service: f}

	if err := m.Uninstall(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("uninstall when not installed: %v", err)
	}
	if _, err := m.Start(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("start when not installed: %v", err)
	}
	if _, err := m.Stop(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("stop when not installed: %v", err)
	}
	if err := m.Restart(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("restart when not installed: %v", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("the service manager was asked to act: %v", f.calls)
	}
	if _, err := m.Install(); err != nil {
		t.Fatal(err)
	}
	if stopped, err := m.Stop(); err != nil || stopped {
		t.Fatalf("stop when stopped: %v %v", stopped, err)
	}
	if err := m.Restart(); err != nil || !f.running {
		t.Fatalf("restart when stopped: %v running %v", err, f.running)
	}
	if started, err := m.Start(); err != nil || started {
		t.Fatalf("start when running: %v %v", started, err)
	}
	if stopped, err := m.Stop(); err != nil || !stopped || f.running {
		t.Fatalf("stop: %v %v", stopped, err)
	}
	if started, err := m.Start(); err != nil || !started || !f.running {
		t.Fatalf("start: %v %v", started, err)
	}
	f.calls = nil
	if err := m.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"stop", "uninstall"}) || f.running {
		t.Fatalf("uninstall calls %v running %v", f.calls, f.running)
	}
	if _, err := os.Stat(spec.UnitPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unit is still there: %v", err)
	}
	f.fail = map[string]error{"start": errors.New("exit status 1")}
	if _, err := m.Install(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(); err == nil || !strings.Contains(err.Error(), "starting the service: exit status 1") {
		t.Fatalf("a failed start: %v", err)
	}
}

// TestKardianosWritesOurUnitAsIs drives kardianos/service's real systemd
// installer (whatever init this machine runs) with HOME in a temporary
// folder and no systemctl on PATH: it writes the unit file, then fails to
// run systemctl. The file must be exactly our rendered unit (kardianos
// parses it as a template; ours has no action left).
func TestKardianosWritesOurUnitAsIs(t *testing.T) {
	var systemd service.System
	for _, s := range service.AvailableSystems() {
		if s.String() == "linux-systemd" {
			systemd = s
		}
	}
	if systemd == nil {
		t.Skip("kardianos/service has no systemd installer on this OS")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PATH", t.TempDir()) // no systemctl: nothing is enabled anywhere
	spec := Spec{Executable: "/opt/a b/awbridge", ConfigPath: "/etc/awbridge 100%/c.toml", GOOS: "linux", Home: home}
	c, err := ServiceConfig(spec)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := systemd.New(noProgram{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Install(); err == nil {
		t.Fatal("Install succeeded without systemctl")
	}
	got, err := os.ReadFile(spec.UnitPath())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Render(spec)
	if string(got) != want {
		t.Fatalf("kardianos wrote:\n%s\nwant:\n%s", got, want)
	}
}
