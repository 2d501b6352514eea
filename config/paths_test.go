package config

import "testing"

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

func TestSocketPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"AWBRIDGE_SOCKET": "/run/x.sock", "XDG_RUNTIME_DIR": "/run/user/1"}, "/run/x.sock"},
		{map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}, "/run/user/1/awbridge/awbridge.sock"},
		{map[string]string{"XDG_RUNTIME_DIR": "relative"}, "/tmp/awbridge-7/awbridge.sock"},
		{map[string]string{"TMPDIR": "/var/tmp"}, "/var/tmp/awbridge-7/awbridge.sock"},
		{map[string]string{}, "/tmp/awbridge-7/awbridge.sock"},
	}
	for _, tt := range tests {
		env := Env{GOOS: "linux", Lookup: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
		if got := SocketPath(env, 7); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.env, got, tt.want)
		}
	}
}
