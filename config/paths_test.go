package config

import (
	"strings"
	"testing"
)

func TestDefaultPaths(t *testing.T) {
	tests := []struct {
		name      string
		goos      string
		env       map[string]string
		wantFile  string
		wantState string
	}{
		{"linux XDG defaults", "linux", map[string]string{"HOME": "/home/ann"},
			"/home/ann/.config/awbridge/config.toml", "/home/ann/.local/state/awbridge"},
		{"linux XDG set", "linux", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st/"},
			"/cfg/awbridge/config.toml", "/st/awbridge"},
		{"linux relative XDG is ignored", "linux", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "cfg", "XDG_STATE_HOME": "st"},
			"/home/ann/.config/awbridge/config.toml", "/home/ann/.local/state/awbridge"},
		{"linux empty XDG is ignored", "linux", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""},
			"/home/ann/.config/awbridge/config.toml", "/home/ann/.local/state/awbridge"},
		{"linux XDG without HOME", "linux", map[string]string{"XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st"},
			"/cfg/awbridge/config.toml", "/st/awbridge"},
		{"linux nothing set", "linux", nil, "", ""},
		{"freebsd follows XDG", "freebsd", map[string]string{"HOME": "/usr/home/ann"},
			"/usr/home/ann/.config/awbridge/config.toml", "/usr/home/ann/.local/state/awbridge"},
		{"darwin", "darwin", map[string]string{"HOME": "/Users/ann", "XDG_CONFIG_HOME": "/ignored"},
			"/Users/ann/Library/Application Support/awbridge/config.toml", "/Users/ann/Library/Application Support/awbridge"},
		{"windows", "windows", map[string]string{"AppData": `C:\Users\ann\AppData\Roaming`, "LocalAppData": `C:\Users\ann\AppData\Local`},
			`C:\Users\ann\AppData\Roaming\awbridge\config.toml`, `C:\Users\ann\AppData\Local\awbridge`},
		{"windows nothing set", "windows", map[string]string{"HOME": "/home/ann"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := mapEnv(tt.env)
			env.GOOS = tt.goos
			if got := DefaultConfigPath(env); got != tt.wantFile {
				t.Errorf("DefaultConfigPath = %q, want %q", got, tt.wantFile)
			}
			if got := DefaultStateDir(env); got != tt.wantState {
				t.Errorf("DefaultStateDir = %q, want %q", got, tt.wantState)
			}
		})
	}
}

func TestPathSetting(t *testing.T) {
	tests := []struct {
		name, goos, home, in, want, problem string
	}{
		{"absolute", "linux", "/home/ann", "/srv/ctx/", "/srv/ctx", ""},
		{"cleaned", "linux", "/home/ann", "/srv/./a/../ctx", "/srv/ctx", ""},
		{"tilde", "linux", "/home/ann", "~", "/home/ann", ""},
		{"tilde slash", "linux", "/home/ann", "~/ctx", "/home/ann/ctx", ""},
		{"tilde user is not expanded", "linux", "/home/ann", "~bob/ctx", "", `"~bob/ctx" is not an absolute path`},
		{"relative", "linux", "/home/ann", "ctx", "", `"ctx" is not an absolute path`},
		{"windows drive", "windows", `C:\Users\ann`, `D:\ctx`, `D:\ctx`, ""},
		{"windows tilde", "windows", `C:\Users\ann`, `~\ctx`, `C:\Users\ann\ctx`, ""},
		{"windows UNC", "windows", `C:\Users\ann`, `\\server\share`, `\\server\share`, ""},
		{"windows rooted without drive", "windows", `C:\Users\ann`, `\ctx`, "", `"\\ctx" is not an absolute path`},
		{"windows slash path", "windows", `C:\Users\ann`, "/ctx", "", `"/ctx" is not an absolute path`},
		{"control character", "linux", "/home/ann", "/a\x00b", "", `"/a\x00b" contains control characters or invalid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := mapEnv(map[string]string{homeVar(tt.goos): tt.home})
			env.GOOS = tt.goos
			sp := spec{key: "paths.context_root", kind: kindPath, maxLen: maxPathLen}
			v, problem := sp.parse(tt.in, env)
			if problem != tt.problem {
				t.Fatalf("problem %q, want %q", problem, tt.problem)
			}
			if problem == "" && v.(string) != tt.want {
				t.Errorf("path %q, want %q", v, tt.want)
			}
		})
	}
}

// TestSocketPath checks where the service's socket goes, first choice
// first, and that the fallback without XDG_RUNTIME_DIR is a folder inside
// the home folder, which no other user can make first (a shared /tmp lets
// anyone create /tmp/awbridge-<uid> and keep the service from starting).
func TestSocketPath(t *testing.T) {
	long := "/home/" + strings.Repeat("a", 80) // its state folder's socket is too long
	tests := []struct {
		name, goos string
		env        map[string]string
		want       string
		note       string // a substring of Note; "" wants no note
	}{
		{"AWBRIDGE_SOCKET first", "linux", map[string]string{"AWBRIDGE_SOCKET": "/run/x.sock", "XDG_RUNTIME_DIR": "/run/user/7", "HOME": "/home/ann"},
			"/run/x.sock", ""},
		{"relative AWBRIDGE_SOCKET is ignored", "linux", map[string]string{"AWBRIDGE_SOCKET": "x.sock", "XDG_RUNTIME_DIR": "/run/user/7"},
			"/run/user/7/awbridge/awbridge.sock", ""},
		{"XDG_RUNTIME_DIR", "linux", map[string]string{"XDG_RUNTIME_DIR": "/run/user/7", "HOME": "/home/ann"},
			"/run/user/7/awbridge/awbridge.sock", ""},
		{"no XDG_RUNTIME_DIR: the state folder in the home folder", "linux", map[string]string{"HOME": "/home/ann", "TMPDIR": "/tmp"},
			"/home/ann/.local/state/awbridge/awbridge.sock", "XDG_RUNTIME_DIR is unset"},
		{"relative XDG_RUNTIME_DIR is ignored", "linux", map[string]string{"XDG_RUNTIME_DIR": "relative", "HOME": "/home/ann"},
			"/home/ann/.local/state/awbridge/awbridge.sock", "XDG_RUNTIME_DIR is unset"},
		{"XDG_STATE_HOME", "linux", map[string]string{"HOME": "/home/ann", "XDG_STATE_HOME": "/home/ann/st"},
			"/home/ann/st/awbridge/awbridge.sock", "XDG_RUNTIME_DIR is unset"},
		{"runtime dir too long: the state folder", "linux", map[string]string{"XDG_RUNTIME_DIR": long, "HOME": "/home/ann"},
			"/home/ann/.local/state/awbridge/awbridge.sock", "is longer than a socket path can be (103 bytes at most)"},
		{"home too long: the temp folder, with advice", "linux", map[string]string{"HOME": long},
			"/tmp/awbridge-7/awbridge.sock", "set AWBRIDGE_SOCKET to a path in a folder of your own"},
		{"no home: the temp folder, with advice", "linux", map[string]string{"TMPDIR": "/var/tmp"},
			"/var/tmp/awbridge-7/awbridge.sock", "XDG_RUNTIME_DIR and HOME are unset"},
		{"nothing set", "linux", map[string]string{}, "/tmp/awbridge-7/awbridge.sock", "another user of a shared temp folder can make first"},
		{"macOS: the home folder, whatever TMPDIR is", "darwin", map[string]string{"HOME": "/Users/ann", "TMPDIR": "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/"},
			"/Users/ann/Library/Application Support/awbridge/awbridge.sock", ""},
		{"windows", "windows", map[string]string{"LocalAppData": `C:\Users\ann\AppData\Local`, "XDG_RUNTIME_DIR": "/run/user/7"},
			`C:\Users\ann\AppData\Local\awbridge\service.json`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := mapEnv(tt.env)
			env.GOOS = tt.goos
			got := ResolveSocket(env, 7)
			if got.Path != tt.want {
				t.Errorf("path %s, want %s", got.Path, tt.want)
			}
			if SocketPath(env, 7) != got.Path {
				t.Errorf("SocketPath differs from ResolveSocket")
			}
			if (tt.note == "") != (got.Note == "") || !strings.Contains(got.Note, tt.note) {
				t.Errorf("note %q, want one with %q", got.Note, tt.note)
			}
			if len(got.Path) > maxSocketPath && tt.goos != "windows" {
				t.Errorf("%d bytes: longer than a socket path can be", len(got.Path))
			}
		})
	}
}

// TestConfigPathDoc checks the help text's description of the default
// config file per OS against the path DefaultConfigPath makes.
func TestConfigPathDoc(t *testing.T) {
	tests := []struct {
		goos string
		env  map[string]string
		doc  string
		path string
	}{
		{"linux", map[string]string{"HOME": "/home/ann"},
			"$XDG_CONFIG_HOME/awbridge/config.toml, else ~/.config/awbridge/config.toml", "/home/ann/.config/awbridge/config.toml"},
		{"freebsd", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "/cfg"},
			"$XDG_CONFIG_HOME/awbridge/config.toml, else ~/.config/awbridge/config.toml", "/cfg/awbridge/config.toml"},
		{"darwin", map[string]string{"HOME": "/Users/ann"},
			"~/Library/Application Support/awbridge/config.toml", "/Users/ann/Library/Application Support/awbridge/config.toml"},
		{"windows", map[string]string{"AppData": `C:\Users\ann\AppData\Roaming`},
			`%AppData%\awbridge\config.toml`, `C:\Users\ann\AppData\Roaming\awbridge\config.toml`},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			if got := ConfigPathDoc(tt.goos); got != tt.doc {
				t.Errorf("doc %q, want %q", got, tt.doc)
			}
			env := mapEnv(tt.env)
			env.GOOS = tt.goos
			if got := DefaultConfigPath(env); got != tt.path {
				t.Errorf("path %q, want %q", got, tt.path)
			}
		})
	}
}

// TestRelativePathsPerOS checks how a typed path is made absolute on each
// OS's rules.
func TestRelativePathsPerOS(t *testing.T) {
	tests := []struct {
		goos, dir, home, in, want, problem string
	}{
		{"linux", "/work", "/home/ann", "c.toml", "/work/c.toml", ""},
		{"linux", "/work", "/home/ann", "../c.toml", "/c.toml", ""},
		{"linux", "/work", "/home/ann", "~/c.toml", "/home/ann/c.toml", ""},
		{"linux", "/work", "/home/ann", "/etc/c.toml", "/etc/c.toml", ""},
		{"linux", "/work", "", "~/c.toml", "", "starts with ~ but the home folder is unknown (HOME is unset or relative)"},
		{"linux", "work", "", "c.toml", "", `is relative and the working directory "work" is not absolute`},
		{"darwin", "/Users/ann/src", "/Users/ann", "c.toml", "/Users/ann/src/c.toml", ""},
		{"windows", `C:\work`, `C:\Users\ann`, "c.toml", `C:\work\c.toml`, ""},
		{"windows", `C:\work`, `C:\Users\ann`, `~\c.toml`, `C:\Users\ann\c.toml`, ""},
		{"windows", `C:\work`, `C:\Users\ann`, `D:\c.toml`, `D:\c.toml`, ""},
	}
	for _, tt := range tests {
		env := mapEnv(map[string]string{homeVar(tt.goos): tt.home})
		env.GOOS, env.Dir = tt.goos, tt.dir
		got, problem := env.absolute(tt.in)
		if got != tt.want || problem != tt.problem {
			t.Errorf("%s %q in %q: %q (%q), want %q (%q)", tt.goos, tt.in, tt.dir, got, problem, tt.want, tt.problem)
		}
	}
}
