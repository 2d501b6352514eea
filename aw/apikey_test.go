package aw

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAPIKeyFile(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name    string
		content string
		want    string
		wantErr string
	}{
		{"auth table", "address = \"127.0.0.1\"\nport = 5600\n[auth]\napi_key = \"" + secret + "\"\n", secret, ""},
		{"top-level fallback", "api_key = \"top\"\n", "top", ""},
		{"auth wins over top-level", "api_key = \"top\"\n[auth]\napi_key = \"nested\"\n", "nested", ""},
		{"empty auth key falls back", "api_key = \"top\"\n[auth]\napi_key = \"\"\n", "top", ""},
		// What aw-server-rust writes on first start: everything commented.
		{"default commented file", "### DEFAULT SETTINGS ###\n#address = \"127.0.0.1\"\n#port = 5600\n", "", ""},
		{"no key, unknown keys ignored", "port = 5600\ncors = [\"x\"]\n[custom_static]\nx = \"/y\"\n[auth]\nother = 1\n", "", ""},
		{"empty file", "", "", ""},
		{"key not a string", "[auth]\napi_key = 42\n", "", "not a string"},
		// An unquoted value is invalid TOML; the parser's own message would
		// quote it, ours must not.
		{"invalid toml", "[auth]\napi_key = " + secret + "\n", "", "invalid TOML at line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadAPIKeyFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error leaks the key: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadAPIKeyFile = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	_, err := ReadAPIKeyFile(filepath.Join(t.TempDir(), "missing.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	big := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", maxRustConfigBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAPIKeyFile(big); err == nil {
		t.Errorf("oversized file accepted")
	}
}

func TestDefaultRustConfigPath(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name string
		p    Platform
		want string
	}{
		{"linux home", Platform{GOOS: "linux", HomeDir: "/home/ada"}, "/home/ada/.config/activitywatch/aw-server-rust/config.toml"},
		{"linux xdg", Platform{GOOS: "linux", HomeDir: "/home/ada", Getenv: env("XDG_CONFIG_HOME", "/cfg")}, "/cfg/activitywatch/aw-server-rust/config.toml"},
		{"linux relative xdg ignored", Platform{GOOS: "linux", HomeDir: "/home/ada", Getenv: env("XDG_CONFIG_HOME", "cfg")}, "/home/ada/.config/activitywatch/aw-server-rust/config.toml"},
		{"linux nothing known", Platform{GOOS: "linux"}, ""},
		{"freebsd", Platform{GOOS: "freebsd", HomeDir: "/usr/home/ada"}, "/usr/home/ada/.config/activitywatch/aw-server-rust/config.toml"},
		{"macos", Platform{GOOS: "darwin", HomeDir: "/Users/ada", Getenv: env("XDG_CONFIG_HOME", "/cfg")},
			"/Users/ada/Library/Application Support/activitywatch/aw-server-rust/config.toml"},
		{"macos no home", Platform{GOOS: "darwin"}, ""},
		{"windows", Platform{GOOS: "windows", HomeDir: `C:\Users\ada`, Getenv: env("LOCALAPPDATA", `C:\Users\ada\AppData\Local\`)},
			`C:\Users\ada\AppData\Local\activitywatch\aw-server-rust\config.toml`},
		{"windows no LOCALAPPDATA", Platform{GOOS: "windows", HomeDir: `D:\home\ada`},
			`D:\home\ada\AppData\Local\activitywatch\aw-server-rust\config.toml`},
		{"windows nothing known", Platform{GOOS: "windows", Getenv: env("LOCALAPPDATA", "relative")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultRustConfigPath(tt.p); got != tt.want {
				t.Errorf("DefaultRustConfigPath = %q, want %q", got, tt.want)
			}
		})
	}
}
