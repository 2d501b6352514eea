package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestListsAsTOMLArrays loads a real file that writes every list setting
// as a TOML array, and checks each reaches the Config in the form its
// users read (comma- or newline-separated) and is shown as a list.
func TestListsAsTOMLArrays(t *testing.T) {
	home := t.TempDir()
	l := mustLoad(t, map[string]string{"HOME": home, "AWBRIDGE_CONFIG": "testdata/arrays.toml"})
	dir := filepath.Dir(inTestdata(t, "testdata/arrays.toml"))
	c := l.Config
	if got := c.Privacy.ExcludedApps(); !slices.Equal(got, []string{"1Password", "Signal"}) {
		t.Errorf("excluded apps %q", got)
	}
	rules, err := ParseRules(c.Privacy.TitleRules)
	if err != nil || len(rules) != 2 || rules[0].Pattern.String() != "Acme Corp" || rules[1].Replacement != "[payroll]" {
		t.Errorf("title rules %q: %v", c.Privacy.TitleRules, err)
	}
	if rules, err := ParseRules(c.Privacy.URLRules); err != nil || len(rules) != 1 {
		t.Errorf("url rules %q: %v", c.Privacy.URLRules, err)
	}
	rates, err := ParseRateLimits(c.Limits.RateLimits)
	if err != nil || rates["nowframe_build"] != (Rate{PerSecond: 5, Burst: 10}) || rates["aw_get_state"].PerSecond != 0.5 {
		t.Errorf("rate limits %q: %v %v", c.Limits.RateLimits, rates, err)
	}
	if c.Limits.SensitiveKeys != "cookie,session_id" {
		t.Errorf("sensitive keys %q", c.Limits.SensitiveKeys)
	}
	// A relative path in the file is taken against the file's folder.
	wantFiles := "/etc/hosts," + filepath.Join(dir, "notes", "watched.txt") + "," + filepath.Join(home, ".profile")
	if c.Protect.Files != wantFiles {
		t.Errorf("protect files %q, want %q", c.Protect.Files, wantFiles)
	}
	if c.Protect.Env != "HOME,PATH" {
		t.Errorf("protect env %q", c.Protect.Env)
	}
	wantItems := map[string][]string{
		"privacy.exclude_apps":  {"1Password", "Signal"},
		"privacy.title_rules":   {"Acme Corp => [client]", "(?i)payroll.* => [payroll]"},
		"limits.rate_limits":    {"nowframe_build=5/s:10", "aw_get_state=30/m"},
		"limits.sensitive_keys": {"cookie", "session_id"},
		"protect.env":           {"HOME", "PATH"},
		"protect.files":         {"/etc/hosts", filepath.Join(dir, "notes", "watched.txt"), filepath.Join(home, ".profile")},
	}
	for key, want := range wantItems {
		s := get(t, l, key)
		if !s.List || !slices.Equal(s.Items, want) || s.Source != SourceFile {
			t.Errorf("%s: list %v items %q from %s, want %q from the file", key, s.List, s.Items, s.Source, want)
		}
	}
	if s := get(t, l, "activitywatch.url"); s.List || s.Items != nil {
		t.Errorf("activitywatch.url is shown as a list")
	}
}

// TestListsAsStrings checks the older forms keep working: a string in the
// file, comma- and newline-separated text in the environment.
func TestListsAsStrings(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"AWBRIDGE_CONFIG":         inTestdata(t, "testdata/full.toml"),
		"AWBRIDGE_EXCLUDE_APPS":   "1Password, Signal",
		"AWBRIDGE_TITLE_RULES":    "Acme Corp => [client]\nGlobex => [client];;Initech => [client]",
		"AWBRIDGE_RATE_LIMITS":    "nowframe_build=5/s:10,aw_get_state=30/m",
		"AWBRIDGE_SENSITIVE_KEYS": "cookie,session_id",
		"AWBRIDGE_PROTECT_FILES":  "/etc/hosts, rel.txt",
		"AWBRIDGE_PROTECT_ENV":    "HOME,PATH",
	}
	fs, f := flagsFor(t)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	e := mapEnv(withHome(t, env))
	e.Dir = dir
	l, err := Load(e, f)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]string{
		"privacy.exclude_apps":  {"1Password", "Signal"},
		"privacy.title_rules":   {"Acme Corp => [client]", "Globex => [client]", "Initech => [client]"},
		"limits.rate_limits":    {"nowframe_build=5/s:10", "aw_get_state=30/m"},
		"limits.sensitive_keys": {"cookie", "session_id"},
		"protect.env":           {"HOME", "PATH"},
		// A relative path in the environment is taken against the working directory.
		"protect.files": {"/etc/hosts", filepath.Join(dir, "rel.txt")},
	} {
		if s := get(t, l, key); !slices.Equal(s.Items, want) || s.Source != SourceEnv {
			t.Errorf("%s: items %q from %s, want %q from the environment", key, s.Items, s.Source, want)
		}
	}
	// The file's strings (full.toml) without the environment.
	l = mustLoad(t, map[string]string{"AWBRIDGE_CONFIG": "testdata/full.toml"})
	if got := l.Config.Privacy.ExcludedApps(); !slices.Equal(got, []string{"Signal", "KeePassXC"}) {
		t.Errorf("excluded apps from a string %q", got)
	}
	if s := get(t, l, "privacy.title_rules"); !slices.Equal(s.Items, []string{"Acme Corp => [client]"}) {
		t.Errorf("title rules from a string %q", s.Items)
	}
}

// TestRelativeConfigPath checks that a relative --config or
// AWBRIDGE_CONFIG is made absolute against the working directory, so that
// whatever uses the path later (the protection baseline, the service
// unit) gets an absolute one.
func TestRelativeConfigPath(t *testing.T) {
	wd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(wd, "conf"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(wd, "conf", "awbridge.toml")
	if err := os.WriteFile(file, []byte("[log]\nlevel = \"warn\"\n[protect]\nfiles = [\"watched.txt\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"AWBRIDGE_CONFIG", map[string]string{"AWBRIDGE_CONFIG": "conf/awbridge.toml"}, nil},
		{"--config", nil, []string{"--config", "conf/../conf/awbridge.toml"}},
		{"--config ./", nil, []string{"--config=./conf/awbridge.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, f := flagsFor(t)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			e := mapEnv(withHome(t, tt.env))
			e.Dir = wd
			l, err := Load(e, f)
			if err != nil {
				t.Fatal(err)
			}
			if l.File != file || l.LookedFor != file || l.Config.Log.Level != "warn" {
				t.Errorf("file %q (looked for %q), level %q; want %q", l.File, l.LookedFor, l.Config.Log.Level, file)
			}
			if s := get(t, l, "log.level"); s.Origin != file {
				t.Errorf("origin %q, want %q", s.Origin, file)
			}
			if want := filepath.Join(wd, "conf", "watched.txt"); l.Config.Protect.Files != want {
				t.Errorf("protect.files %q, want %q (beside the file)", l.Config.Protect.Files, want)
			}
		})
	}
	// Without Env.Dir, the process's working directory.
	l := mustLoad(t, map[string]string{"AWBRIDGE_CONFIG": "testdata/partial.toml"})
	if want := inTestdata(t, "testdata/partial.toml"); l.File != want {
		t.Errorf("file %q, want %q", l.File, want)
	}
}

// TestConfigFileLookedFor checks which file Load says it looked for.
func TestConfigFileLookedFor(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name       string
		env        map[string]string
		wantLooked string
		wantSource Source
	}{
		{"default, missing", map[string]string{"HOME": home},
			filepath.Join(home, ".config", "awbridge", "config.toml"), SourceDefault},
		{"turned off", map[string]string{"HOME": home, "AWBRIDGE_CONFIG": ""}, "", SourceEnv},
		{"no home", map[string]string{"AWBRIDGE_STATE_DIR": "/st"}, "", SourceDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Load(mapEnv(tt.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			if l.File != "" || l.LookedFor != tt.wantLooked || l.FileSource != tt.wantSource {
				t.Errorf("file %q looked for %q from %s, want none, %q from %s", l.File, l.LookedFor, l.FileSource, tt.wantLooked, tt.wantSource)
			}
		})
	}
}

func TestServerHTTPIsLoopback(t *testing.T) {
	tests := []struct{ in, problem string }{
		{"127.0.0.1:8765", ""},
		{"127.0.0.2:0", ""},
		{"localhost:8765", ""},
		{"LOCALHOST:1", ""},
		{"[::1]:8765", ""},
		{"", ""},
		{"0.0.0.0:8765", `"0.0.0.0:8765" is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)`},
		{"[::]:8765", `"[::]:8765" is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)`},
		{"192.168.1.10:80", `"192.168.1.10:80" is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)`},
		{"localhost.example.com:80", `"localhost.example.com:80" is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)`},
		{":8765", `":8765" is not HOST:PORT (e.g. 127.0.0.1:8765)`},
		{"127.0.0.1", `"127.0.0.1" is not HOST:PORT (e.g. 127.0.0.1:8765)`},
		{"127.0.0.1:99999", `"127.0.0.1:99999" has an invalid port (expected 0 to 65535; 0 picks a free one)`},
	}
	var sp spec
	for _, s := range table() {
		if s.key == "server.http" {
			sp = s
		}
	}
	for _, tt := range tests {
		if _, problem := sp.parse(tt.in, mapEnv(nil)); problem != tt.problem {
			t.Errorf("%q: problem %q, want %q", tt.in, problem, tt.problem)
		}
	}
	_, err := load(t, map[string]string{"AWBRIDGE_HTTP": "0.0.0.0:8765"})
	if err == nil || err.Error() != `config: server.http from AWBRIDGE_HTTP: "0.0.0.0:8765" is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)` {
		t.Errorf("err = %v", err)
	}
}
