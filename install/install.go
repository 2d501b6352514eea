// Package install owns awbridge as an OS service: the unit files it writes
// (our own systemd units and launchd plists, byte for byte what --dry-run
// prints), the kardianos/service wrapper that installs and controls them,
// and the install/uninstall/start/stop/status logic on top (Manager).
//
// Per-user by default: a systemd user unit, a launchd agent; a Windows
// service (Windows has no per-user services). System-wide with
// Spec.System: a systemd system unit, a launchd daemon.
package install

import (
	"encoding/xml"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/awbridge/awbridge/config"
)

// Names of the installed service.
const (
	Name         = "awbridge"           // the systemd unit's base name and the Windows service's name
	LaunchdLabel = "io.github.awbridge" // the launchd job's label and plist base name
	RestartDelay = "2s"                 // before the service manager restarts a failed service
	description  = "awbridge: what the person at this desktop is doing now, for AI assistants"
	docURL       = "https://github.com/awbridge/awbridge"
)

// Spec is what an install writes: the command line the service manager
// runs (Executable serve --config ConfigPath), per-user or system-wide, and
// the OS conventions. A Spec is a plain value, safe to share.
type Spec struct {
	Executable string // absolute
	ConfigPath string // absolute, passed as --config
	System     bool   // system-wide instead of per-user
	// GOOS selects the conventions ("": runtime.GOOS); every OS but darwin
	// and windows gets systemd units.
	GOOS string
	Home string // where per-user units and the launchd agent's log live
	// User is the account a system-wide service runs as on Linux and macOS:
	// the person whose ActivityWatch and config it reads, never root.
	User string
	// Socket is set as AWBRIDGE_SOCKET in a system-wide service's
	// environment: it has no login session, so no XDG_RUNTIME_DIR, and
	// clients must find it; "" sets nothing.
	Socket string
	// Packaged is the systemd user unit a Linux package installs for every
	// person (PackageSpec): no Home, no ConfigPath (no --config: each
	// person's service reads their own default config file).
	Packaged bool
}

// PackagedExecutable is where the Linux packages (.deb, .rpm) put the binary.
const PackagedExecutable = "/usr/bin/awbridge"

// PackageSpec is the unit the Linux packages carry in
// /usr/lib/systemd/user/: the same unit `awbridge install` writes for one
// person, for the packaged binary and without --config. The package
// enables and starts nothing; each person runs
// `systemctl --user enable --now awbridge`.
func PackageSpec() Spec {
	return Spec{Executable: PackagedExecutable, GOOS: "linux", Packaged: true}
}

func (s Spec) goos() string {
	if s.GOOS == "" {
		return runtime.GOOS
	}
	return s.GOOS
}

// serviceName is the name the service manager knows the service by.
func (s Spec) serviceName() string {
	if s.goos() == "darwin" {
		return LaunchdLabel
	}
	return Name
}

// Kind names what is installed ("systemd user unit", "launchd daemon"...).
func (s Spec) Kind() string {
	switch s.goos() {
	case "darwin":
		if s.System {
			return "launchd daemon"
		}
		return "launchd agent"
	case "windows":
		return "Windows service"
	}
	if s.System {
		return "systemd system unit"
	}
	return "systemd user unit"
}

// UnitPath is the file the install writes, where kardianos/service writes
// it; "" on Windows (the service lives in the registry).
func (s Spec) UnitPath() string {
	switch s.goos() {
	case "windows":
		return ""
	case "darwin":
		if s.System {
			return "/Library/LaunchDaemons/" + LaunchdLabel + ".plist"
		}
		return joinSlash(s.Home, "Library", "LaunchAgents", LaunchdLabel+".plist")
	}
	switch {
	case s.System:
		return "/etc/systemd/system/" + Name + ".service"
	case s.Packaged:
		return "/usr/lib/systemd/user/" + Name + ".service"
	}
	return joinSlash(s.Home, ".config", "systemd", "user", Name+".service")
}

// LogPath is where the service's stderr goes on macOS; "" elsewhere (the
// journal, the event log).
func (s Spec) LogPath() string {
	if s.goos() != "darwin" {
		return ""
	}
	if s.System {
		return "/Library/Logs/awbridge.log"
	}
	return joinSlash(s.Home, "Library", "Logs", "awbridge.log")
}

// Arguments are the service's arguments after the executable (no
// --config for a packaged unit).
func (s Spec) Arguments() []string {
	if s.Packaged {
		return []string{"serve"}
	}
	return []string{"serve", "--config", s.ConfigPath}
}

func joinSlash(home string, elem ...string) string {
	return strings.TrimRight(home, "/") + "/" + strings.Join(elem, "/")
}

// GoRunError refuses a binary built by `go run`: it lives in a temporary
// folder that is deleted when go run exits, so the service would not start.
type GoRunError struct{ Path string }

func (e *GoRunError) Error() string {
	return fmt.Sprintf("install: %s is a temporary `go run` binary, deleted when go run exits; build awbridge (make build, or go build -o ~/bin/awbridge ./cmd/awbridge) and install that binary", e.Path)
}

// check reports what makes s impossible to render: a relative path, a
// control character (or U+FFFE, U+FFFF: not XML), invalid UTF-8, or "{{"
// (kardianos/service parses the unit we hand it as a template).
func (s Spec) check() error {
	if s.Packaged {
		// Only the Linux packages' unit: a systemd user unit for everyone.
		if s.goos() == "darwin" || s.goos() == "windows" || s.System || s.ConfigPath != "" || s.Home != "" || s.User != "" || s.Socket != "" {
			return errors.New("install: a packaged unit is a Linux systemd user unit with only an executable")
		}
	}
	for _, p := range []struct{ what, v string }{{"executable", s.Executable}, {"config file", s.ConfigPath}, {"socket", s.Socket}} {
		switch {
		case p.what == "socket" && p.v == "", p.what == "config file" && s.Packaged:
		case !config.IsAbs(s.goos(), p.v):
			return fmt.Errorf("install: the %s %q is not an absolute path", p.what, p.v)
		case !utf8.ValidString(p.v):
			return fmt.Errorf("install: the %s path %q is not valid UTF-8", p.what, p.v)
		case strings.ContainsFunc(p.v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0xfffe || r == 0xffff }):
			return fmt.Errorf("install: the %s path %q holds a control character", p.what, p.v)
		case strings.Contains(p.v, "{{"):
			return fmt.Errorf("install: the %s path %q holds \"{{\", which service units cannot carry", p.what, p.v)
		}
	}
	if s.goos() != "windows" && s.Home == "" && !s.System && !s.Packaged {
		return errors.New("install: the home folder is unknown (HOME is not set)")
	}
	if s.System {
		if s.goos() == "windows" {
			// Every Windows service is system-wide already; a second,
			// "more system" flavour would only differ in the account.
			return errors.New("install: --system is for Linux and macOS: on Windows every service is the machine's already; run 'awbridge install' without --system")
		}
		if err := checkUser(s.User); err != nil {
			return err
		}
	}
	return nil
}

// UserError refuses a system-wide service without an account of its own
// to run as: awbridge reads one person's ActivityWatch and config, and
// must not do it as root.
type UserError struct{ User, Reason string }

func (e *UserError) Error() string {
	if e.User == "" {
		return "install: a system-wide service runs as the person whose ActivityWatch it reads: " + e.Reason
	}
	return fmt.Sprintf("install: a system-wide service cannot run as %q: %s", e.User, e.Reason)
}

// checkUser says whether name can be the account of a system-wide unit.
func checkUser(name string) error {
	switch {
	case name == "":
		return &UserError{Reason: "run the install with sudo from that person's account (the service then runs as them), or install the per-user service without --system"}
	case name == "root":
		return &UserError{User: name, Reason: "root would read another person's config and ActivityWatch; run the install with sudo from that person's account"}
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' || r == '\\' || r == '%' || r == '$' }) ||
		strings.Contains(name, "{{") || strings.HasPrefix(name, "-"):
		return &UserError{User: name, Reason: "not a plain account name"}
	}
	return nil
}

// Validate reports why s cannot be installed: what check refuses, and a
// `go run` or `go test` binary in the build cache (*GoRunError).
func (s Spec) Validate() error {
	if err := s.check(); err != nil {
		return err
	}
	if strings.Contains(strings.ReplaceAll(s.Executable, `\`, "/"), "/go-build") {
		return &GoRunError{Path: s.Executable}
	}
	return nil
}

// Render returns the file the install writes for s: the systemd unit, the
// launchd plist, or on Windows a description of the service (which lives
// in the registry). It renders `go run` binaries too, for --dry-run.
func Render(s Spec) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	switch s.goos() {
	case "darwin":
		return renderPlist(s), nil
	case "windows":
		return renderWindows(s), nil
	}
	return renderSystemd(s), nil
}

func renderSystemd(s Spec) string {
	// A user unit starts after aw-server-rust's own user unit when that
	// runs in the same user manager; After= on a unit that does not exist
	// is harmless (unlike Requires=). A system unit cannot order itself
	// after a user unit.
	after, service, wanted := "default.target aw-server.service", "", "default.target"
	if s.System {
		after, service, wanted = "network.target", "User="+s.User+"\n", "multi-user.target"
	}
	if s.Socket != "" {
		service += "Environment=" + systemdEnv(config.SocketEnv+"="+s.Socket) + "\n"
	}
	return fmt.Sprintf(`[Unit]
Description=%s
Documentation=%s
After=%s

[Service]
Type=simple
%sExecStart=%s
Restart=on-failure
RestartSec=%s

[Install]
WantedBy=%s
`, description, docURL, after, service, s.commandLine(systemdArg), RestartDelay, wanted)
}

// commandLine is the service's command line, each word quoted by quote.
func (s Spec) commandLine(quote func(string) string) string {
	words := append([]string{s.Executable}, s.Arguments()...)
	for i, w := range words {
		words[i] = quote(w)
	}
	return strings.Join(words, " ")
}

// systemdEnv quotes one Environment= assignment: "%" doubled (specifiers
// are expanded there, variables are not), the whole in double quotes with
// "\" and `"` escaped.
func systemdEnv(a string) string {
	return `"` + strings.NewReplacer("%", "%%", `\`, `\\`, `"`, `\"`).Replace(a) + `"`
}

// systemdArg quotes one ExecStart word: "%" and "$" doubled (specifiers
// and variables are expanded there), the word in double quotes with "\"
// and `"` escaped when it holds a blank, a quote or a backslash.
func systemdArg(a string) string {
	a = strings.NewReplacer("%", "%%", "$", "$$").Replace(a)
	if a != "" && !strings.ContainsAny(a, " \t\"'\\") {
		return a
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
}

func renderPlist(s Spec) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
`)
	entry := func(key, value string) { b.WriteString("\t<key>" + key + "</key>\n\t" + value + "\n") }
	str := func(v string) string { return "<string>" + xmlText(v) + "</string>" }
	entry("Label", str(LaunchdLabel))
	if s.System {
		entry("UserName", str(s.User))
	}
	if s.Socket != "" {
		entry("EnvironmentVariables", "<dict>\n\t\t<key>"+config.SocketEnv+"</key>\n\t\t"+str(s.Socket)+"\n\t</dict>")
	}
	args := "<array>\n"
	for _, a := range append([]string{s.Executable}, s.Arguments()...) {
		args += "\t\t" + str(a) + "\n"
	}
	entry("ProgramArguments", args+"\t</array>")
	entry("RunAtLoad", "<true/>")
	entry("KeepAlive", "<true/>")
	entry("ThrottleInterval", "<integer>"+strings.TrimSuffix(RestartDelay, "s")+"</integer>")
	entry("ProcessType", str("Background"))
	entry("StandardOutPath", str(s.LogPath()))
	entry("StandardErrorPath", str(s.LogPath()))
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}

func renderWindows(s Spec) string {
	return fmt.Sprintf(`Windows service %q (display name %q)
Description: %s
Start type: automatic; restarted %s after a failure
Command line: %s
`, Name, Name, description, RestartDelay, s.commandLine(windowsArg))
}

// windowsArg quotes one command-line word the way syscall.EscapeArg does
// (and the service manager's command line is built).
func windowsArg(s string) string {
	if s == "" {
		return `""`
	}
	if !strings.ContainsAny(s, " \t\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(s[i])
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}
