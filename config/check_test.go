package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestCheckTools(t *testing.T) {
	tools := []string{"help", "state", "nowframe_build", "nowframe_history", "aw_get_state"}
	tests := []struct{ rates, want string }{
		{"", ""},
		{"nowframe_build=5/s:10,aw_get_state=30/m", ""},
		{"nowframe_biuld=5/s", `config: limits.rate_limits from AWBRIDGE_RATE_LIMITS: no tool is named "nowframe_biuld" (did you mean nowframe_build?)`},
		{"nowframe=5/s", `config: limits.rate_limits from AWBRIDGE_RATE_LIMITS: no tool is named "nowframe" (did you mean nowframe_build or nowframe_history?)`},
		{"nowframe.build=5/s", `config: limits.rate_limits from AWBRIDGE_RATE_LIMITS: no tool is named "nowframe.build" (did you mean nowframe_build?)`},
		{"state=1/s,x=1/s", `config: limits.rate_limits from AWBRIDGE_RATE_LIMITS: no tool is named "x" (the tools are help, state, nowframe_build, nowframe_history, aw_get_state)`},
	}
	for _, tt := range tests {
		l := mustLoad(t, map[string]string{"AWBRIDGE_RATE_LIMITS": tt.rates})
		err := l.CheckTools(tools)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q: %s, want %s", tt.rates, got, tt.want)
		}
	}
}

func TestUnknownEnv(t *testing.T) {
	got := UnknownEnv([]string{"HOME", "AWBRIDGE_AW_URL", "AWBRIDGE_CONFIG", "AWBRIDGE_SOCKET", "AWBRIDGE_AW_TIMOUT",
		"AWBRIDGE_aw_url", "AWBRIDGE_NOPE", "AWBRIDGE_CPUPROFILE", "AWBRIDGE_PROFILE", "awbridge_aw_url"}, "AWBRIDGE_CPUPROFILE")
	want := []string{
		"AWBRIDGE_AW_TIMOUT is not a variable awbridge reads (did you mean AWBRIDGE_AW_TIMEOUT?): it is ignored",
		"AWBRIDGE_NOPE is not a variable awbridge reads: it is ignored",
		"AWBRIDGE_PROFILE is not a variable awbridge reads: it is ignored",
		"AWBRIDGE_aw_url is not a variable awbridge reads (did you mean AWBRIDGE_AW_URL?): it is ignored",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestSettingShown checks how a setting is printed: integers bare, sizes
// as written, lists as arrays; in JSON, numbers and arrays.
func TestSettingShown(t *testing.T) {
	l := mustLoad(t, map[string]string{"AWBRIDGE_CONFIG": "testdata/arrays.toml", "AWBRIDGE_MAX_LINE_BYTES": "2048"})
	tests := []struct{ key, toml, json string }{
		{"server.max_in_flight", `1024`, `1024`},
		{"privacy.max_title_length", `300`, `300`},
		{"server.max_line_bytes", `"2KiB"`, `2048`},
		{"activitywatch.max_body_bytes", `"8MiB"`, `8388608`},
		{"activitywatch.timeout", `"2s"`, `"2s"`},
		{"activitywatch.url", `"http://127.0.0.1:5600"`, `"http://127.0.0.1:5600"`},
		{"privacy.exclude_apps", `["1Password", "Signal"]`, `["1Password","Signal"]`},
		{"privacy.url_rules", `["^https://intranet\\.example\\.com/.* => https://intranet.example.com/"]`,
			`["^https://intranet\\.example\\.com/.* => https://intranet.example.com/"]`},
		{"sidecar.url", `""`, `""`},
	}
	for _, tt := range tests {
		s := get(t, l, tt.key)
		if got := s.TOML(); got != tt.toml {
			t.Errorf("%s: TOML %s, want %s", tt.key, got, tt.toml)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		var v struct{ Value json.RawMessage }
		if err := json.Unmarshal(b, &v); err != nil || string(v.Value) != tt.json {
			t.Errorf("%s: JSON value %s, want %s (%v)", tt.key, v.Value, tt.json, err)
		}
	}
	l = mustLoad(t, map[string]string{"AWBRIDGE_AW_API_KEY": "tok-123"})
	s := get(t, l, "activitywatch.api_key")
	if s.TOML() != `"********"` {
		t.Errorf("secret shown as %s", s.TOML())
	}
	if v, _ := l.Unmasked("activitywatch.api_key"); v != "tok-123" {
		t.Errorf("Unmasked = %q", v)
	}
}
