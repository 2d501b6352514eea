package config

import (
	"flag"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestTableCoversConfig checks that every Config field has exactly one
// setting whose key is the field's TOML path and whose accessor points at
// that very field, so the table and the struct cannot drift apart.
func TestTableCoversConfig(t *testing.T) {
	var c Config
	fields := map[string]uintptr{} // key -> field address
	root := reflect.ValueOf(&c).Elem()
	for i := 0; i < root.NumField(); i++ {
		sec := root.Type().Field(i).Tag.Get("toml")
		sv := root.Field(i)
		for j := 0; j < sv.NumField(); j++ {
			fields[sec+"."+sv.Type().Field(j).Tag.Get("toml")] = sv.Field(j).Addr().Pointer()
		}
	}
	seen := map[string]bool{}
	for _, sp := range table() {
		if seen[sp.key] {
			t.Errorf("%s appears twice in the table", sp.key)
		}
		seen[sp.key] = true
		if _, problem := sp.parse(sp.def, Env{}); sp.def != "" && problem != "" {
			t.Errorf("the default of %s: %s", sp.key, problem)
		}
		addr, ok := fields[sp.key]
		if !ok {
			t.Errorf("table key %s is not a Config field", sp.key)
			continue
		}
		if got := sp.field(&c); !got.CanAddr() || got.Addr().Pointer() != addr {
			t.Errorf("%s points at the wrong Config field", sp.key)
		}
	}
	for key := range fields {
		if !seen[key] {
			t.Errorf("Config field %s has no setting", key)
		}
	}
}

// TestNames pins the public names: environment variables and flags are an
// interface people type and scripts depend on.
func TestNames(t *testing.T) {
	want := map[string][2]string{ // key -> env, flag
		"activitywatch.url":             {"AWBRIDGE_AW_URL", "aw-url"},
		"activitywatch.host":            {"AWBRIDGE_AW_HOST", "aw-host"},
		"activitywatch.host_header":     {"AWBRIDGE_AW_HOST_HEADER", "aw-host-header"},
		"activitywatch.api_key":         {"AWBRIDGE_AW_API_KEY", ""},
		"activitywatch.timeout":         {"AWBRIDGE_AW_TIMEOUT", "aw-timeout"},
		"activitywatch.history_timeout": {"AWBRIDGE_AW_HISTORY_TIMEOUT", "aw-history-timeout"},
		"activitywatch.max_body_bytes":  {"AWBRIDGE_AW_MAX_BODY_BYTES", ""},
		"sidecar.url":                   {"AWBRIDGE_SIDECAR_URL", "sidecar-url"},
		"sidecar.timeout":               {"AWBRIDGE_SIDECAR_TIMEOUT", "sidecar-timeout"},
		"sidecar.max_body_bytes":        {"AWBRIDGE_SIDECAR_MAX_BODY_BYTES", ""},
		"server.max_line_bytes":         {"AWBRIDGE_MAX_LINE_BYTES", "max-line-bytes"},
		"server.max_in_flight":          {"AWBRIDGE_MAX_IN_FLIGHT", "max-in-flight"},
		"paths.context_root":            {"AWBRIDGE_CONTEXT_ROOT", "context-root"},
		"paths.state_dir":               {"AWBRIDGE_STATE_DIR", "state-dir"},
		"limits.rate_limits":            {"AWBRIDGE_RATE_LIMITS", "rate-limits"},
		"server.max_connections":        {"AWBRIDGE_MAX_CONNECTIONS", ""},
		"server.relay":                  {"AWBRIDGE_RELAY", ""},
		"server.http":                   {"AWBRIDGE_HTTP", "http"},
		"server.http_token":             {"AWBRIDGE_HTTP_TOKEN", ""},
		"server.http_retry":             {"AWBRIDGE_HTTP_RETRY", ""},
		"protect.files":                 {"AWBRIDGE_PROTECT_FILES", ""},
		"protect.env":                   {"AWBRIDGE_PROTECT_ENV", ""},
		"limits.max_string_bytes":       {"AWBRIDGE_MAX_STRING_BYTES", ""},
		"limits.sensitive_keys":         {"AWBRIDGE_SENSITIVE_KEYS", ""},
		"log.level":                     {"AWBRIDGE_LOG_LEVEL", "log-level"},
		"privacy.max_title_length":      {"AWBRIDGE_MAX_TITLE_LENGTH", ""},
		"privacy.exclude_apps":          {"AWBRIDGE_EXCLUDE_APPS", ""},
		"privacy.title_rules":           {"AWBRIDGE_TITLE_RULES", ""},
		"privacy.url_rules":             {"AWBRIDGE_URL_RULES", ""},
		"artifacts.max_age":             {"AWBRIDGE_ARTIFACTS_MAX_AGE", ""},
		"artifacts.max_bytes":           {"AWBRIDGE_ARTIFACTS_MAX_BYTES", ""},
		"activity.timezone":             {"AWBRIDGE_TIMEZONE", ""},
		"poll.interval":                 {"AWBRIDGE_POLL_INTERVAL", ""},
		"poll.idle_interval":            {"AWBRIDGE_POLL_IDLE_INTERVAL", ""},
		"poll.active_for":               {"AWBRIDGE_POLL_ACTIVE_FOR", ""},
		"poll.bucket_list_ttl":          {"AWBRIDGE_POLL_BUCKET_LIST_TTL", ""},
	}
	got := map[string][2]string{}
	for _, sp := range table() {
		got[sp.key] = [2]string{sp.env, sp.flag}
		if sp.secret() && sp.flag != "" {
			t.Errorf("secret %s has a flag", sp.key)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names\n got %v\nwant %v", got, want)
	}

	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	Bind(fs)
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	wantFlags := []string{"config"}
	for _, v := range want {
		if v[1] != "" {
			wantFlags = append(wantFlags, v[1])
		}
	}
	sort.Strings(wantFlags)
	if !reflect.DeepEqual(flags, wantFlags) {
		t.Errorf("flags\n got %v\nwant %v", flags, wantFlags)
	}
}

// TestDefaultsValid checks that every built-in default passes its own rule
// and prints as the usage text promises.
func TestDefaultsValid(t *testing.T) {
	c := Defaults()
	c.Paths.StateDir = "/state"
	if err := validate(c); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var b strings.Builder
	fs.SetOutput(&b)
	Bind(fs)
	fs.PrintDefaults()
	for _, want := range []string{
		"-aw-timeout duration",
		"env AWBRIDGE_AW_TIMEOUT, default 2s)",
		"-max-line-bytes bytes",
		"default 1MiB)",
		"default $XDG_STATE_HOME/awbridge)",
		"-config file",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, b.String())
		}
	}
}

// TestBindTwoSubcommands checks each FlagSet gets its own values.
func TestBindTwoSubcommands(t *testing.T) {
	a := flag.NewFlagSet("a", flag.ContinueOnError)
	b := flag.NewFlagSet("b", flag.ContinueOnError)
	a.SetOutput(io.Discard)
	fa, fb := Bind(a), Bind(b)
	if err := a.Parse([]string{"--aw-timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	env := mapEnv(map[string]string{"HOME": t.TempDir()})
	la, err := Load(env, fa)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := Load(env, fb)
	if err != nil {
		t.Fatal(err)
	}
	if la.Config.AW.Timeout != 3*time.Second || lb.Config.AW.Timeout != 2*time.Second {
		t.Errorf("timeouts %v and %v, want 3s and 2s", la.Config.AW.Timeout, lb.Config.AW.Timeout)
	}
	if err := a.Parse([]string{"--api-key", "x"}); err == nil {
		t.Error("a secret was accepted as a flag")
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"1024B", 1024, true},
		{"64KiB", 64 << 10, true},
		{"1 MiB", 1 << 20, true},
		{"2gib", 2 << 30, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"1MB", 0, false},
		{"1.5MiB", 0, false},
		{"-1", 0, false},
		{"1  MiB", 0, false},
		{" 1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseBytes(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok {
			if back, _ := parseBytes(formatBytes(got)); back != got {
				t.Errorf("formatBytes(%d) = %q does not read back", got, formatBytes(got))
			}
		}
	}
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1024: "1KiB", 1536: "1536", 3 << 20: "3MiB", 1 << 30: "1GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestURLs(t *testing.T) {
	tests := []struct{ in, want, problem string }{
		{"http://127.0.0.1:5600", "http://127.0.0.1:5600", ""},
		{"HTTP://LocalHost:5600/", "http://LocalHost:5600", ""},
		{"https://aw.example/base//", "https://aw.example/base", ""},
		{"http://[::1]:5600", "http://[::1]:5600", ""},
		{"http://h/a b", "http://h/a%20b", ""},
		{"http://h:", "", `"http://h:" has an invalid port (expected 1 to 65535)`},
		{"http://h:0", "", `"http://h:0" has an invalid port (expected 1 to 65535)`},
		{"http://h/?", "", "the URL has a query or fragment (expected a base URL such as http://127.0.0.1:5600)"},
		{"http://h/#", "", "the URL has a query or fragment (expected a base URL such as http://127.0.0.1:5600)"},
		{"http://u@h", "", "the URL has a user name or password in it (expected a base URL such as http://127.0.0.1:5600)"},
		{"mailto:a@b", "", `"mailto:a@b" is not an absolute http(s) URL (e.g. http://127.0.0.1:5600)`},
		{"http://a b", "", `"http://a b" is not an absolute http(s) URL (e.g. http://127.0.0.1:5600)`},
		{"http:///path", "", `"http:///path" has no host (e.g. http://127.0.0.1:5600)`},
	}
	sp := spec{key: "activitywatch.url", kind: kindURL, maxLen: maxURLLen}
	for _, tt := range tests {
		v, problem := sp.parse(tt.in, Env{})
		if problem != tt.problem || (problem == "" && v.(string) != tt.want) {
			t.Errorf("parse(%q) = %v, %q; want %q, %q", tt.in, v, problem, tt.want, tt.problem)
		}
	}
}
