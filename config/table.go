package config

import (
	"reflect"
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
	return [...]string{"string", "host", "secret", "url", "duration", "int", "bytes", "path", "level",
		"rate limits", "choice", "rules", "paths", "loopback address", "time zone"}[k]
}

// spec describes one setting. Every setting appears exactly once in table;
// Bind, Load and the docs all read it from there. The Config field it sets
// is the one whose TOML tags spell key.
type spec struct {
	key  string // section.name, as in the TOML file
	env  string // environment variable above the file; "" for none
	flag string // flag name without dashes; "" for none (secrets)
	// lowEnv are foreign variables below the file, highest first; empty
	// values count as unset and they are checked only when they win.
	lowEnv []string
	kind   kind
	def    string // the default, as parse reads it; "" for none
	doc    string
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
}

// secret settings are shown masked, never echoed in errors, never flags.
func (sp *spec) secret() bool { return sp.kind == kindSecret }

// field is the Config field sp sets: the one whose TOML tags spell its key
// (TestTableCoversConfig checks that every key names one).
func (sp *spec) field(c *Config) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, tag := range []string{sp.section(), sp.name()} {
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("toml") == tag {
				v = v.Field(i)
				break
			}
		}
	}
	return v
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
		{key: "activitywatch.url", env: "AWBRIDGE_AW_URL", flag: "aw-url", kind: kindURL, def: "http://127.0.0.1:5600", maxLen: maxURLLen,
			doc: "ActivityWatch server base URL"},
		{key: "activitywatch.host", env: "AWBRIDGE_AW_HOST", flag: "aw-host", kind: kindText, optional: true, maxLen: 255,
			doc: "host whose buckets to read; empty: ActivityWatch's own hostname, else the most recently updated"},
		{key: "activitywatch.host_header", env: "AWBRIDGE_AW_HOST_HEADER", flag: "aw-host-header", kind: kindHostPort, optional: true, maxLen: 255,
			doc: "Host header sent to ActivityWatch; empty: the URL's host"},
		{key: "activitywatch.api_key", env: "AWBRIDGE_AW_API_KEY", kind: kindSecret, optional: true, maxLen: 4096,
			doc: "bearer token for ActivityWatch; empty: aw-server-rust's own config, if any"},
		{key: "activitywatch.timeout", env: "AWBRIDGE_AW_TIMEOUT", flag: "aw-timeout", kind: kindDuration, def: "2s", min: 1, max: int64(5 * time.Minute),
			doc: "deadline per ActivityWatch read, retries included"},
		{key: "activitywatch.history_timeout", env: "AWBRIDGE_AW_HISTORY_TIMEOUT", flag: "aw-history-timeout", kind: kindDuration, def: "30s",
			min: 1, max: int64(10 * time.Minute),
			doc: "deadline per read of stored events (a bucket's day) for the activity tools"}, // max: an activity call's limit
		{key: "activitywatch.max_body_bytes", env: "AWBRIDGE_AW_MAX_BODY_BYTES", kind: kindBytes, def: "8MiB", min: kib, max: gib,
			doc: "largest ActivityWatch response body read"},
		{key: "sidecar.url", env: "AWBRIDGE_SIDECAR_URL", flag: "sidecar-url", kind: kindURL, optional: true, maxLen: maxURLLen,
			doc: "/probe sidecar base URL; empty: no sidecar"},
		{key: "sidecar.timeout", env: "AWBRIDGE_SIDECAR_TIMEOUT", flag: "sidecar-timeout", kind: kindDuration, def: "2s",
			min: 1, max: int64(5 * time.Minute),
			doc: "deadline per sidecar probe, retries included"},
		{key: "sidecar.max_body_bytes", env: "AWBRIDGE_SIDECAR_MAX_BODY_BYTES", kind: kindBytes, def: "1MiB", min: kib, max: 64 * mib,
			doc: "largest probe object read"},
		{key: "server.max_line_bytes", env: "AWBRIDGE_MAX_LINE_BYTES", flag: "max-line-bytes", kind: kindBytes, def: "1MiB", min: kib, max: 64 * mib,
			doc: "longest JSON-RPC line accepted"},
		{key: "server.max_in_flight", env: "AWBRIDGE_MAX_IN_FLIGHT", flag: "max-in-flight", kind: kindInt, def: "1024", min: 1, max: 65536,
			doc: "calls in flight per connection before reading pauses"},
		{key: "server.max_connections", env: "AWBRIDGE_MAX_CONNECTIONS", kind: kindInt, def: "64", min: 1, max: 4096,
			doc: "connections serve answers at once; one more gets an error line"},
		{key: "server.relay", env: "AWBRIDGE_RELAY", kind: kindChoice, def: "auto", choices: []string{"auto", "never", "1", "0"},
			doc: `"auto": stdio and the terminal commands use the running service when it answers; "never" (or 0): always in-process`},
		{key: "server.http", env: "AWBRIDGE_HTTP", flag: "http", kind: kindLoopback, optional: true, maxLen: 255,
			doc: "loopback HOST:PORT where serve answers Streamable HTTP MCP, /healthz and /v1/nowframe; empty: off"},
		{key: "server.http_token", env: "AWBRIDGE_HTTP_TOKEN", kind: kindChoice, def: "file", choices: []string{"file", "none"},
			doc: `bearer token for /mcp: "file" (<state_dir>/http-token, made at first start) or "none"`},
		{key: "server.http_retry", env: "AWBRIDGE_HTTP_RETRY", kind: kindDuration, def: "30s", min: int64(100 * time.Millisecond), max: int64(time.Hour),
			doc: "how often serve tries the HTTP port again when it was in use at start (the socket serves meanwhile)"},
		{key: "paths.context_root", env: "AWBRIDGE_CONTEXT_ROOT", flag: "context-root", kind: kindPath, optional: true,
			lowEnv: []string{"SF_CONTEXT_REPO_ROOT", "SENTRYFROGG_CONTEXT_REPO_ROOT"}, maxLen: maxPathLen,
			doc: "artifact root; empty: no artifacts; below the file, SF_CONTEXT_REPO_ROOT then SENTRYFROGG_CONTEXT_REPO_ROOT"},
		{key: "paths.state_dir", env: "AWBRIDGE_STATE_DIR", flag: "state-dir", kind: kindPath, defDoc: "$XDG_STATE_HOME/awbridge", maxLen: maxPathLen,
			doc: "folder for persistent state"},
		{key: "log.level", env: "AWBRIDGE_LOG_LEVEL", flag: "log-level", kind: kindLevel, def: "info",
			doc: "stderr log level: " + strings.Join(logLevels(), ", ")},
		{key: "privacy.max_title_length", env: "AWBRIDGE_MAX_TITLE_LENGTH", kind: kindInt, def: "300", min: 16, max: 4096,
			doc: "longest window or tab title kept, in characters"},
		{key: "privacy.exclude_apps", env: "AWBRIDGE_EXCLUDE_APPS", kind: kindText, optional: true, sep: ",", maxLen: 4096,
			doc: "apps whose windows are excluded (titles never shown; a browser's tabs too); a list (an array in the file, comma-separated in the environment)"},
		{key: "privacy.title_rules", env: "AWBRIDGE_TITLE_RULES", kind: kindRules, optional: true, sep: "\n", maxLen: 16384,
			doc: `rewrites of window and tab titles, "PATTERN => REPLACEMENT"; a list (an array in the file, one per line or ";;"-separated in the environment)`},
		{key: "privacy.url_rules", env: "AWBRIDGE_URL_RULES", kind: kindRules, optional: true, sep: "\n", maxLen: 16384,
			doc: `rewrites of tab URLs (after the query and fragment are dropped), "PATTERN => REPLACEMENT"; a list like title_rules`},
		{key: "limits.rate_limits", env: "AWBRIDGE_RATE_LIMITS", flag: "rate-limits", kind: kindRates, optional: true, sep: ",", maxLen: 4096,
			doc: "per-tool rate limits, e.g. nowframe_build=5/s:10,aw_get_state=30/m; a list (an array in the file, comma-separated in the environment); empty: none"},
		{key: "limits.max_string_bytes", env: "AWBRIDGE_MAX_STRING_BYTES", kind: kindBytes, def: "16KiB", min: kib, max: 16 * mib,
			doc: "longest string in a result before it is truncated and spilled to an artifact"},
		{key: "protect.files", env: "AWBRIDGE_PROTECT_FILES", kind: kindPaths, optional: true, sep: ",", maxLen: 8192,
			doc: "more files the protected-environment baseline watches; a list (an array in the file, comma-separated in the environment); relative paths are taken against the config file's folder (the working directory in the environment)"},
		{key: "protect.env", env: "AWBRIDGE_PROTECT_ENV", kind: kindText, optional: true, sep: ",", maxLen: 4096,
			doc: "environment variable names the baseline watches (salted hashes only); a list (an array in the file, comma-separated in the environment)"},
		{key: "limits.sensitive_keys", env: "AWBRIDGE_SENSITIVE_KEYS", kind: kindText, optional: true, sep: ",", maxLen: 4096,
			doc: "more key names whose values are redacted; a list (an array in the file, comma-separated in the environment)"},
		{key: "artifacts.max_age", env: "AWBRIDGE_ARTIFACTS_MAX_AGE", kind: kindDuration, def: "168h", max: int64(10 * 365 * 24 * time.Hour),
			doc: "runs' artifacts last written longer ago than this are removed (e.g. 168h); 0: no age limit"},
		{key: "artifacts.max_bytes", env: "AWBRIDGE_ARTIFACTS_MAX_BYTES", kind: kindBytes, def: "256MiB", max: 1 << 40,
			doc: "the oldest runs' artifacts are removed while all together take more than this; 0: no size limit"},
		{key: "activity.timezone", env: "AWBRIDGE_TIMEZONE", kind: kindTimezone, optional: true, maxLen: 255,
			doc: `IANA time zone whose days activity is counted in (e.g. "Europe/Berlin"); empty: the machine's local zone`},
		{key: "poll.interval", env: "AWBRIDGE_POLL_INTERVAL", kind: kindDuration, def: "1s", min: int64(100 * time.Millisecond), max: int64(time.Hour),
			doc: "serve reads a frame this often while someone is subscribed to the frame or health, or a call came in within poll.active_for"},
		{key: "poll.idle_interval", env: "AWBRIDGE_POLL_IDLE_INTERVAL", kind: kindDuration, def: "30s",
			min: int64(100 * time.Millisecond), max: int64(24 * time.Hour),
			doc: "serve reads a frame this often at rest (nobody subscribed, no recent call); a call still gets a fresh frame when the warm one is older than its max_age_ms"},
		{key: "poll.active_for", env: "AWBRIDGE_POLL_ACTIVE_FOR", kind: kindDuration, def: "5m", min: int64(time.Second), max: int64(24 * time.Hour),
			doc: "how long after a call serve keeps reading every poll.interval"},
		{key: "poll.bucket_list_ttl", env: "AWBRIDGE_POLL_BUCKET_LIST_TTL", kind: kindDuration, def: "10s", min: int64(time.Second), max: int64(time.Hour),
			doc: "how long ActivityWatch's server info, bucket list and settings are reused by frames and the activity tools; a missing window bucket or an unknown bucket reads them again at once"},
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
