// Package config owns awbridge's settings and where each came from:
// defaults < TOML file < environment < flags, plus the XDG paths.
//
// One table (see table.go) describes every setting once: its key in the TOML
// file, its environment variable, its flag, its kind, its bounds and its doc
// line. [Bind] registers the flags from it, and [Load] resolves each
// setting through the layers and records where the winning value came from.
// A bad value or an unknown key is reported as one [*Error] naming the key,
// where it came from and what is expected.
package config

import "time"

// Config is the effective configuration. It is a plain value: build it once
// in main and pass it (or parts of it) down. Safe to share read-only.
//
// Each field is one setting, named by its TOML tags (section.name); what it
// means, its bounds and its environment variable and flag are in the
// settings table (table.go, docs/settings.md), its default in [Defaults].
type Config struct {
	AW      AW      `toml:"activitywatch"`
	Sidecar Sidecar `toml:"sidecar"`
	Server  Server  `toml:"server"`
	Paths   Paths   `toml:"paths"`
	Log     Log     `toml:"log"`
	Privacy Privacy `toml:"privacy"`
	Limits  Limits  `toml:"limits"`
	Protect Protect `toml:"protect"`

	Artifacts Artifacts `toml:"artifacts"`
	Activity  Activity  `toml:"activity"`
	Poll      Poll      `toml:"poll"`
}

// Activity shapes activity over time (summaries, timelines, switches).
type Activity struct {
	Timezone string `toml:"timezone"` // IANA name; "": the machine's local zone
}

// Poll is the rhythm of serve's poller: a frame every Interval while
// someone is subscribed or a call came in within ActiveFor, else one every
// IdleInterval.
type Poll struct {
	Interval      time.Duration `toml:"interval"`
	IdleInterval  time.Duration `toml:"idle_interval"`
	ActiveFor     time.Duration `toml:"active_for"`
	BucketListTTL time.Duration `toml:"bucket_list_ttl"`
}

// Artifacts bounds what the context root keeps (0: no limit).
type Artifacts struct {
	MaxAge   time.Duration `toml:"max_age"`
	MaxBytes int64         `toml:"max_bytes"`
}

// Protect lists what the protected-environment baseline covers besides
// the config file, the executable and the service unit (comma-separated).
type Protect struct {
	Files string `toml:"files"`
	Env   string `toml:"env"`
}

// Limits holds the per-tool policies.
type Limits struct {
	RateLimits     string `toml:"rate_limits"` // see ParseRateLimits
	MaxStringBytes int64  `toml:"max_string_bytes"`
	SensitiveKeys  string `toml:"sensitive_keys"` // comma-separated
}

// AW is how to reach ActivityWatch.
type AW struct {
	URL  string `toml:"url"`
	Host string `toml:"host"`
	// HostHeader overrides the Host header: aw-server answers /api/* with
	// 400 unless Host is localhost, 127.0.0.1 or its own --host value.
	HostHeader     string        `toml:"host_header"`
	APIKey         string        `toml:"api_key"` // secret
	Timeout        time.Duration `toml:"timeout"`
	HistoryTimeout time.Duration `toml:"history_timeout"`
	MaxBodyBytes   int64         `toml:"max_body_bytes"`
}

// Sidecar is the optional /probe sidecar ("" URL: none).
type Sidecar struct {
	URL          string        `toml:"url"`
	Timeout      time.Duration `toml:"timeout"`
	MaxBodyBytes int64         `toml:"max_body_bytes"`
}

// Server bounds each connection and says where serve listens.
type Server struct {
	MaxLineBytes   int           `toml:"max_line_bytes"`
	MaxInFlight    int           `toml:"max_in_flight"`
	HTTP           string        `toml:"http"` // loopback HOST:PORT; "": off
	MaxConnections int           `toml:"max_connections"`
	Relay          string        `toml:"relay"`      // auto, never, 1, 0
	HTTPToken      string        `toml:"http_token"` // file, none
	HTTPRetry      time.Duration `toml:"http_retry"`
}

// Paths are the folders awbridge writes to.
type Paths struct {
	ContextRoot string `toml:"context_root"` // "": no artifacts
	StateDir    string `toml:"state_dir"`
}

// Log configures the stderr logger.
type Log struct {
	Level string `toml:"level"`
}

// Privacy holds the privacy settings of frames and activity.
type Privacy struct {
	MaxTitleLength int    `toml:"max_title_length"` // in characters
	ExcludeApps    string `toml:"exclude_apps"`     // see ExcludedApps
	// TitleRules and URLRules rewrite titles and URLs (see ParseRules).
	TitleRules string `toml:"title_rules"`
	URLRules   string `toml:"url_rules"`
}

// Defaults returns the built-in configuration (paths not yet resolved:
// [Load] fills Paths.StateDir from [DefaultStateDir]).
func Defaults() Config {
	var c Config
	for _, sp := range table() {
		if sp.def != "" {
			v, _ := sp.parse(sp.def, Env{}) // TestTableCoversConfig checks it parses
			sp.set(&c, v)
		}
	}
	return c
}
