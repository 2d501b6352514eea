package config

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"
)

// Env is the process environment as config sees it. main passes
// Env{Lookup: os.LookupEnv}; tests pass a map. A nil Lookup is an empty
// environment; an empty GOOS is runtime.GOOS. Env is a plain value, safe to
// share if Lookup is.
type Env struct {
	// Lookup reports a variable's value and whether it is set at all: a
	// variable set to "" overrides the file. A value that is one
	// unexpanded placeholder, "${name}", counts as unset: MCP clients pass
	// the placeholder through when the setting it names was left blank
	// (Claude Desktop's ${user_config.api_key}, Claude Code's ${VAR}).
	Lookup func(string) (string, bool)
	// GOOS selects the path conventions ("linux", "darwin", "windows", ...).
	GOOS string
	// Dir is the working directory that a relative --config,
	// AWBRIDGE_CONFIG or protect.files path (from the environment or a
	// flag) is made absolute against; "" is os.Getwd().
	Dir string
}

func (e Env) lookup(name string) (string, bool) {
	if e.Lookup == nil {
		return "", false
	}
	v, ok := e.Lookup(name)
	if ok && placeholder(v) {
		return "", false
	}
	return v, ok
}

// placeholder reports whether v is "${" name "}" and nothing else, the
// name made of letters, digits, "_" and ".".
func placeholder(v string) bool {
	if len(v) < 4 || !strings.HasPrefix(v, "${") || !strings.HasSuffix(v, "}") {
		return false
	}
	return strings.Trim(v[2:len(v)-1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == ""
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
	if !IsAbs(e.goos(), v) {
		return ""
	}
	return v
}

// DefaultConfigPath is the config file used when neither --config nor
// AWBRIDGE_CONFIG names one (see [ConfigPathDoc]); "" when the variables it
// needs are unset or relative.
func DefaultConfigPath(env Env) string {
	dir := env.baseDir("AppData", "XDG_CONFIG_HOME", ".config")
	if dir == "" {
		return ""
	}
	return join(env.goos(), dir, "awbridge", "config.toml")
}

// ConfigPathDoc describes DefaultConfigPath on goos ("": runtime.GOOS) in
// the notation a person of that OS reads.
func ConfigPathDoc(goos string) string {
	goos = cmp.Or(goos, runtime.GOOS)
	file := join(goos, "awbridge", "config.toml")
	switch goos {
	case "windows":
		return join(goos, "%AppData%", file)
	case "darwin", "ios":
		return join(goos, "~", "Library", "Application Support", file)
	case "plan9":
		return join(goos, "$home", "lib", file)
	}
	return join(goos, "$XDG_CONFIG_HOME", file) + ", else " + join(goos, "~", ".config", file)
}

// baseDir is a per-user folder with os.UserConfigDir's conventions:
// %<win>% on Windows, ~/Library/Application Support on macOS, $home/lib
// on Plan 9, else $<xdg> or ~/<xdgDefault>; "" when the variables it needs
// are unset or relative.
func (env Env) baseDir(win, xdg string, xdgDefault ...string) string {
	switch goos := env.goos(); goos {
	case "windows":
		return env.absVar(win)
	case "darwin", "ios":
		if h := env.absVar("HOME"); h != "" {
			return join(goos, h, "Library", "Application Support")
		}
	case "plan9":
		if h := env.absVar("home"); h != "" {
			return join(goos, h, "lib")
		}
	default:
		if dir := env.absVar(xdg); dir != "" {
			return dir
		}
		if h := env.absVar("HOME"); h != "" {
			return join(goos, append([]string{h}, xdgDefault...)...)
		}
	}
	return ""
}

// DefaultStateDir is paths.state_dir's default: $XDG_STATE_HOME/awbridge
// (~/.local/state/awbridge) on Linux and other Unix systems,
// ~/Library/Application Support/awbridge on macOS,
// %LocalAppData%\awbridge on Windows; "" when the variables it needs are
// unset or relative (Load then says state_dir must be set).
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

// IsAbs reports whether p is absolute on goos, independent of the OS the
// code runs on (so tests can check every OS's rules).
func IsAbs(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return len(p) > 2 // UNC
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(('a' <= p[0] && p[0] <= 'z') || ('A' <= p[0] && p[0] <= 'Z'))
}

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

// maxSocketPath is the longest Unix socket path used: sun_path holds 104
// bytes on macOS and the BSDs (108 on Linux), the terminating NUL included.
const maxSocketPath = 103

// Socket is where the service's socket is (on Windows, the file naming
// the service's loopback port and token), and a Note saying why when that
// is not the usual place, for `awbridge config` and serve's log.
type Socket struct {
	Path, Note string
}

// SocketPath is where `awbridge serve` listens and `awbridge stdio` looks
// for it; see [ResolveSocket].
func SocketPath(env Env, uid int) string { return ResolveSocket(env, uid).Path }

// ResolveSocket chooses the service's socket, in order:
//
//   - AWBRIDGE_SOCKET (an absolute path);
//   - Windows: %LocalAppData%\awbridge\service.json;
//   - $XDG_RUNTIME_DIR/awbridge/awbridge.sock;
//   - DefaultStateDir/awbridge.sock: inside the home folder, so no other
//     user can make the folder first, and the same for a launchd agent and
//     a terminal (which may not share TMPDIR);
//   - <temp dir>/awbridge-<uid>/awbridge.sock, last: in a shared /tmp
//     another user can make that folder first (the service then refuses it).
//
// A candidate longer than a socket path can be is skipped. Note says why
// the choice is not the usual one.
func ResolveSocket(env Env, uid int) Socket {
	if p := env.absVar(SocketEnv); p != "" {
		return Socket{Path: p}
	}
	goos := env.goos()
	if goos == "windows" {
		// No Unix socket private to the user: the service writes a loopback
		// port and its token here, in the user's own folder.
		if d := env.absVar("LocalAppData"); d != "" {
			return Socket{Path: join(goos, d, "awbridge", "service.json")}
		}
	}
	stateNote := "XDG_RUNTIME_DIR is unset: the socket is in the state folder"
	if goos == "darwin" || goos == "ios" {
		stateNote = "" // the usual place on macOS
	}
	var skipped []string
	xdg, state := env.absVar("XDG_RUNTIME_DIR"), DefaultStateDir(env)
	for _, c := range []struct{ dir, path, note string }{
		{xdg, join(goos, xdg, "awbridge", "awbridge.sock"), ""},
		{state, join(goos, state, "awbridge.sock"), stateNote},
	} {
		switch {
		case c.dir == "":
		case len(c.path) > maxSocketPath:
			skipped = append(skipped, c.path)
		case len(skipped) > 0:
			return Socket{Path: c.path, Note: tooLong(skipped)}
		default:
			return Socket{Path: c.path, Note: c.note}
		}
	}
	tmp := env.absVar("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	p := join(goos, tmp, fmt.Sprintf("awbridge-%d", uid), "awbridge.sock")
	why := "XDG_RUNTIME_DIR and HOME are unset"
	if len(skipped) > 0 {
		why = tooLong(skipped)
	}
	return Socket{Path: p, Note: why + "; the socket falls back to " + p +
		", a folder another user of a shared temp folder can make first: set AWBRIDGE_SOCKET to a path in a folder of your own"}
}

// ServiceSocket is where a system-wide service run as the person with
// this home folder and uid listens (its unit sets AWBRIDGE_SOCKET to it):
// ResolveSocket with HOME alone, as the service manager starts it, with
// no login session. On Linux that is ~/.local/state/awbridge/awbridge.sock:
// unlike $XDG_RUNTIME_DIR it exists whether or not the person is logged
// in. Clients look there second ([SocketCandidates]).
func ServiceSocket(goos, home string, uid int) string {
	return SocketPath(Env{GOOS: goos, Lookup: func(k string) (string, bool) {
		if k == "HOME" && home != "" {
			return home, true
		}
		return "", false
	}}, uid)
}

// SocketCandidates are where clients look for the service, in order:
// SocketPath (a per-user service's place), then, unless AWBRIDGE_SOCKET
// is set, ServiceSocket for this HOME (a system-wide service's place) when
// it differs.
func SocketCandidates(env Env, uid int) []string {
	paths := []string{SocketPath(env, uid)}
	if env.absVar(SocketEnv) != "" || env.goos() == "windows" {
		return paths
	}
	if p := ServiceSocket(env.goos(), env.absVar("HOME"), uid); p != paths[0] {
		paths = append(paths, p)
	}
	return paths
}

// tooLong says which socket paths were skipped for their length.
func tooLong(skipped []string) string {
	return fmt.Sprintf("%s is longer than a socket path can be (%d bytes at most)", strings.Join(skipped, " and "), maxSocketPath)
}

// absolute makes p, a path a person typed, absolute: a leading ~ is the
// home folder and a relative path is taken against env.Dir (when "",
// os.Getwd()). Paths are cleaned on slash systems. problem says why when
// that cannot be done (it follows the quoted path).
func (env Env) absolute(p string) (abs, problem string) {
	goos := env.goos()
	p, ok := expandHome(p, env)
	if !ok {
		return "", fmt.Sprintf("starts with ~ but the home folder is unknown (%s is unset or relative)", homeVar(goos))
	}
	if !IsAbs(goos, p) {
		base := env.Dir
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return "", "is relative and the working directory is unknown: " + err.Error()
			}
			base = wd
		}
		if !IsAbs(goos, base) {
			return "", "is relative and the working directory " + quoteShort(base) + " is not absolute"
		}
		p = join(goos, base, p)
	}
	if goos != "windows" {
		p = path.Clean(p)
	}
	return p, ""
}
