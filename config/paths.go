package config

import (
	"fmt"
	"runtime"
	"strings"
)

// Env is the process environment as config sees it. main passes
// Env{Lookup: os.LookupEnv}; tests pass a map. A nil Lookup is an empty
// environment; an empty GOOS is runtime.GOOS. Env is a plain value, safe to
// share if Lookup is.
type Env struct {
	// Lookup reports a variable's value and whether it is set at all: a
	// variable set to "" overrides the file.
	Lookup func(string) (string, bool)
	// GOOS selects the path conventions ("linux", "darwin", "windows", ...).
	GOOS string
}

func (e Env) lookup(name string) (string, bool) {
	if e.Lookup == nil {
		return "", false
	}
	return e.Lookup(name)
}

func (e Env) goos() string {
	if e.GOOS == "" {
		return runtime.GOOS
	}
	return e.GOOS
}

// absVar returns the variable's value when it is an absolute path for the
// OS, else "" (the XDG spec says to ignore relative values).
func (e Env) absVar(name string) string {
	v, _ := e.lookup(name)
	if !isAbs(e.goos(), v) {
		return ""
	}
	return v
}

// DefaultConfigPath is the config file used when neither --config nor
// AWBRIDGE_CONFIG names one, with os.UserConfigDir's conventions:
// $XDG_CONFIG_HOME/awbridge/config.toml (XDG default ~/.config) on Linux and
// other Unix systems, ~/Library/Application Support/awbridge/config.toml on
// macOS, %AppData%\awbridge\config.toml on Windows. It is "" when the
// variables it needs are unset or relative.
func DefaultConfigPath(env Env) string {
	dir := env.baseDir("AppData", "XDG_CONFIG_HOME", ".config")
	if dir == "" {
		return ""
	}
	return join(env.goos(), dir, "awbridge", "config.toml")
}

// baseDir is the per-user folder of one kind with os.UserConfigDir's
// conventions: %<winVar>% on Windows, ~/Library/Application Support on
// macOS, $home/lib on Plan 9, else $<xdgVar> or ~/<xdgDefault>. "" when
// the variables it needs are unset or relative.
func (env Env) baseDir(winVar, xdgVar string, xdgDefault ...string) string {
	switch goos := env.goos(); goos {
	case "windows":
		return env.absVar(winVar)
	case "darwin", "ios":
		if h := env.absVar("HOME"); h != "" {
			return join(goos, h, "Library", "Application Support")
		}
	case "plan9":
		if h := env.absVar("home"); h != "" {
			return join(goos, h, "lib")
		}
	default:
		if dir := env.absVar(xdgVar); dir != "" {
			return dir
		}
		if h := env.absVar("HOME"); h != "" {
			return join(goos, append([]string{h}, xdgDefault...)...)
		}
	}
	return ""
}

// DefaultStateDir is paths.state_dir's default: $XDG_STATE_HOME/awbridge
// (XDG default ~/.local/state) on Linux and other Unix systems,
// ~/Library/Application Support/awbridge on macOS,
// %LocalAppData%\awbridge on Windows. It is "" when the variables it needs
// are unset or relative; Load then reports that state_dir must be set.
func DefaultStateDir(env Env) string {
	dir := env.baseDir("LocalAppData", "XDG_STATE_HOME", ".local", "state")
	if dir == "" {
		return ""
	}
	return join(env.goos(), dir, "awbridge")
}

// homeVar names the variable holding the home folder on goos.
func homeVar(goos string) string {
	switch goos {
	case "windows":
		return "USERPROFILE"
	case "plan9":
		return "home"
	}
	return "HOME"
}

// expandHome replaces a leading "~" or "~/" with the home folder; ok is
// false when p needs the home folder and it is unknown. "~user" is left
// alone (and then fails the absolute-path check).
func expandHome(p string, env Env) (string, bool) {
	goos := env.goos()
	if p != "~" && !strings.HasPrefix(p, "~/") && !(goos == "windows" && strings.HasPrefix(p, `~\`)) {
		return p, true
	}
	home := env.absVar(homeVar(goos))
	if home == "" {
		return "", false
	}
	if p == "~" {
		return home, true
	}
	return join(goos, home, p[2:]), true
}

// isAbs reports whether p is absolute on goos, independent of the OS the
// code runs on (so tests can check every OS's rules).
func isAbs(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return len(p) > 2 // UNC
	}
	return len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// join joins path elements with goos's separator, without doubling it.
func join(goos string, elem ...string) string {
	sep, seps := "/", "/"
	if goos == "windows" {
		sep, seps = `\`, `/\`
	}
	var b strings.Builder
	for i, e := range elem {
		if i > 0 {
			if s := b.String(); s == "" || !strings.ContainsRune(seps, rune(s[len(s)-1])) {
				b.WriteString(sep)
			}
			e = strings.TrimLeft(e, seps)
		}
		b.WriteString(e)
	}
	return b.String()
}

// SocketPath is where `awbridge serve` listens and `awbridge stdio`
// looks for it: AWBRIDGE_SOCKET, else $XDG_RUNTIME_DIR/awbridge/awbridge.sock,
// else <temp dir>/awbridge-<uid>/awbridge.sock.
func SocketPath(env Env, uid int) string {
	if p := env.absVar("AWBRIDGE_SOCKET"); p != "" {
		return p
	}
	goos := env.goos()
	if goos == "windows" {
		// No Unix socket private to the user: the service writes a loopback
		// port and its token here, in the user's own folder.
		if d := env.absVar("LocalAppData"); d != "" {
			return join(goos, d, "awbridge", "service.json")
		}
	}
	if d := env.absVar("XDG_RUNTIME_DIR"); d != "" {
		return join(goos, d, "awbridge", "awbridge.sock")
	}
	tmp := env.absVar("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return join(goos, tmp, fmt.Sprintf("awbridge-%d", uid), "awbridge.sock")
}
