package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrecedence(t *testing.T) {
	const partial = "testdata/partial.toml"
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		key        string
		wantValue  string
		wantSource Source
		wantOrigin string
	}{
		{"default", nil, nil,
			"activitywatch.timeout", "2s", SourceDefault, ""},
		{"file over default", map[string]string{"AWBRIDGE_CONFIG": partial}, nil,
			"activitywatch.timeout", "5s", SourceFile, partial},
		{"env over file", map[string]string{"AWBRIDGE_CONFIG": partial, "AWBRIDGE_AW_TIMEOUT": "7s"}, nil,
			"activitywatch.timeout", "7s", SourceEnv, "AWBRIDGE_AW_TIMEOUT"},
		{"flag over env", map[string]string{"AWBRIDGE_CONFIG": partial, "AWBRIDGE_AW_TIMEOUT": "7s"}, []string{"--aw-timeout", "9s"},
			"activitywatch.timeout", "9s", SourceFlag, "--aw-timeout"},
		{"flag over default", nil, []string{"-aw-timeout=1500ms"},
			"activitywatch.timeout", "1.5s", SourceFlag, "--aw-timeout"},
		{"untouched key keeps default beside a file", map[string]string{"AWBRIDGE_CONFIG": partial}, nil,
			"activitywatch.url", "http://127.0.0.1:5600", SourceDefault, ""},
		{"set-but-empty env removes the file's sidecar", map[string]string{"AWBRIDGE_CONFIG": partial, "AWBRIDGE_SIDECAR_URL": ""}, nil,
			"sidecar.url", "", SourceEnv, "AWBRIDGE_SIDECAR_URL"},
		{"file sidecar", map[string]string{"AWBRIDGE_CONFIG": partial}, nil,
			"sidecar.url", "http://127.0.0.1:8788", SourceFile, partial},
		{"empty flag removes the env's sidecar", map[string]string{"AWBRIDGE_SIDECAR_URL": "http://127.0.0.1:1"}, []string{"--sidecar-url="},
			"sidecar.url", "", SourceFlag, "--sidecar-url"},
		{"env secret", map[string]string{"AWBRIDGE_AW_API_KEY": "tok"}, nil,
			"activitywatch.api_key", "********", SourceEnv, "AWBRIDGE_AW_API_KEY"},
		{"env size with unit", map[string]string{"AWBRIDGE_AW_MAX_BODY_BYTES": "4MiB"}, nil,
			"activitywatch.max_body_bytes", "4MiB", SourceEnv, "AWBRIDGE_AW_MAX_BODY_BYTES"},
		{"flag size in bytes", nil, []string{"--max-line-bytes", "65536"},
			"server.max_line_bytes", "64KiB", SourceFlag, "--max-line-bytes"},
		{"flag int", map[string]string{"AWBRIDGE_MAX_IN_FLIGHT": "3"}, []string{"--max-in-flight=5"},
			"server.max_in_flight", "5", SourceFlag, "--max-in-flight"},
		{"env log level is case-insensitive", map[string]string{"AWBRIDGE_LOG_LEVEL": "WARN"}, nil,
			"log.level", "warn", SourceEnv, "AWBRIDGE_LOG_LEVEL"},
		{"env title length", map[string]string{"AWBRIDGE_MAX_TITLE_LENGTH": "64"}, nil,
			"privacy.max_title_length", "64", SourceEnv, "AWBRIDGE_MAX_TITLE_LENGTH"},
		{"state dir from XDG_STATE_HOME is a default", map[string]string{"XDG_STATE_HOME": "/xdg/state"}, nil,
			"paths.state_dir", "/xdg/state/awbridge", SourceDefault, ""},
		{"state dir flag", map[string]string{"AWBRIDGE_STATE_DIR": "/env/state"}, []string{"--state-dir", "/flag/state/"},
			"paths.state_dir", "/flag/state", SourceFlag, "--state-dir"},
		{"host header flag", nil, []string{"--aw-host-header", "localhost:5600"},
			"activitywatch.host_header", "localhost:5600", SourceFlag, "--aw-host-header"},
		{"aw host env", map[string]string{"AWBRIDGE_AW_HOST": "desk"}, []string{"--aw-url", "http://[::1]:5600"},
			"activitywatch.host", "desk", SourceEnv, "AWBRIDGE_AW_HOST"},
		{"inline tables and dotted keys", map[string]string{"AWBRIDGE_CONFIG": "testdata/inline.toml"}, nil,
			"server.max_in_flight", "8", SourceFile, "testdata/inline.toml"},
		{"--config beats AWBRIDGE_CONFIG", map[string]string{"AWBRIDGE_CONFIG": "testdata/inline.toml"}, []string{"--config", partial},
			"activitywatch.timeout", "5s", SourceFile, partial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLoad(t, tt.env, tt.args...)
			got := get(t, l, tt.key)
			if got.Value != tt.wantValue || got.Source != tt.wantSource || got.Origin != inTestdata(t, tt.wantOrigin) {
				t.Errorf("%s = %q from %s %q, want %q from %s %q",
					tt.key, got.Value, got.Source, got.Origin, tt.wantValue, tt.wantSource, tt.wantOrigin)
			}
		})
	}
}

// TestEmptyEnvOverridesFile checks the Config itself, not just the table:
// AWBRIDGE_SIDECAR_URL= means no sidecar even though the file names one.
func TestEmptyEnvOverridesFile(t *testing.T) {
	env := map[string]string{"AWBRIDGE_CONFIG": "testdata/partial.toml"}
	if got := mustLoad(t, env).Config.Sidecar.URL; got != "http://127.0.0.1:8788" {
		t.Fatalf("file sidecar = %q", got)
	}
	env["AWBRIDGE_SIDECAR_URL"] = ""
	if got := mustLoad(t, env).Config.Sidecar.URL; got != "" {
		t.Errorf("with AWBRIDGE_SIDECAR_URL= the sidecar is %q, want none", got)
	}
	env["AWBRIDGE_CONTEXT_ROOT"] = ""
	if got := mustLoad(t, env).Config.Paths.ContextRoot; got != "" {
		t.Errorf("with AWBRIDGE_CONTEXT_ROOT= the context root is %q, want none", got)
	}
}

// TestPlaceholderIsUnset: a client that leaves a setting blank passes its
// "${...}" placeholder through; awbridge reads it as unset, never as the
// value (an API key "${user_config.api_key}", a URL "${AW_URL}").
func TestPlaceholderIsUnset(t *testing.T) {
	env := map[string]string{
		"AWBRIDGE_CONFIG":      "testdata/partial.toml",
		"AWBRIDGE_AW_API_KEY":  "${user_config.api_key}",
		"AWBRIDGE_SIDECAR_URL": "${SIDECAR}",
	}
	l := mustLoad(t, env)
	if got := l.Config.AW.APIKey; got != "" {
		t.Errorf("api key = %q, want none", got)
	}
	if got := l.Config.Sidecar.URL; got != "http://127.0.0.1:8788" {
		t.Errorf("sidecar = %q, want the file's", got)
	}
	for _, v := range []string{"$${x}", "${x}y", "${}", "${a-b}", "x${y}"} {
		env["AWBRIDGE_AW_API_KEY"] = v
		if got := mustLoad(t, env).Config.AW.APIKey; got != v {
			t.Errorf("api key %q read as %q, want it kept", v, got)
		}
	}
}

func TestContextRootOrder(t *testing.T) {
	// Each layer names its own folder; partial.toml says /from/file.
	const (
		flagV = "/from/flag"
		awV   = "/from/awbridge"
		sfV   = "/from/sf"
		sentV = "/from/sentryfrogg"
		fileV = "/from/file"
	)
	type layers struct{ flag, aw, file, sf, sent bool }
	tests := []struct {
		name       string
		on         layers
		want       string
		wantSource Source
		wantOrigin string
	}{
		{"all five: flag", layers{true, true, true, true, true}, flagV, SourceFlag, "--context-root"},
		{"no flag: AWBRIDGE_CONTEXT_ROOT", layers{false, true, true, true, true}, awV, SourceEnv, "AWBRIDGE_CONTEXT_ROOT"},
		{"then the file", layers{false, false, true, true, true}, fileV, SourceFile, "testdata/partial.toml"},
		{"then SF_CONTEXT_REPO_ROOT", layers{false, false, false, true, true}, sfV, SourceEnv, "SF_CONTEXT_REPO_ROOT"},
		{"then SENTRYFROGG_CONTEXT_REPO_ROOT", layers{false, false, false, false, true}, sentV, SourceEnv, "SENTRYFROGG_CONTEXT_REPO_ROOT"},
		{"none: no artifacts", layers{}, "", SourceDefault, ""},
		{"flag alone", layers{flag: true}, flagV, SourceFlag, "--context-root"},
		{"file beats both foreign variables", layers{file: true, sf: true, sent: true}, fileV, SourceFile, "testdata/partial.toml"},
		{"AWBRIDGE beats the file alone", layers{aw: true, file: true}, awV, SourceEnv, "AWBRIDGE_CONTEXT_ROOT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"AWBRIDGE_CONFIG": "testdata/empty.toml"}
			var args []string
			if tt.on.flag {
				args = []string{"--context-root", flagV}
			}
			if tt.on.aw {
				env["AWBRIDGE_CONTEXT_ROOT"] = awV
			}
			if tt.on.file {
				env["AWBRIDGE_CONFIG"] = "testdata/partial.toml"
			}
			if tt.on.sf {
				env["SF_CONTEXT_REPO_ROOT"] = sfV
			}
			if tt.on.sent {
				env["SENTRYFROGG_CONTEXT_REPO_ROOT"] = sentV
			}
			l := mustLoad(t, env, args...)
			got := get(t, l, "paths.context_root")
			if l.Config.Paths.ContextRoot != tt.want || got.Source != tt.wantSource || got.Origin != inTestdata(t, tt.wantOrigin) {
				t.Errorf("context root %q from %s %q, want %q from %s %q",
					l.Config.Paths.ContextRoot, got.Source, got.Origin, tt.want, tt.wantSource, tt.wantOrigin)
			}
		})
	}
}

func TestForeignContextVariables(t *testing.T) {
	t.Run("empty SF_CONTEXT_REPO_ROOT counts as unset", func(t *testing.T) {
		l := mustLoad(t, map[string]string{"SF_CONTEXT_REPO_ROOT": "", "SENTRYFROGG_CONTEXT_REPO_ROOT": "/from/sentryfrogg"})
		if got := l.Config.Paths.ContextRoot; got != "/from/sentryfrogg" {
			t.Errorf("context root = %q, want /from/sentryfrogg", got)
		}
	})
	t.Run("a bad foreign value that loses is not checked", func(t *testing.T) {
		l := mustLoad(t, map[string]string{"SF_CONTEXT_REPO_ROOT": "relative", "AWBRIDGE_CONTEXT_ROOT": "/ok"})
		if got := l.Config.Paths.ContextRoot; got != "/ok" {
			t.Errorf("context root = %q, want /ok", got)
		}
	})
	t.Run("a bad foreign value that wins is an error", func(t *testing.T) {
		_, err := load(t, map[string]string{"SF_CONTEXT_REPO_ROOT": "relative"})
		want := `config: paths.context_root from SF_CONTEXT_REPO_ROOT: "relative" is not an absolute path`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
}

func TestFullFile(t *testing.T) {
	env := map[string]string{"AWBRIDGE_CONFIG": "testdata/full.toml", "HOME": "/home/tester"}
	l := mustLoad(t, env)
	want := Config{
		AW: AW{
			URL: "http://localhost:5601", Host: "desk", HostHeader: "localhost:5601", APIKey: "s3cret-token",
			Timeout: 750 * time.Millisecond, HistoryTimeout: 45 * time.Second, MaxBodyBytes: 16 << 20,
		},
		Sidecar: Sidecar{URL: "https://127.0.0.1:8788/base", Timeout: 3 * time.Second, MaxBodyBytes: 65536},
		Server:  Server{MaxLineBytes: 2 << 20, MaxInFlight: 64, HTTP: "127.0.0.1:5680", HTTPToken: "none", HTTPRetry: 5 * time.Second, Relay: "never", MaxConnections: 8},
		Paths:   Paths{ContextRoot: "/srv/context", StateDir: "/home/tester/state"},
		Log:     Log{Level: "debug"},
		Privacy: Privacy{MaxTitleLength: 120, ExcludeApps: "Signal, KeePassXC", TitleRules: "# client names\nAcme Corp => [client]\n",
			URLRules: `^https://intranet\.example\.com/.* => https://intranet.example.com/`},
		Limits:  Limits{RateLimits: "nowframe_build=5/s:10, aw_get_state=30/m", MaxStringBytes: 32 << 10, SensitiveKeys: "cookie, session_id"},
		Protect: Protect{Files: "/etc/hosts", Env: "HOME"},
	}
	want.Artifacts = Artifacts{MaxAge: 72 * time.Hour, MaxBytes: 64 << 20}
	want.Activity = Activity{Timezone: "Europe/Berlin"}
	want.Poll = Poll{Interval: 2 * time.Second, IdleInterval: time.Minute, ActiveFor: 10 * time.Minute, BucketListTTL: 15 * time.Second}
	if l.Config != want {
		t.Errorf("config\n got %+v\nwant %+v", l.Config, want)
	}
	if l.File != inTestdata(t, "testdata/full.toml") || l.FileSource != SourceEnv {
		t.Errorf("file %q from %s, want testdata/full.toml from env", l.File, l.FileSource)
	}
	if len(l.Settings) != len(table()) {
		t.Fatalf("%d settings, want %d", len(l.Settings), len(table()))
	}
	for i, s := range l.Settings {
		if s.Key != table()[i].key {
			t.Errorf("setting %d is %s, want table order (%s)", i, s.Key, table()[i].key)
		}
		if s.Source != SourceFile || s.Origin != inTestdata(t, "testdata/full.toml") {
			t.Errorf("%s from %s %q, want the file", s.Key, s.Source, s.Origin)
		}
		if s.Doc == "" || s.Kind == "" || s.Env == "" {
			t.Errorf("%s lacks doc, kind or env: %+v", s.Key, s)
		}
	}
	if err := validate(l.Config); err != nil {
		t.Errorf("a loaded config does not validate: %v", err)
	}
}

func TestSecretMasked(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset", nil, ""},
		{"from the file", map[string]string{"AWBRIDGE_CONFIG": "testdata/full.toml"}, "********"},
		{"from the env", map[string]string{"AWBRIDGE_AW_API_KEY": "env-token-123"}, "********"},
		{"set but empty", map[string]string{"AWBRIDGE_CONFIG": "testdata/full.toml", "AWBRIDGE_AW_API_KEY": ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLoad(t, tt.env)
			s := get(t, l, "activitywatch.api_key")
			if s.Value != tt.want || !s.Secret {
				t.Errorf("api_key shown as %q (secret %v), want %q", s.Value, s.Secret, tt.want)
			}
			for _, s := range l.Settings {
				if strings.Contains(s.Value, "token") {
					t.Errorf("%s shows the secret: %q", s.Key, s.Value)
				}
			}
		})
	}
	// The real value still reaches the Config.
	l := mustLoad(t, map[string]string{"AWBRIDGE_AW_API_KEY": "env-token-123"})
	if l.Config.AW.APIKey != "env-token-123" {
		t.Errorf("APIKey = %q", l.Config.AW.APIKey)
	}
}

// TestBadValues covers every kind of bad value from the environment and
// flags; bad values in files are covered by testdata/bad.
func TestBadValues(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"duration word", map[string]string{"AWBRIDGE_AW_TIMEOUT": "soon"}, nil,
			`config: activitywatch.timeout from AWBRIDGE_AW_TIMEOUT: "soon" is not a duration (e.g. 2s)`},
		{"duration zero flag", nil, []string{"--aw-timeout=0"},
			`config: activitywatch.timeout from --aw-timeout: "0" is out of range (expected more than 0 and at most 5m)`},
		{"duration too long", map[string]string{"AWBRIDGE_SIDECAR_TIMEOUT": "301s"}, nil,
			`config: sidecar.timeout from AWBRIDGE_SIDECAR_TIMEOUT: "301s" is out of range (expected more than 0 and at most 5m)`},
		{"negative retention", map[string]string{"AWBRIDGE_ARTIFACTS_MAX_AGE": "-1h"}, nil,
			`config: artifacts.max_age from AWBRIDGE_ARTIFACTS_MAX_AGE: "-1h" is out of range (expected 0 to 87600h)`},
		{"duration without unit", nil, []string{"--sidecar-timeout", "2"},
			`config: sidecar.timeout from --sidecar-timeout: "2" is not a duration (e.g. 2s)`},
		{"empty aw url", map[string]string{"AWBRIDGE_AW_URL": ""}, nil,
			`config: activitywatch.url from AWBRIDGE_AW_URL: must not be empty (expected an http(s) URL such as http://127.0.0.1:5600)`},
		{"url with path only", nil, []string{"--aw-url", "/api/0"},
			`config: activitywatch.url from --aw-url: "/api/0" is not an absolute http(s) URL (e.g. http://127.0.0.1:5600)`},
		{"url with query is not echoed", map[string]string{"AWBRIDGE_SIDECAR_URL": "http://h/?token=hunter2"}, nil,
			`config: sidecar.url from AWBRIDGE_SIDECAR_URL: the URL has a query or fragment (expected a base URL such as http://127.0.0.1:5600)`},
		{"long value is cut", map[string]string{"AWBRIDGE_AW_URL": "ftp://" + long}, nil,
			`config: activitywatch.url from AWBRIDGE_AW_URL: "ftp://` + long[:55] + `…" is not an absolute http(s) URL (e.g. http://127.0.0.1:5600)`},
		{"int word", nil, []string{"--max-in-flight", "lots"},
			`config: server.max_in_flight from --max-in-flight: "lots" is not a whole number`},
		{"int overflow", map[string]string{"AWBRIDGE_MAX_IN_FLIGHT": "99999999999999999999"}, nil,
			`config: server.max_in_flight from AWBRIDGE_MAX_IN_FLIGHT: "99999999999999999999" is out of range (expected 1 to 65536)`},
		{"title too short", map[string]string{"AWBRIDGE_MAX_TITLE_LENGTH": "8"}, nil,
			`config: privacy.max_title_length from AWBRIDGE_MAX_TITLE_LENGTH: "8" is out of range (expected 16 to 4096)`},
		{"size with a decimal unit", map[string]string{"AWBRIDGE_MAX_LINE_BYTES": "1MB"}, nil,
			`config: server.max_line_bytes from AWBRIDGE_MAX_LINE_BYTES: "1MB" is not a size in bytes (e.g. 1048576 or 1MiB)`},
		{"size too big", nil, []string{"--max-line-bytes", "65MiB"},
			`config: server.max_line_bytes from --max-line-bytes: "65MiB" is out of range (expected 1KiB to 64MiB)`},
		{"size overflow", map[string]string{"AWBRIDGE_SIDECAR_MAX_BODY_BYTES": "9999999999GiB"}, nil,
			`config: sidecar.max_body_bytes from AWBRIDGE_SIDECAR_MAX_BODY_BYTES: "9999999999GiB" is out of range (expected 1KiB to 64MiB)`},
		{"log level", map[string]string{"AWBRIDGE_LOG_LEVEL": "verbose"}, nil,
			`config: log.level from AWBRIDGE_LOG_LEVEL: "verbose" is not a log level (expected one of trace, debug, info, warn, error, disabled)`},
		{"secret is never echoed", map[string]string{"AWBRIDGE_AW_API_KEY": "hunter2 hunter3"}, nil,
			`config: activitywatch.api_key from AWBRIDGE_AW_API_KEY: the value has spaces, control characters or non-ASCII bytes (expected printable ASCII)`},
		{"host header", nil, []string{"--aw-host-header", "http://localhost"},
			`config: activitywatch.host_header from --aw-host-header: "http://localhost" is not a host or host:port (e.g. localhost:5600)`},
		{"host with a newline stays one line", map[string]string{"AWBRIDGE_AW_HOST": "a\nb"}, nil,
			`config: activitywatch.host from AWBRIDGE_AW_HOST: "a\nb" contains control characters or invalid UTF-8`},
		{"relative context root", map[string]string{"AWBRIDGE_CONTEXT_ROOT": "ctx"}, nil,
			`config: paths.context_root from AWBRIDGE_CONTEXT_ROOT: "ctx" is not an absolute path`},
		{"empty state dir", map[string]string{"AWBRIDGE_STATE_DIR": ""}, nil,
			`config: paths.state_dir from AWBRIDGE_STATE_DIR: must not be empty (expected an absolute path)`},
		{"tilde without a home", map[string]string{"HOME": ""}, []string{"--state-dir", "~/state"},
			`config: paths.state_dir from --state-dir: "~/state" starts with ~ but the home folder is unknown (HOME is unset or relative)`},
		{"no default state dir", map[string]string{"HOME": ""}, nil,
			`config: paths.state_dir from default: has no default here (the home folder is unknown); set it in the config file, AWBRIDGE_STATE_DIR or --state-dir`},
		{"a bad value that a flag overrides is still an error", map[string]string{"AWBRIDGE_AW_TIMEOUT": "soon"}, []string{"--aw-timeout", "1s"},
			`config: activitywatch.timeout from AWBRIDGE_AW_TIMEOUT: "soon" is not a duration (e.g. 2s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.env, tt.args...)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key == "" {
				t.Errorf("error %T is not a *config.Error with a key", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error is not one safe line: %q", err.Error())
			}
		})
	}
}

func TestConfigFileChoice(t *testing.T) {
	home := t.TempDir()
	defPath := filepath.Join(home, ".config", "awbridge", "config.toml")
	if err := os.MkdirAll(filepath.Dir(defPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defPath, []byte("[log]\nlevel = \"warn\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope.toml")
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantFile   string
		wantSource Source
		wantLevel  string
		wantErr    string
	}{
		{name: "default file", env: map[string]string{"HOME": home},
			wantFile: defPath, wantSource: SourceDefault, wantLevel: "warn"},
		{name: "XDG_CONFIG_HOME without a file is fine", env: map[string]string{"HOME": home, "XDG_CONFIG_HOME": t.TempDir()},
			wantLevel: "info"},
		{name: "AWBRIDGE_CONFIG set but empty: no file", env: map[string]string{"HOME": home, "AWBRIDGE_CONFIG": ""},
			wantLevel: "info"},
		{name: "--config empty: no file", env: map[string]string{"HOME": home, "AWBRIDGE_CONFIG": "testdata/full.toml"}, args: []string{"--config="},
			wantLevel: "info"},
		{name: "AWBRIDGE_CONFIG", env: map[string]string{"HOME": home, "AWBRIDGE_CONFIG": "testdata/full.toml"},
			wantFile: "testdata/full.toml", wantSource: SourceEnv, wantLevel: "debug"},
		{name: "--config", env: map[string]string{"HOME": home}, args: []string{"--config", "testdata/full.toml"},
			wantFile: "testdata/full.toml", wantSource: SourceFlag, wantLevel: "debug"},
		{name: "~ in AWBRIDGE_CONFIG", env: map[string]string{"HOME": home, "AWBRIDGE_CONFIG": "~/.config/awbridge/config.toml"},
			wantFile: defPath, wantSource: SourceEnv, wantLevel: "warn"},
		{name: "missing AWBRIDGE_CONFIG", env: map[string]string{"HOME": home, "AWBRIDGE_CONFIG": missing},
			wantErr: `config: AWBRIDGE_CONFIG: config file "` + missing + `" does not exist`},
		{name: "missing --config", env: map[string]string{"HOME": home}, args: []string{"--config", missing},
			wantErr: `config: --config: config file "` + missing + `" does not exist`},
		{name: "a folder", env: map[string]string{"HOME": home}, args: []string{"--config", home},
			wantErr: `config: --config: cannot read config file "` + home + `": is a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := load(t, tt.env, tt.args...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				var ce *Error
				if !errors.As(err, &ce) {
					t.Errorf("error %T is not a *config.Error", err)
				}
				if strings.Contains(tt.wantErr, "does not exist") && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("errors.Is(err, fs.ErrNotExist) = false")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.File != inTestdata(t, tt.wantFile) || (tt.wantFile != "" && l.FileSource != tt.wantSource) {
				t.Errorf("file %q from %s, want %q from %s", l.File, l.FileSource, tt.wantFile, tt.wantSource)
			}
			if l.Config.Log.Level != tt.wantLevel {
				t.Errorf("log level %q, want %q", l.Config.Log.Level, tt.wantLevel)
			}
		})
	}
}

func TestConfigFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.toml")
	data := []byte("# " + strings.Repeat("x", maxFileBytes) + "\n")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := load(t, map[string]string{"AWBRIDGE_CONFIG": p})
	want := `config: AWBRIDGE_CONFIG: cannot read config file "` + p + `": larger than 1MiB`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestValidate(t *testing.T) {
	good := Defaults()
	good.Paths.StateDir = "/var/lib/awbridge"
	if err := validate(good); err != nil {
		t.Fatalf("defaults with a state dir: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no state dir", func(c *Config) { c.Paths.StateDir = "" },
			`config: paths.state_dir: must not be empty (expected an absolute path)`},
		{"zero timeout", func(c *Config) { c.Sidecar.Timeout = 0 },
			`config: sidecar.timeout: "0s" is out of range (expected more than 0 and at most 5m)`},
		{"tiny line", func(c *Config) { c.Server.MaxLineBytes = 10 },
			`config: server.max_line_bytes: "10" is out of range (expected 1KiB to 64MiB)`},
		{"level", func(c *Config) { c.Log.Level = "" },
			`config: log.level: "" is not a log level (expected one of trace, debug, info, warn, error, disabled)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.mutate(&c)
			err := validate(c)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestLoadWithoutFlags(t *testing.T) {
	l, err := Load(mapEnv(map[string]string{"HOME": t.TempDir(), "AWBRIDGE_AW_URL": "http://127.0.0.1:5601"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.AW.URL != "http://127.0.0.1:5601" || l.File != "" {
		t.Errorf("url %q file %q", l.Config.AW.URL, l.File)
	}
	if _, ok := l.Get("no.such"); ok {
		t.Error("Get found a setting that does not exist")
	}
}

// validate checks every setting of c against the rules Load applies,
// reading paths with this OS's conventions: a Config Load returned, or
// Defaults, always passes.
func validate(c Config) error {
	for _, sp := range table() {
		if _, problem := sp.parse(sp.format(&c), Env{}); problem != "" {
			return &Error{Key: sp.key, Msg: problem}
		}
	}
	return nil
}
