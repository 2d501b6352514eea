package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// configHome is a home folder for `awbridge config`: a config file at the
// default place (when file is not "") and an HTTP token in the state
// folder (when token is not "").
func configHome(t *testing.T, file, token string) string {
	t.Helper()
	home := t.TempDir()
	if file != "" {
		p := filepath.Join(home, ".config", "awbridge", "config.toml")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if token != "" {
		p := filepath.Join(home, ".local", "state", "awbridge", httpTokenFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// arraysFile is a config file as a person writes it: lists as arrays,
// numbers bare.
const arraysFile = `[activitywatch]
timeout = "3s"

[server]
max_in_flight = 64
max_line_bytes = 65536
http = "127.0.0.1:8765"

[privacy]
exclude_apps = ["1Password", "Signal"]
title_rules = ["Acme Corp => [client]", "(?i)payroll => [hr]"]

[limits]
rate_limits = ["nowframe_build=5/s:10", "aw_get_state=30/m"]
sensitive_keys = ["cookie"]

[protect]
files = ["notes/watched.txt"]
env = ["HOME"]
`

// TestConfigCommandGolden runs the real binary's `awbridge config` and
// compares stdout, stderr and the exit status with
// testdata/config/<name>.golden (go test -update rewrites them). The
// temporary home folder reads as $HOME.
func TestConfigCommandGolden(t *testing.T) {
	const secretToken, secretKey = "tok-SECRET-9f8e7d", "key-SECRET-1a2b3c"
	tests := []struct {
		name   string
		file   string
		token  string
		env    []string
		args   []string
		secret bool // the output may show the secrets
	}{
		{name: "defaults"},
		{name: "arrays", file: arraysFile, token: secretToken, env: []string{"AWBRIDGE_AW_API_KEY=" + secretKey}},
		{name: "show_secrets", file: arraysFile, token: secretToken, env: []string{"AWBRIDGE_AW_API_KEY=" + secretKey},
			args: []string{"--show-secrets"}, secret: true},
		{name: "json", file: arraysFile, token: secretToken, env: []string{"AWBRIDGE_AW_API_KEY=" + secretKey},
			args: []string{"--json"}},
		{name: "config_off", env: []string{"AWBRIDGE_CONFIG="}},
		{name: "problems", file: "[limits]\nrate_limits = [\"nowframe=5/s\"]\n[protect]\nenv = [\"A=B\"]\n",
			env: []string{"AWBRIDGE_AW_TIMOUT=3s", "AWBRIDGE_FOO=1", "AWBRIDGE_SOCKET=/tmp/s.sock"}},
		{name: "rate_limit_alias", env: []string{"AWBRIDGE_RATE_LIMITS=nowframe.build=5/s"}},
		{name: "not_loopback", file: "[server]\nhttp = \"0.0.0.0:8765\"\n"},
		{name: "not_loopback_json", file: "[server]\nhttp = \"0.0.0.0:8765\"\n", args: []string{"--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := configHome(t, tt.file, tt.token)
			code, stdout, errs := runBinIn(t, home, append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, tt.env...),
				append([]string{"config"}, tt.args...)...)
			if slices.Contains(tt.args, "--json") && stdout != "" {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, []byte(stdout), "", "  "); err != nil {
					t.Fatalf("--json stdout is not one JSON document: %v\n%s", err, stdout)
				}
				stdout = strings.TrimRight(pretty.String(), "\n") + "\n"
			}
			got := "exit " + strconv.Itoa(code) + "\n--- stdout\n" + stdout + "--- stderr\n" + errs
			got = strings.ReplaceAll(got, home, "$HOME")
			if !tt.secret && (strings.Contains(got, secretToken) || strings.Contains(got, secretKey)) {
				t.Errorf("a secret is shown without --show-secrets:\n%s", got)
			}
			checkGolden(t, filepath.Join("testdata", "config", tt.name+".golden"), got)
		})
	}
}
