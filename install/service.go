package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kardianos/service"
)

// Service is the part of a kardianos service.Service that Manager uses
// (tests pass a fake); Manager calls it one method at a time.
type Service interface {
	Install() error
	Uninstall() error
	Start() error
	Stop() error
	Restart() error
	Status() (service.Status, error)
}

// ErrNotInstalled is returned by Manager when there is no service.
var ErrNotInstalled = errors.New("awbridge is not installed as a service")

// UnsupportedError refuses a service manager awbridge does not install
// into (a Linux without systemd, a BSD).
type UnsupportedError struct{ Platform string }

func (e *UnsupportedError) Error() string {
	p := e.Platform
	if p == "" {
		p = "none detected"
	}
	return fmt.Sprintf("install: this machine's service manager (%s) is not one awbridge installs into: it knows systemd (Linux), launchd (macOS) and Windows services; run `awbridge serve` from your session's autostart instead", p)
}

// Platform names the service manager kardianos/service detects here, e.g.
// "linux-systemd", "unix-systemv".
func Platform() string { return service.Platform() }

// wantPlatform is the kardianos/service platform awbridge installs into
// on goos.
func wantPlatform(goos string) string {
	switch goos {
	case "darwin":
		return "darwin-launchd"
	case "windows":
		return "windows-service"
	}
	return "linux-systemd"
}

// ServiceConfig is the kardianos/service configuration of s: its name,
// scope and, when s names an executable, the command line and our own
// unit (kardianos writes it as is: it has no template actions) or, on
// Windows, the start type and restart on failure.
func ServiceConfig(s Spec) (*service.Config, error) {
	c := &service.Config{
		Name:        s.serviceName(),
		DisplayName: Name,
		Description: description,
		Option:      service.KeyValue{"UserService": !s.System},
	}
	if s.Executable == "" {
		return c, nil // control only: start, stop, status, uninstall
	}
	unit, err := Render(s)
	if err != nil {
		return nil, err
	}
	c.Executable, c.Arguments = s.Executable, s.Arguments()
	if s.System && s.goos() != "windows" {
		c.UserName = s.User
	}
	switch s.goos() {
	case "darwin":
		c.Option["LaunchdConfig"] = unit
		c.Option["RunAtLoad"], c.Option["KeepAlive"] = true, true
	case "windows":
		c.Option["StartType"] = "automatic"
		c.Option["OnFailure"] = "restart"
		c.Option["OnFailureDelayDuration"] = RestartDelay
		c.Option["OnFailureResetPeriod"] = 60
	default:
		c.Option["SystemdScript"] = unit
	}
	return c, nil
}

// NewService returns the OS service for s (s.GOOS must be this machine's),
// or an *UnsupportedError when this machine's service manager is not the
// one s needs.
func NewService(s Spec) (Service, error) {
	if p := service.Platform(); p != wantPlatform(s.goos()) {
		return nil, &UnsupportedError{Platform: p}
	}
	c, err := ServiceConfig(s)
	if err != nil {
		return nil, err
	}
	svc, err := service.New(noProgram{}, c)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return svc, nil
}

// noProgram is the service.Interface of a service this process only
// controls, never runs.
type noProgram struct{}

func (noProgram) Start(service.Service) error { return nil }
func (noProgram) Stop(service.Service) error  { return nil }

// State is what the service manager says of the service.
type State string

// The states. Unknown: installed, but the service manager did not say
// whether it runs (a failed unit, no user session, ...).
const (
	NotInstalled State = "not installed"
	Stopped      State = "stopped"
	Running      State = "running"
	Unknown      State = "unknown"
)

// Manager installs and controls the service of Spec through Service. Not
// safe for concurrent use (nor is the OS service manager).
type Manager struct {
	Spec    Spec
	Service Service
}

// State reports whether the service is installed and runs; the error,
// with Unknown only, says why the service manager could not tell. A unit
// file on disk counts as installed even when the service manager does not
// list it (a failed enable step), so that uninstall and install clean it up.
func (m *Manager) State() (State, error) {
	st, err := m.Service.Status()
	if err == nil {
		switch st {
		case service.StatusRunning:
			return Running, nil
		case service.StatusStopped:
			return Stopped, nil
		}
	}
	path := m.Spec.UnitPath()
	_, serr := os.Stat(path)
	switch {
	case path != "" && serr != nil:
		return NotInstalled, nil
	case errors.Is(err, service.ErrNotInstalled) && path == "":
		return NotInstalled, nil
	case errors.Is(err, service.ErrNotInstalled):
		return Unknown, fmt.Errorf("%s exists but the service manager does not list it (is the %s session running?)", path, managerName(m.Spec))
	case err == nil:
		return Unknown, errors.New("the service manager reports an unknown state")
	}
	return Unknown, err
}

func managerName(s Spec) string {
	switch s.goos() {
	case "darwin":
		return "launchd"
	case "windows":
		return "Windows service manager"
	}
	if s.System {
		return "systemd"
	}
	return "systemd user"
}

// InstallResult says what Install did.
type InstallResult struct {
	Previous  State // before the install
	Unchanged bool  // the same unit was installed and running: nothing touched
	Restarted bool  // the service ran before the update and runs the new unit
}

// Install installs the service, or updates an existing install:
// kardianos/service refuses to install over an existing unit, so a
// previous install is stopped, removed and installed again, and started
// again if it ran. An install identical to the running one is left alone.
func (m *Manager) Install() (InstallResult, error) {
	var res InstallResult
	if err := m.Spec.Validate(); err != nil {
		return res, err
	}
	prev, _ := m.State() // Unknown counts as installed: replace it
	res.Previous = prev
	if prev == Running && m.sameUnit() {
		res.Unchanged = true
		return res, nil
	}
	if prev == Running {
		if err := m.Service.Stop(); err != nil {
			return res, fmt.Errorf("stopping the running service to update it: %w", err)
		}
	}
	if prev != NotInstalled {
		if err := m.Service.Uninstall(); err != nil {
			return res, fmt.Errorf("removing the previous %s to update it: %w", m.Spec.Kind(), err)
		}
	}
	if err := m.Service.Install(); err != nil {
		return res, fmt.Errorf("installing the %s: %w", m.Spec.Kind(), err)
	}
	if prev == Running {
		if err := m.Service.Start(); err != nil {
			return res, fmt.Errorf("starting the updated service: %w", err)
		}
		res.Restarted = true
	}
	return res, nil
}

// sameUnit reports whether the installed unit file is the one Spec
// renders (false on Windows: no file).
func (m *Manager) sameUnit() bool {
	path := m.Spec.UnitPath()
	if path == "" {
		return false
	}
	want, err := Render(m.Spec)
	if err != nil {
		return false
	}
	got, err := os.ReadFile(path)
	return err == nil && bytes.Equal(got, []byte(want))
}

// Uninstall stops the service if it runs and removes it; ErrNotInstalled
// when there is nothing to remove.
func (m *Manager) Uninstall() error {
	st, _ := m.State()
	switch st {
	case NotInstalled:
		return ErrNotInstalled
	case Running:
		if err := m.Service.Stop(); err != nil {
			return fmt.Errorf("stopping the service: %w", err)
		}
	}
	if err := m.Service.Uninstall(); err != nil {
		return fmt.Errorf("removing the %s: %w", m.Spec.Kind(), err)
	}
	return nil
}

// Start starts the service; started is false when it already ran.
func (m *Manager) Start() (started bool, err error) {
	return m.change(Running, m.Service.Start, "starting")
}

// Stop stops the service; stopped is false when it did not run.
func (m *Manager) Stop() (stopped bool, err error) {
	return m.change(Stopped, m.Service.Stop, "stopping")
}

// change calls do unless the service is not installed or already in state
// to; changed says whether it called it.
func (m *Manager) change(to State, do func() error, doing string) (changed bool, err error) {
	switch st, _ := m.State(); st {
	case NotInstalled:
		return false, ErrNotInstalled
	case to:
		return false, nil
	}
	if err := do(); err != nil {
		return false, fmt.Errorf("%s the service: %w", doing, err)
	}
	return true, nil
}

// Restart stops the service if it runs and starts it.
func (m *Manager) Restart() error {
	st, _ := m.State()
	switch st {
	case NotInstalled:
		return ErrNotInstalled
	case Stopped:
		// launchd cannot restart what is not loaded: just start it.
		if err := m.Service.Start(); err != nil {
			return fmt.Errorf("starting the service: %w", err)
		}
		return nil
	}
	if err := m.Service.Restart(); err != nil {
		return fmt.Errorf("restarting the service: %w", err)
	}
	return nil
}

// configHeader is the content of a config file EnsureConfigFile creates.
const configHeader = `# awbridge settings (TOML). Created by awbridge install: the service runs
# "awbridge serve --config <this file>". Every setting is optional;
# "awbridge config" lists them with their defaults and where each value
# comes from. Restart the service after an edit: awbridge restart
`

// Owner is the person a config file created by root (under sudo) is for.
type Owner struct {
	Name     string
	Home     string
	UID, GID int
}

// LinkError refuses a config path that leaves the person's home folder
// through a symbolic link, or lies outside it: root would create files
// where the person chose and give them to the person.
type LinkError struct{ Path, Home string }

func (e *LinkError) Error() string {
	return fmt.Sprintf("install: not creating the config file %s as root: it is outside %s or reached through a symbolic link leading out of it; create it as yourself first (awbridge config shows the settings; an empty file will do)", e.Path, e.Home)
}

// EnsureConfigFile creates path (an empty, commented config, 0600 in a
// 0700 folder) when it does not exist, so that the service's --config
// names a file; created says whether it did. An existing file is never
// touched.
//
// With an owner (root installing for a person) the file and its folders
// are made inside owner.Home without following a symbolic link out of it
// (os.Root), each given to the person through its open descriptor before
// anything is made inside it; a path outside the home, or leaving it
// through a link, is a *LinkError and nothing is made.
func EnsureConfigFile(path string, owner *Owner) (created bool, err error) {
	if owner != nil {
		return ensureConfigFileFor(path, owner)
	}
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("install: checking the config file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("install: creating the config folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil // created meanwhile: not ours to touch
	}
	if err != nil {
		return false, fmt.Errorf("install: creating the config file: %w", err)
	}
	if err := writeConfig(f, func() { os.Remove(path) }); err != nil {
		return false, err
	}
	return true, nil
}

// ensureConfigFileFor is EnsureConfigFile for owner, as root.
func ensureConfigFileFor(path string, owner *Owner) (bool, error) {
	rel, err := filepath.Rel(owner.Home, path)
	if err != nil || !filepath.IsAbs(owner.Home) || !filepath.IsLocal(rel) {
		return false, &LinkError{Path: path, Home: owner.Home}
	}
	root, err := os.OpenRoot(owner.Home)
	if err != nil {
		return false, fmt.Errorf("install: opening the home folder of %s: %w", owner.Name, err)
	}
	defer root.Close()
	if _, err := root.Stat(rel); err == nil {
		return false, nil
	} else if escapes(err) {
		return false, &LinkError{Path: path, Home: owner.Home}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("install: checking the config file: %w", err)
	}
	// Each missing folder, from the home down: made, opened, checked to be
	// a folder (not something swapped in meanwhile), given to the person.
	var parts []string
	if d := filepath.Dir(rel); d != "." {
		parts = strings.Split(d, string(filepath.Separator))
	}
	for i := range parts {
		dir := filepath.Join(parts[:i+1]...)
		err := root.Mkdir(dir, 0o700)
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case escapes(err):
			return false, &LinkError{Path: path, Home: owner.Home}
		case err != nil:
			return false, fmt.Errorf("install: creating the config folder: %w", err)
		}
		if err := chownNewDir(root, dir, owner); err != nil {
			return false, err
		}
	}
	// O_EXCL: never an existing file or a link; the new file is given away
	// through its descriptor.
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil // created meanwhile: not ours to touch
	case escapes(err):
		return false, &LinkError{Path: path, Home: owner.Home}
	case err != nil:
		return false, fmt.Errorf("install: creating the config file: %w", err)
	}
	if err := f.Chown(owner.UID, owner.GID); err != nil {
		f.Close()
		root.Remove(rel)
		return false, fmt.Errorf("install: giving %s to %s: %w", path, owner.Name, err)
	}
	if err := writeConfig(f, func() { root.Remove(rel) }); err != nil {
		return false, err
	}
	return true, nil
}

// escapes reports an error of os.Root refusing a path that leaves it
// (through "..", an absolute or an outward symbolic link); os.Root does
// not export it.
func escapes(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) &&
		strings.Contains(err.Error(), "escapes")
}

// chownNewDir gives the folder name (inside root), just made, to owner
// through its descriptor, after checking that it is still an empty folder:
// not one swapped in meanwhile, whose contents would change hands.
func chownNewDir(root *os.Root, name string, owner *Owner) error {
	f, err := root.Open(name)
	if err != nil {
		return fmt.Errorf("install: opening %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		_, err = f.Readdirnames(1)
	}
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("install: %s changed while it was being created; try again", filepath.Join(owner.Home, name))
	}
	if err := f.Chown(owner.UID, owner.GID); err != nil {
		return fmt.Errorf("install: giving %s to %s: %w", filepath.Join(owner.Home, name), owner.Name, err)
	}
	return nil
}

// writeConfig writes configHeader to f and closes it; on failure it calls
// remove and reports the error.
func writeConfig(f *os.File, remove func()) error {
	_, werr := f.WriteString(configHeader)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		remove()
		return fmt.Errorf("install: writing the config file: %w", werr)
	}
	return nil
}

// Hint returns advice for an error of Manager or NewService on this spec,
// or "" when there is none: root for a system-wide install, a missing
// systemd user session.
func Hint(s Spec, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, fs.ErrPermission) || strings.Contains(strings.ToLower(err.Error()), "access is denied"):
		switch {
		case s.goos() == "windows":
			return "installing a Windows service needs an administrator prompt"
		case s.System:
			return "a system-wide service needs root: sudo awbridge ... --system"
		}
		return "check the permissions of " + filepath.Dir(s.UnitPath())
	case s.goos() != "darwin" && s.goos() != "windows" && !s.System && strings.Contains(err.Error(), "exit status"):
		return "systemctl --user failed: is a systemd user session running? (systemctl --user status; over ssh: loginctl enable-linger $USER)"
	}
	return ""
}
