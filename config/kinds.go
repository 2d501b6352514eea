package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/text"
)

// exampleURL shows the expected shape of a URL setting.
const exampleURL = "http://127.0.0.1:5600"

// parse reads s as sp's kind. It returns the value to store (a string,
// time.Duration or int64) and problem == "" when s is acceptable, else a
// one-line description of what is wrong and what is expected. The value is
// quoted in problem unless sp is secret.
func (sp *spec) parse(s string, env Env) (v any, problem string) {
	if s == "" && sp.optional {
		return "", ""
	}
	q := sp.quote(s)
	switch sp.kind {
	case kindText:
		return sp.parseText(s)
	case kindHostPort:
		if len(s) > sp.maxLen || !validHostPort(s) {
			return nil, fmt.Sprintf("%s is not a host or host:port (e.g. localhost:5600)", q)
		}
		return s, ""
	case kindSecret:
		switch {
		case s == "":
			return nil, "must not be empty"
		case len(s) > sp.maxLen:
			return nil, fmt.Sprintf("the value is too long (at most %d bytes)", sp.maxLen)
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return nil, "the value has spaces, control characters or non-ASCII bytes (expected printable ASCII)"
		}
		return s, ""
	case kindURL:
		return sp.parseURL(s)
	case kindDuration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Sprintf("%s is not a duration (e.g. 2s)", q)
		}
		if int64(d) < sp.min || int64(d) > sp.max {
			if sp.min <= 0 {
				return nil, fmt.Sprintf("%s is out of range (expected 0 to %s)", q, formatDuration(time.Duration(sp.max)))
			}
			return nil, fmt.Sprintf("%s is out of range (expected more than 0 and at most %s)", q, formatDuration(time.Duration(sp.max)))
		}
		return d, ""
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Sprintf("%s is not a whole number", q)
		}
		if err != nil || n < sp.min || n > sp.max {
			return nil, fmt.Sprintf("%s is out of range (expected %d to %d)", q, sp.min, sp.max)
		}
		return n, ""
	case kindBytes:
		n, ok := parseBytes(s)
		if !ok {
			return nil, fmt.Sprintf("%s is not a size in bytes (e.g. 1048576 or 1MiB)", q)
		}
		if n < sp.min || n > sp.max {
			return nil, fmt.Sprintf("%s is out of range (expected %s to %s)", q, formatBytes(sp.min), formatBytes(sp.max))
		}
		return n, ""
	case kindPath:
		return sp.parsePath(s, env)
	case kindLevel:
		if l := strings.ToLower(s); slices.Contains(logLevels(), l) {
			return l, ""
		}
		return nil, fmt.Sprintf("%s is not a log level (expected one of %s)", q, strings.Join(logLevels(), ", "))
	case kindRules, kindRates:
		if len(s) > sp.maxLen {
			return nil, fmt.Sprintf("the value is too long (at most %d bytes)", sp.maxLen)
		}
		var err error
		if sp.kind == kindRules {
			_, err = ParseRules(s)
		} else {
			_, err = ParseRateLimits(s)
		}
		if err != nil {
			return nil, err.Error()
		}
		return s, ""
	case kindChoice:
		if slices.Contains(sp.choices, s) {
			return s, ""
		}
		return nil, fmt.Sprintf("%s is not one of %s", q, strings.Join(sp.choices, ", "))
	case kindPaths:
		return sp.parsePaths(s, env)
	case kindLoopback:
		return sp.parseLoopback(s)
	case kindTimezone:
		// "Local" is refused: the setting names a zone, and empty already
		// means the machine's local one.
		if v, problem := sp.parseText(s); problem != "" {
			return v, problem
		}
		if s == "Local" {
			return nil, `"Local" is not a zone name (leave it empty for the machine's local zone, or name one such as Europe/Berlin)`
		}
		if _, err := time.LoadLocation(s); err != nil {
			return nil, fmt.Sprintf("%s is not a known IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)", q)
		}
		return s, ""
	}
	return nil, fmt.Sprintf("unknown kind %v", sp.kind)
}

// parseURL accepts an absolute http(s) URL with a host and without
// credentials, query or fragment, and returns it without trailing slashes.
func (sp *spec) parseURL(s string) (any, string) {
	q := sp.quote(urlForMessage(s))
	switch {
	case s == "":
		return nil, "must not be empty (expected an http(s) URL such as " + exampleURL + ")"
	case len(s) > sp.maxLen:
		return nil, fmt.Sprintf("%s is too long (at most %d bytes)", q, sp.maxLen)
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
		return nil, fmt.Sprintf("%s is not an absolute http(s) URL (e.g. %s)", q, exampleURL)
	}
	// Credentials and queries may be secret: describe them, never echo them.
	if u.User != nil {
		return nil, "the URL has a user name or password in it (expected a base URL such as " + exampleURL + ")"
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return nil, "the URL has a query or fragment (expected a base URL such as " + exampleURL + ")"
	}
	if u.Hostname() == "" {
		return nil, fmt.Sprintf("%s has no host (e.g. %s)", q, exampleURL)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Sprintf("%s has an invalid port (expected 1 to 65535)", q)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Sprintf("%s has an invalid port (expected 1 to 65535)", q)
	}
	return strings.ToLower(u.Scheme) + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), ""
}

// urlForMessage is s without what may be secret, for an error message:
// the query and fragment are cut ("…") and the user info is replaced by
// "…" in a URL with an authority (scheme://), even when s does not parse
// as a URL.
func urlForMessage(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "…"
	}
	prefix, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s // no authority (mailto:a@b is an address, not a login)
	}
	prefix += "://"
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	if i := strings.LastIndexByte(rest[:end], '@'); i >= 0 {
		rest = "…" + rest[i:]
	}
	return prefix + rest
}

// parsePath accepts an absolute path for env.GOOS, expanding a leading ~
// to the home folder; it returns the path cleaned (slash systems only).
func (sp *spec) parsePath(s string, env Env) (any, string) {
	q := sp.quote(s)
	switch {
	case s == "":
		return nil, "must not be empty (expected an absolute path)"
	case len(s) > sp.maxLen:
		return nil, fmt.Sprintf("%s is too long (at most %d bytes)", q, sp.maxLen)
	case !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0:
		return nil, fmt.Sprintf("%s contains control characters or invalid UTF-8", q)
	}
	if p, ok := expandHome(s, env); ok && !IsAbs(env.goos(), p) {
		return nil, q + " is not an absolute path"
	}
	p, problem := env.absolute(s) // only ~ left to expand
	if problem != "" {
		return nil, q + " " + problem
	}
	return p, ""
}

// parsePaths reads a comma-separated list of paths, each made absolute
// (env.Dir is the folder relative ones are taken against; ~ is the home
// folder), and returns them comma-separated.
func (sp *spec) parsePaths(s string, env Env) (any, string) {
	if len(s) > sp.maxLen {
		return nil, fmt.Sprintf("the value is too long (at most %d bytes)", sp.maxLen)
	}
	var out []string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !utf8.ValidString(item) || strings.IndexFunc(item, unicode.IsControl) >= 0 {
			return nil, fmt.Sprintf("%s contains control characters or invalid UTF-8", sp.quote(item))
		}
		p, problem := env.absolute(item)
		if problem != "" {
			return nil, sp.quote(item) + " " + problem
		}
		out = append(out, p)
	}
	return strings.Join(out, ","), ""
}

// parseLoopback accepts HOST:PORT where HOST is a loopback address
// (127.0.0.0/8, ::1) or localhost, what serve's HTTP endpoint listens on.
func (sp *spec) parseLoopback(s string) (any, string) {
	q := sp.quote(s)
	host, port, err := net.SplitHostPort(s)
	if err != nil || len(s) > sp.maxLen || !text.Printable(s) || host == "" {
		return nil, fmt.Sprintf("%s is not HOST:PORT (e.g. 127.0.0.1:8765)", q)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Sprintf("%s has an invalid port (expected 0 to 65535; 0 picks a free one)", q)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Sprintf("%s is not a loopback address: serve answers only on 127.0.0.1, [::1] or localhost (e.g. 127.0.0.1:8765)", q)
	}
	return s, ""
}

// quote renders s for an error message: quoted, escaped, at most 64 bytes of
// it; secrets are never shown.
func (sp *spec) quote(s string) string {
	if sp.secret() {
		return "the value"
	}
	return quoteShort(s)
}

// quoteShort quotes s for a message, cut to 64 bytes.
func quoteShort(s string) string { return strconv.Quote(text.Cut(s, 64)) }

// formatDuration renders d as time.ParseDuration reads it, without the
// zero units Duration.String leaves at the end ("168h", not "168h0m0s").
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// format renders the value of sp in c as text that parse accepts.
func (sp *spec) format(c *Config) string {
	v := sp.field(c)
	switch sp.kind {
	case kindDuration:
		return formatDuration(time.Duration(v.Int()))
	case kindBytes:
		return formatBytes(v.Int())
	case kindInt:
		return strconv.FormatInt(v.Int(), 10)
	}
	return v.String()
}

// display is format with secrets masked: "" stays "" so an unset secret
// reads as unset.
func (sp *spec) display(c *Config) string {
	v := sp.format(c)
	if sp.secret() && v != "" {
		return "********"
	}
	return v
}

// set stores v, a value returned by parse, into c.
func (sp *spec) set(c *Config, v any) {
	switch x := v.(type) {
	case string:
		sp.field(c).SetString(x)
	case time.Duration:
		sp.field(c).SetInt(int64(x))
	case int64:
		sp.field(c).SetInt(x)
	}
}

// tomlText turns a decoded TOML value into the text parse reads, or says
// which TOML type was expected. A list setting takes a string (its
// environment form) or an array of strings.
func (sp *spec) tomlText(v any) (string, string) {
	want := "a string"
	switch {
	case sp.sep != "":
		if arr, ok := v.([]any); ok {
			return sp.joinItems(arr)
		}
		want = "an array of strings (or one string)"
	case sp.kind == kindInt || sp.kind == kindBytes:
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10), ""
		}
		if sp.kind == kindInt {
			return "", "expected an integer, found " + tomlType(v)
		}
		want = `a size in bytes (an integer or a string such as "1MiB")`
	case sp.kind == kindDuration:
		want = `a duration string such as "2s"`
	}
	if s, ok := v.(string); ok {
		return s, ""
	}
	return "", "expected " + want + ", found " + tomlType(v)
}

// joinItems joins a TOML array's items with sp.sep; an item cannot hold
// the separator (it would become two items).
func (sp *spec) joinItems(arr []any) (string, string) {
	parts := make([]string, 0, len(arr))
	for i, it := range arr {
		s, ok := it.(string)
		if !ok {
			return "", fmt.Sprintf("item %d of the array is not a string (found %s)", i+1, tomlType(it))
		}
		if strings.Contains(s, sp.sep) {
			if sp.sep == "\n" {
				return "", fmt.Sprintf("item %d of the array has a line break (give one rule per item)", i+1)
			}
			return "", fmt.Sprintf("item %d of the array, %s, has a %q: an item cannot hold one (it separates items)", i+1, sp.quote(s), sp.sep)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, sp.sep), ""
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []map[string]any:
		return "array of tables"
	case []any:
		return "array"
	}
	return "datetime"
}

// parseBytes reads "1048576", "1024B", "64KiB", "1 MiB", "2GiB".
func parseBytes(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 19 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	units := map[string]int64{"": 1, "b": 1, "kib": kib, "mib": mib, "gib": gib}
	mult, ok := units[strings.ToLower(strings.TrimPrefix(s[i:], " "))]
	if !ok || s[i:] == " " {
		return 0, false
	}
	if n > math.MaxInt64/mult {
		return math.MaxInt64, true // out of every range
	}
	return n * mult, true
}

// formatBytes renders n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	switch {
	case n != 0 && n%gib == 0:
		return strconv.FormatInt(n/gib, 10) + "GiB"
	case n != 0 && n%mib == 0:
		return strconv.FormatInt(n/mib, 10) + "MiB"
	case n != 0 && n%kib == 0:
		return strconv.FormatInt(n/kib, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

// validHostPort accepts "name", "name:port", "1.2.3.4:port", "[::1]:port".
func validHostPort(s string) bool {
	if strings.ContainsAny(s, " /\\@?#%") || !text.Printable(s) {
		return false
	}
	u, err := url.Parse("http://" + s)
	if err != nil || u.Host != s || u.User != nil || u.Path != "" || u.Hostname() == "" {
		return false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		return err == nil && n >= 1 && n <= 65535
	}
	return !strings.HasSuffix(s, ":")
}

// parseText accepts bounded printable text ("" only when optional).
func (sp *spec) parseText(s string) (any, string) {
	q := sp.quote(s)
	switch {
	case s == "":
		return nil, "must not be empty"
	case len(s) > sp.maxLen:
		return nil, fmt.Sprintf("%s is too long (at most %d bytes)", q, sp.maxLen)
	case !text.Printable(s):
		return nil, fmt.Sprintf("%s contains control characters or invalid UTF-8", q)
	}
	return s, ""
}
