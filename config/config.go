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

// Activity shapes activity over time (summaries, timelines, recent
// switches read from ActivityWatch's history).
type Activity struct {
	// Timezone is the IANA time zone whose days activity is counted in,
	// e.g. "Europe/Berlin"; "" (the default): the machine's local zone.
	Timezone string `toml:"timezone"`
}

// Poll is the rhythm of serve's poller: a frame every Interval while
// someone is subscribed to the frame or health or a call came in within
// ActiveFor, else one every IdleInterval.
type Poll struct {
	// Interval is the active rhythm (default 1s).
	Interval time.Duration `toml:"interval"`
	// IdleInterval is the rhythm at rest (default 30s).
	IdleInterval time.Duration `toml:"idle_interval"`
	// ActiveFor is how long after a call the active rhythm holds
	// (default 5m).
	ActiveFor time.Duration `toml:"active_for"`
	// BucketListTTL is how long serve reuses ActivityWatch's server info
	// and bucket list between reads (default 10s), for frames and (with
	// the settings) for the activity tools; a missing window bucket or an
	// event read of an unknown bucket reads them at once.
	BucketListTTL time.Duration `toml:"bucket_list_ttl"`
}

// Artifacts bounds what the context root keeps: every process that runs an
// engine (serve, stdio without a service, a terminal command) prunes whole
// run folders, oldest first, when it starts, at most once every 10 minutes
// between them; serve again every 10 minutes.
type Artifacts struct {
	// MaxAge is how long a run's artifacts are kept after it was last
	// written (default 168h, 7 days); 0: no age limit.
	MaxAge time.Duration `toml:"max_age"`
	// MaxBytes bounds all runs together (default 256 MiB); 0: no size
	// limit. Runs written in the last 5 minutes are kept whatever the
	// limits.
	MaxBytes int64 `toml:"max_bytes"`
}

// Protect lists what the protected-environment baseline covers besides
// the config file, the executable and the service unit.
type Protect struct {
	// Files are more files to watch (comma-separated paths).
	Files string `toml:"files"`
	// Env are environment variable names to watch (comma-separated); only
	// salted hashes of their values are recorded.
	Env string `toml:"env"`
}

// Limits holds the per-tool policies.
type Limits struct {
	// RateLimits is "tool=N/s[:burst],tool=N/m": a token bucket per tool
	// (off by default). ParseRateLimits reads it.
	RateLimits string `toml:"rate_limits"`
	// MaxStringBytes bounds every string a result carries: a longer one
	// becomes {truncated, bytes, sha256, preview, tail, artifact}
	// (default 16 KiB).
	MaxStringBytes int64 `toml:"max_string_bytes"`
	// SensitiveKeys are more key names whose values are redacted, besides
	// password, secret, token, api_key, authorization, private_key...
	// (comma-separated; default none).
	SensitiveKeys string `toml:"sensitive_keys"`
}

// AW is how to reach ActivityWatch.
type AW struct {
	// URL is the server's base URL, default http://127.0.0.1:5600.
	URL string `toml:"url"`
	// Host names whose buckets to read; "" means ActivityWatch's own
	// hostname, else the most recently updated bucket's host.
	Host string `toml:"host"`
	// HostHeader overrides the Host header sent to ActivityWatch ("" sends
	// the URL's host). aw-server answers /api/* with 400 unless Host is
	// localhost, 127.0.0.1 or its own --host value, so reaching it by
	// another name (a tunnel, a container address) may need
	// "localhost:5600" here.
	HostHeader string `toml:"host_header"`
	// APIKey is sent as a bearer token (aw-server-rust with auth); when ""
	// it is read from aw-server-rust's config.toml if present. Secret.
	APIKey string `toml:"api_key"`
	// Timeout is the per-source deadline including retries (default 2s).
	Timeout time.Duration `toml:"timeout"`
	// HistoryTimeout is the deadline of one read of stored events for the
	// activity tools (a bucket's day; default 30s): history has its own
	// deadline and breaker, apart from the live frame's.
	HistoryTimeout time.Duration `toml:"history_timeout"`
	// MaxBodyBytes bounds every response body (default 8 MiB).
	MaxBodyBytes int64 `toml:"max_body_bytes"`
}

// Sidecar is the optional /probe sidecar.
type Sidecar struct {
	// URL is the sidecar's base URL; "" (the default) means no sidecar.
	URL string `toml:"url"`
	// Timeout is the per-source deadline including retries (default 2s).
	Timeout time.Duration `toml:"timeout"`
	// MaxBodyBytes bounds the probe object (default 1 MiB).
	MaxBodyBytes int64 `toml:"max_body_bytes"`
}

// Server bounds each connection.
type Server struct {
	// MaxLineBytes is the longest accepted JSON-RPC line (default 1 MiB).
	MaxLineBytes int `toml:"max_line_bytes"`
	// MaxInFlight caps concurrent calls per connection (default 1024);
	// beyond it reading pauses.
	MaxInFlight int `toml:"max_in_flight"`
	// HTTP is the loopback HOST:PORT of serve's HTTP endpoint (Streamable
	// HTTP MCP, /healthz, /v1/nowframe); "" (default): off.
	HTTP string `toml:"http"`
	// MaxConnections caps the connections serve answers at once (default
	// 64); one more gets an error line.
	MaxConnections int `toml:"max_connections"`
	// Relay is "auto" (default: `awbridge stdio` and the terminal commands
	// use the running service when it answers) or "never".
	Relay string `toml:"relay"`
	// HTTPToken is "file" (default: a bearer token in
	// <state_dir>/http-token, made at first start) or "none".
	HTTPToken string `toml:"http_token"`
	// HTTPRetry is how often serve tries again to listen on HTTP when its
	// port was in use at start (default 30s); the Unix socket serves
	// meanwhile.
	HTTPRetry time.Duration `toml:"http_retry"`
}

// Paths are the folders awbridge writes to.
type Paths struct {
	// ContextRoot is the artifact root; "" disables artifacts.
	ContextRoot string `toml:"context_root"`
	// StateDir holds persistent state (default $XDG_STATE_HOME/awbridge).
	StateDir string `toml:"state_dir"`
}

// Log configures the stderr logger.
type Log struct {
	// Level is trace, debug, info, warn, error or disabled (default info).
	Level string `toml:"level"`
}

// Privacy holds the privacy defaults that are configurable now.
type Privacy struct {
	// MaxTitleLength caps window and tab titles, in characters (default 300).
	MaxTitleLength int `toml:"max_title_length"`
	// ExcludeApps are apps (comma-separated, case-insensitive) whose
	// windows the frame says are excluded, never showing their titles;
	// excluding a browser also hides its tabs.
	ExcludeApps string `toml:"exclude_apps"`
	// TitleRules and URLRules rewrite window and tab titles and URLs:
	// one "PATTERN => REPLACEMENT" per line (see ParseRules).
	TitleRules string `toml:"title_rules"`
	URLRules   string `toml:"url_rules"`
}

// Defaults returns the built-in configuration (paths not yet resolved:
// [Load] fills Paths.StateDir from [DefaultStateDir]).
func Defaults() Config {
	return Config{
		AW: AW{
			URL:            "http://127.0.0.1:5600",
			Timeout:        2 * time.Second,
			HistoryTimeout: 30 * time.Second,
			MaxBodyBytes:   8 << 20,
		},
		Sidecar: Sidecar{
			Timeout:      2 * time.Second,
			MaxBodyBytes: 1 << 20,
		},
		Server: Server{
			MaxLineBytes:   1 << 20,
			MaxInFlight:    1024,
			HTTPToken:      "file",
			HTTPRetry:      30 * time.Second,
			MaxConnections: 64,
			Relay:          "auto",
		},
		Log:     Log{Level: "info"},
		Privacy: Privacy{MaxTitleLength: 300},
		Limits:  Limits{MaxStringBytes: 16 << 10},

		Artifacts: Artifacts{MaxAge: 7 * 24 * time.Hour, MaxBytes: 256 << 20},
		Poll:      Poll{Interval: time.Second, IdleInterval: 30 * time.Second, ActiveFor: 5 * time.Minute, BucketListTTL: 10 * time.Second},
	}
}
