package config

import (
	"slices"
	"strings"
	"time"
)

// kind is how a setting's text is read and checked.
type kind int

const (
	kindText     kind = iota // free printable text (a host name)
	kindHostPort             // a Host header value: host or host:port
	kindSecret               // a token: printable ASCII, never echoed
	kindURL                  // an absolute http(s) base URL
	kindDuration             // Go duration syntax: 2s, 750ms
	kindInt                  // a whole number
	kindBytes                // a size: 1048576 or 1MiB
	kindPath                 // an absolute path; ~ is the home folder
	kindLevel                // a log level
	kindRates                // per-tool rate limits: tool=N/s[:burst],...
	kindChoice               // one of spec.choices
	kindRules                // privacy rewrite rules (ParseRules)
	kindPaths                // comma-separated paths, made absolute
	kindLoopback             // a loopback HOST:PORT to listen on
	kindTimezone             // an IANA time zone name (parseTimezone)
)

// String names the kind for docs and for [Setting.Kind].
func (k kind) String() string {
	switch k {
	case kindText:
		return "string"
	case kindHostPort:
		return "host"
	case kindSecret:
		return "secret"
	case kindURL:
		return "url"
	case kindDuration:
		return "duration"
	case kindInt:
		return "int"
	case kindBytes:
		return "bytes"
	case kindPath:
		return "path"
	case kindLevel:
		return "level"
	case kindRates:
		return "rate limits"
	case kindChoice:
		return "choice"
	case kindRules:
		return "rules"
	case kindPaths:
		return "paths"
	case kindLoopback:
		return "loopback address"
	case kindTimezone:
		return "time zone"
	}
	return "unknown"
}

// spec describes one setting. Every setting appears exactly once in table;
// Bind, Load and the docs all read it from there.
type spec struct {
	key  string // section.name, as in the TOML file
	env  string // environment variable above the file; "" for none
	flag string // flag name without dashes; "" for none (secrets)
	// lowEnv are foreign variables below the file, highest first; empty
	// values count as unset and they are checked only when they win.
	lowEnv []string
	kind   kind
	doc    string
	secret bool // shown masked, never echoed in errors, never a flag
	// optional allows "" (no sidecar, no artifacts, ActivityWatch's own host).
	optional bool
	// min and max bound ints, sizes (bytes) and durations (nanoseconds);
	// maxLen bounds text kinds (bytes).
	min, max int64
	maxLen   int
	// choices are the values a kindChoice accepts.
	choices []string
	// sep makes the setting a list: the file may give a TOML array of
	// strings, whose items are joined with sep ("," or "\n"); the
	// environment and flags give the joined text.
	sep string
	// defDoc replaces the default shown in flag usage when the real default
	// depends on the environment.
	defDoc string
	// field points into a Config: *string, *time.Duration, *int or *int64.
	field func(*Config) any
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30

	maxURLLen  = 2048
	maxPathLen = 4096
)

// table returns every setting in display order. It is built per call (no
// package state); callers keep the slice they were given.
func table() []spec {
	return []spec{
		{
			key: "activitywatch.url", env: "AWBRIDGE_AW_URL", flag: "aw-url", kind: kindURL,
			doc:    "ActivityWatch server base URL",
			maxLen: maxURLLen,
			field:  func(c *Config) any { return &c.AW.URL },
		},
		{
			key: "activitywatch.host", env: "AWBRIDGE_AW_HOST", flag: "aw-host", kind: kindText, optional: true,
			doc:    "host whose buckets to read; empty: ActivityWatch's own hostname, else the most recently updated",
			maxLen: 255,
			field:  func(c *Config) any { return &c.AW.Host },
		},
		{
			key: "activitywatch.host_header", env: "AWBRIDGE_AW_HOST_HEADER", flag: "aw-host-header", kind: kindHostPort, optional: true,
			doc:    "Host header sent to ActivityWatch; empty: the URL's host",
			maxLen: 255,
			field:  func(c *Config) any { return &c.AW.HostHeader },
		},
		{
			key: "activitywatch.api_key", env: "AWBRIDGE_AW_API_KEY", kind: kindSecret, optional: true, secret: true,
			doc:    "bearer token for ActivityWatch; empty: aw-server-rust's own config, if any",
			maxLen: 4096,
			field:  func(c *Config) any { return &c.AW.APIKey },
		},
		{
			key: "activitywatch.timeout", env: "AWBRIDGE_AW_TIMEOUT", flag: "aw-timeout", kind: kindDuration,
			doc: "deadline per ActivityWatch read, retries included",
			min: 1, max: int64(5 * time.Minute),
			field: func(c *Config) any { return &c.AW.Timeout },
		},
		{
			key: "activitywatch.history_timeout", env: "AWBRIDGE_AW_HISTORY_TIMEOUT", flag: "aw-history-timeout", kind: kindDuration,
			doc: "deadline per read of stored events (a bucket's day) for the activity tools",
			min: 1, max: int64(10 * time.Minute), // an activity call's own limit
			field: func(c *Config) any { return &c.AW.HistoryTimeout },
		},
		{
			key: "activitywatch.max_body_bytes", env: "AWBRIDGE_AW_MAX_BODY_BYTES", kind: kindBytes,
			doc: "largest ActivityWatch response body read",
			min: kib, max: gib,
			field: func(c *Config) any { return &c.AW.MaxBodyBytes },
		},
		{
			key: "sidecar.url", env: "AWBRIDGE_SIDECAR_URL", flag: "sidecar-url", kind: kindURL, optional: true,
			doc:    "/probe sidecar base URL; empty: no sidecar",
			maxLen: maxURLLen,
			field:  func(c *Config) any { return &c.Sidecar.URL },
		},
		{
			key: "sidecar.timeout", env: "AWBRIDGE_SIDECAR_TIMEOUT", flag: "sidecar-timeout", kind: kindDuration,
			doc: "deadline per sidecar probe, retries included",
			min: 1, max: int64(5 * time.Minute),
			field: func(c *Config) any { return &c.Sidecar.Timeout },
		},
		{
			key: "sidecar.max_body_bytes", env: "AWBRIDGE_SIDECAR_MAX_BODY_BYTES", kind: kindBytes,
			doc: "largest probe object read",
			min: kib, max: 64 * mib,
			field: func(c *Config) any { return &c.Sidecar.MaxBodyBytes },
		},
		{
			key: "server.max_line_bytes", env: "AWBRIDGE_MAX_LINE_BYTES", flag: "max-line-bytes", kind: kindBytes,
			doc: "longest JSON-RPC line accepted",
			min: kib, max: 64 * mib,
			field: func(c *Config) any { return &c.Server.MaxLineBytes },
		},
		{
			key: "server.max_in_flight", env: "AWBRIDGE_MAX_IN_FLIGHT", flag: "max-in-flight", kind: kindInt,
			doc: "calls in flight per connection before reading pauses",
			min: 1, max: 65536,
			field: func(c *Config) any { return &c.Server.MaxInFlight },
		},
		{
			key: "server.max_connections", env: "AWBRIDGE_MAX_CONNECTIONS", kind: kindInt,
			doc: "connections serve answers at once; one more gets an error line",
			min: 1, max: 4096,
			field: func(c *Config) any { return &c.Server.MaxConnections },
		},
		{
			key: "server.relay", env: "AWBRIDGE_RELAY", kind: kindChoice, choices: []string{"auto", "never", "1", "0"},
			doc:   `"auto": stdio and the terminal commands use the running service when it answers; "never" (or 0): always in-process`,
			field: func(c *Config) any { return &c.Server.Relay },
		},
		{
			key: "server.http", env: "AWBRIDGE_HTTP", flag: "http", kind: kindLoopback, optional: true,
			doc:    "loopback HOST:PORT where serve answers Streamable HTTP MCP, /healthz and /v1/nowframe; empty: off",
			maxLen: 255,
			field:  func(c *Config) any { return &c.Server.HTTP },
		},
		{
			key: "server.http_token", env: "AWBRIDGE_HTTP_TOKEN", kind: kindChoice, choices: []string{"file", "none"},
			doc:   `bearer token for /mcp: "file" (<state_dir>/http-token, made at first start) or "none"`,
			field: func(c *Config) any { return &c.Server.HTTPToken },
		},
		{
			key: "server.http_retry", env: "AWBRIDGE_HTTP_RETRY", kind: kindDuration,
			doc: "how often serve tries the HTTP port again when it was in use at start (the socket serves meanwhile)",
			min: int64(100 * time.Millisecond), max: int64(time.Hour),
			field: func(c *Config) any { return &c.Server.HTTPRetry },
		},
		{
			key: "paths.context_root", env: "AWBRIDGE_CONTEXT_ROOT", flag: "context-root", kind: kindPath, optional: true,
			lowEnv: []string{"SF_CONTEXT_REPO_ROOT", "SENTRYFROGG_CONTEXT_REPO_ROOT"},
			doc:    "artifact root; empty: no artifacts; below the file, SF_CONTEXT_REPO_ROOT then SENTRYFROGG_CONTEXT_REPO_ROOT",
			maxLen: maxPathLen,
			field:  func(c *Config) any { return &c.Paths.ContextRoot },
		},
		{
			key: "paths.state_dir", env: "AWBRIDGE_STATE_DIR", flag: "state-dir", kind: kindPath,
			doc:    "folder for persistent state",
			defDoc: "$XDG_STATE_HOME/awbridge",
			maxLen: maxPathLen,
			field:  func(c *Config) any { return &c.Paths.StateDir },
		},
		{
			key: "log.level", env: "AWBRIDGE_LOG_LEVEL", flag: "log-level", kind: kindLevel,
			doc:   "stderr log level: " + strings.Join(logLevels(), ", "),
			field: func(c *Config) any { return &c.Log.Level },
		},
		{
			key: "privacy.max_title_length", env: "AWBRIDGE_MAX_TITLE_LENGTH", kind: kindInt,
			doc: "longest window or tab title kept, in characters",
			min: 16, max: 4096,
			field: func(c *Config) any { return &c.Privacy.MaxTitleLength },
		},
		{
			key: "privacy.exclude_apps", env: "AWBRIDGE_EXCLUDE_APPS", kind: kindText, optional: true, sep: ",",
			doc:    "apps whose windows are excluded (titles never shown; a browser's tabs too); a list (an array in the file, comma-separated in the environment)",
			maxLen: 4096,
			field:  func(c *Config) any { return &c.Privacy.ExcludeApps },
		},
		{
			key: "privacy.title_rules", env: "AWBRIDGE_TITLE_RULES", kind: kindRules, optional: true, sep: "\n",
			doc:    `rewrites of window and tab titles, "PATTERN => REPLACEMENT"; a list (an array in the file, one per line or ";;"-separated in the environment)`,
			maxLen: 16384,
			field:  func(c *Config) any { return &c.Privacy.TitleRules },
		},
		{
			key: "privacy.url_rules", env: "AWBRIDGE_URL_RULES", kind: kindRules, optional: true, sep: "\n",
			doc:    `rewrites of tab URLs (after the query and fragment are dropped), "PATTERN => REPLACEMENT"; a list like title_rules`,
			maxLen: 16384,
			field:  func(c *Config) any { return &c.Privacy.URLRules },
		},
		{
			key: "limits.rate_limits", env: "AWBRIDGE_RATE_LIMITS", flag: "rate-limits", kind: kindRates, optional: true, sep: ",",
			doc:    "per-tool rate limits, e.g. nowframe_build=5/s:10,aw_get_state=30/m; a list (an array in the file, comma-separated in the environment); empty: none",
			maxLen: 4096,
			field:  func(c *Config) any { return &c.Limits.RateLimits },
		},
		{
			key: "limits.max_string_bytes", env: "AWBRIDGE_MAX_STRING_BYTES", kind: kindBytes,
			doc: "longest string in a result before it is truncated and spilled to an artifact",
			min: kib, max: 16 * mib,
			field: func(c *Config) any { return &c.Limits.MaxStringBytes },
		},
		{
			key: "protect.files", env: "AWBRIDGE_PROTECT_FILES", kind: kindPaths, optional: true, sep: ",",
			doc:    "more files the protected-environment baseline watches; a list (an array in the file, comma-separated in the environment); relative paths are taken against the config file's folder (the working directory in the environment)",
			maxLen: 8192,
			field:  func(c *Config) any { return &c.Protect.Files },
		},
		{
			key: "protect.env", env: "AWBRIDGE_PROTECT_ENV", kind: kindText, optional: true, sep: ",",
			doc:    "environment variable names the baseline watches (salted hashes only); a list (an array in the file, comma-separated in the environment)",
			maxLen: 4096,
			field:  func(c *Config) any { return &c.Protect.Env },
		},
		{
			key: "limits.sensitive_keys", env: "AWBRIDGE_SENSITIVE_KEYS", kind: kindText, optional: true, sep: ",",
			doc:    "more key names whose values are redacted; a list (an array in the file, comma-separated in the environment)",
			maxLen: 4096,
			field:  func(c *Config) any { return &c.Limits.SensitiveKeys },
		},
		{
			key: "artifacts.max_age", env: "AWBRIDGE_ARTIFACTS_MAX_AGE", kind: kindDuration,
			doc: "runs' artifacts last written longer ago than this are removed (e.g. 168h); 0: no age limit",
			min: 0, max: int64(10 * 365 * 24 * time.Hour),
			field: func(c *Config) any { return &c.Artifacts.MaxAge },
		},
		{
			key: "artifacts.max_bytes", env: "AWBRIDGE_ARTIFACTS_MAX_BYTES", kind: kindBytes,
			doc: "the oldest runs' artifacts are removed while all together take more than this; 0: no size limit",
			min: 0, max: 1 << 40,
			field: func(c *Config) any { return &c.Artifacts.MaxBytes },
		},
		{
			key: "activity.timezone", env: "AWBRIDGE_TIMEZONE", kind: kindTimezone, optional: true,
			doc:    `IANA time zone whose days activity is counted in (e.g. "Europe/Berlin"); empty: the machine's local zone`,
			maxLen: 255,
			field:  func(c *Config) any { return &c.Activity.Timezone },
		},
		{
			key: "poll.interval", env: "AWBRIDGE_POLL_INTERVAL", kind: kindDuration,
			doc: "serve reads a frame this often while someone is subscribed to the frame or health, or a call came in within poll.active_for",
			min: int64(100 * time.Millisecond), max: int64(time.Hour),
			field: func(c *Config) any { return &c.Poll.Interval },
		},
		{
			key: "poll.idle_interval", env: "AWBRIDGE_POLL_IDLE_INTERVAL", kind: kindDuration,
			doc: "serve reads a frame this often at rest (nobody subscribed, no recent call); a call still gets a fresh frame when the warm one is older than its max_age_ms",
			min: int64(100 * time.Millisecond), max: int64(24 * time.Hour),
			field: func(c *Config) any { return &c.Poll.IdleInterval },
		},
		{
			key: "poll.active_for", env: "AWBRIDGE_POLL_ACTIVE_FOR", kind: kindDuration,
			doc: "how long after a call serve keeps reading every poll.interval",
			min: int64(time.Second), max: int64(24 * time.Hour),
			field: func(c *Config) any { return &c.Poll.ActiveFor },
		},
		{
			key: "poll.bucket_list_ttl", env: "AWBRIDGE_POLL_BUCKET_LIST_TTL", kind: kindDuration,
			doc: "how long ActivityWatch's server info, bucket list and settings are reused by frames and the activity tools; a missing window bucket or an unknown bucket reads them again at once",
			min: int64(time.Second), max: int64(time.Hour),
			field: func(c *Config) any { return &c.Poll.BucketListTTL },
		},
	}
}

// logLevels lists the accepted log levels, quietest last.
func logLevels() []string {
	return []string{"trace", "debug", "info", "warn", "error", "disabled"}
}

// section and name split a key at its first dot.
func (sp *spec) section() string { s, _, _ := strings.Cut(sp.key, "."); return s }
func (sp *spec) name() string    { _, n, _ := strings.Cut(sp.key, "."); return n }

// sections lists the TOML tables of specs in order of first appearance.
func sections(specs []spec) []string {
	var out []string
	for i := range specs {
		s := specs[i].section()
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
