package aw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/awbridge/awbridge/internal/jsonw"
)

// apiKeyErr is every error ReadAPIKeyFile may give for a file it could
// read: fixed texts after the file name, never the file's contents.
var apiKeyErr = regexp.MustCompile(`^aw: read api key: \S+: (invalid TOML at line \d+|invalid TOML|\[auth\] api_key is not a string|api_key is not a string)$`)

// FuzzReadAPIKey feeds arbitrary bytes as aw-server-rust's config.toml:
// ReadAPIKeyFile never panics, its errors are fixed texts (a TOML parse
// error could quote the key; ours must not), and the key it returns is
// [auth] api_key when that is a non-empty string, else the top-level
// api_key, else "".
func FuzzReadAPIKey(f *testing.F) {
	for _, s := range []string{
		"address = \"127.0.0.1\"\nport = 5600\n[auth]\napi_key = \"s3cr3t-value\"\n",
		"api_key = \"top\"\n[auth]\napi_key = \"\"\n", "### DEFAULT SETTINGS ###\n#address = \"127.0.0.1\"\n#port = 5600\n",
		"[auth]\napi_key = 42\n", "[auth]\napi_key = s3cr3t\n", "api_key = [\"a\"]\n", "auth = 1\napi_key = 'lit'\n",
		"[auth]\n\"api_key\" = \"\"\"multi\nline\"\"\"\n", "API_KEY = \"case\"\n", "[[auth]]\napi_key = \"x\"\n", "\xff",
		"[auth]\napi_key = \"\\u0000\\n\"\n", "auth.api_key = \"dotted\"\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		key, err := ReadAPIKeyFile(name)
		if err != nil {
			if key != "" {
				t.Fatal("a key with an error")
			}
			if !apiKeyErr.MatchString(err.Error()) {
				t.Fatalf("error %q is not one of the fixed texts", err)
			}
			return
		}
		var doc map[string]any
		if _, err := toml.Decode(string(data), &doc); err != nil {
			t.Fatalf("accepted a file the TOML decoder refuses: %v", err)
		}
		want, _ := doc["api_key"].(string)
		if auth, ok := doc["auth"].(map[string]any); ok {
			if s, _ := auth["api_key"].(string); s != "" {
				want = s
			}
		}
		if key != want {
			t.Fatalf("key %q, want %q", key, want)
		}
	})
}

// planted stands for a window title or URL in a response body; it must
// never reach an error's text except as the server's own message.
const planted = "zQ-private-title-Qz"

// cannedServer answers every request with the response set last. The
// fuzz function runs one input at a time per process; the lock only
// orders the handler's reads after the fuzz function's writes.
type cannedServer struct {
	mu        sync.Mutex
	status    int
	ctype     string
	location  string
	body      []byte
	short     bool // declare more bytes than are sent: a truncated body
	path, raw string
}

func (s *cannedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.path, s.raw = r.URL.Path, r.URL.EscapedPath()
	if s.ctype != "" {
		w.Header().Set("Content-Type", s.ctype)
	}
	if s.location != "" {
		w.Header().Set("Location", s.location)
	}
	if s.short {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.body)+7))
	}
	w.WriteHeader(s.status)
	_, _ = w.Write(s.body)
}

// FuzzClientResponse serves an arbitrary answer (status, Content-Type,
// Location, body, possibly truncated) to each of the client's reads over
// real HTTP: the client never panics; it answers either a decoded value
// that keeps its promises or an *Error of a known kind whose text is one
// bounded line without control characters, in which a title from a body
// appears only as the server's own (sanitized) message; and the bucket id
// stays in its one path segment.
func FuzzClientResponse(f *testing.F) {
	for name, body := range fixtureBodies(f) {
		fx := loadFixture(f, name)
		op := uint8(0)
		switch {
		case strings.HasPrefix(name, "buckets"):
			op = 1
		case strings.HasPrefix(name, "bucket_"):
			op = 2
		case strings.HasPrefix(name, "events_"):
			op = 3
		}
		f.Add(op, uint16(fx.Status), fx.Headers["Content-Type"], []byte(body), fx.Headers["Location"], "aw-watcher-window_testhost", false)
	}
	f.Add(uint8(3), uint16(200), "application/json", []byte(`[{"id": 1, "timestamp": "2026-11-22T01:35:20+00:00", "duration": 1.0, "data": {"title": "$T"}}, {"timestamp": "bad $T"}]`), "", "b", false)
	f.Add(uint8(3), uint16(200), "application/json", []byte(`[{"id": 1, "timestamp": "2026-11-22T01:35:20+00:00", "duration": 1.0, "data": {"title": "$T"}}]`), "", "b", true)
	f.Add(uint8(2), uint16(404), "application/json", []byte(`{"message": "There is no bucket named $T\u202e\n"}`), "", "$T", false)
	f.Add(uint8(0), uint16(400), "application/json", []byte(`{"message": "host header is invalid (was evil:5600)"}`), "", "", false)
	f.Add(uint8(1), uint16(308), "text/html", []byte("<html>$T</html>"), "/api/0/buckets/", "", false)
	f.Add(uint8(1), uint16(302), "", []byte{}, "http://other.example/$T", "", false)
	f.Add(uint8(3), uint16(503), "text/html", []byte("<h1>$T</h1>"), "", "a?b#c%2F..", false)
	f.Add(uint8(3), uint16(200), "application/json", []byte(strings.Repeat("[", 100)), "", "..", false)
	f.Add(uint8(0), uint16(401), "application/json", []byte(`{"message": "$T"}`), "", "", false)

	srv := &cannedServer{}
	hs := httptest.NewServer(srv)
	f.Cleanup(hs.Close)
	c, err := New(Options{BaseURL: hs.URL, RetryMax: -1, AttemptTimeout: 5 * time.Second, MaxBodyBytes: 16 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, op uint8, status uint16, ctype string, body []byte, location, bucket string, short bool) {
		body = []byte(strings.ReplaceAll(string(body), "$T", planted))
		location = strings.ReplaceAll(location, "$T", planted)
		bucket = strings.ReplaceAll(bucket, "$T", planted)
		srv.mu.Lock()
		srv.status = 200 + int(status)%400
		srv.ctype, srv.location, srv.body, srv.short = ctype, location, body, short && len(body) > 0
		srv.path, srv.raw = "", ""
		srv.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var err error
		switch op % 3 {
		case 0:
			_, err = c.Info(ctx)
		case 1:
			var bs map[string]Bucket
			bs, err = c.Buckets(ctx)
			for id, b := range bs {
				if id == "" || b.ID != id || b.Type == "" {
					t.Fatalf("bucket %q: %+v", id, b)
				}
			}
		case 2:
			var evs []Event
			evs, err = c.Events(ctx, bucket, EventQuery{Limit: 10})
			for i, ev := range evs {
				if ev.Timestamp.IsZero() || math.IsNaN(ev.Duration) || ev.Duration < 0 || ev.End().Before(ev.Timestamp) {
					t.Fatalf("event %d: %+v", i, ev)
				}
				if i > 0 && evs[i-1].Timestamp.Before(ev.Timestamp) {
					t.Fatalf("not newest first at %d", i)
				}
			}
		}
		srv.mu.Lock()
		path, raw := srv.path, srv.raw
		srv.mu.Unlock()
		if op%3 == 2 && path != "" && (srv.status < 300 || srv.status > 399) {
			// The id is one escaped segment after /api/0/buckets/.
			rest, ok := strings.CutPrefix(raw, "/api/0/buckets/")
			seg, _, _ := strings.Cut(rest, "/")
			if dec, derr := url.PathUnescape(seg); !ok || derr != nil || dec != bucket {
				t.Fatalf("bucket %q sent as path %q", bucket, raw)
			}
		}
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T is not an *aw.Error: %v", err, err)
		}
		switch e.Kind {
		case Unreachable, Timeout, HTTPStatus, NotFound, Malformed, TooLarge, InvalidArgument:
		default:
			t.Fatalf("kind %q: %v", e.Kind, err)
		}
		if e.Kind == InvalidArgument && path != "" {
			t.Fatalf("invalid argument %v, but a request was sent", err)
		}
		msg := err.Error()
		if len(msg) > 1024 || !utf8.ValidString(msg) || strings.IndexFunc(msg, func(r rune) bool {
			return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
		}) >= 0 {
			t.Fatalf("error text is not one bounded clean line: %q", msg)
		}
		bare := *e
		bare.Message = ""
		if strings.Contains(bare.Error(), planted) {
			t.Fatalf("a title from the answer reached the error: %q", bare.Error())
		}
		if strings.Contains(e.Message, planted) && (srv.status < 400 || !strings.Contains(string(body), `"message"`)) {
			t.Fatalf("a title reached the message of a %d: %q", srv.status, e.Message)
		}
	})
}

// FuzzNewClient: New never panics on any base URL, Host override and API
// key; its errors never hold the key nor the URL's user info, query or
// fragment; and what it accepts is a base URL without them and a Host
// header that cannot inject a header line.
func FuzzNewClient(f *testing.F) {
	for _, c := range []struct{ base, host, key string }{
		{"http://127.0.0.1:5600", "", ""}, {"HTTP://localhost:5600/", "", "s3cret-key"}, {"http://[::1]:5600/aw/", "", ""},
		{"http://0.0.0.0:5600", "", ""}, {"https://aw.example:8443/prefix/", "127.0.0.1:5600", ""}, {"http://u:hunter2pw@h:5600", "", ""},
		{"http://h:bad/?token=secretvalue", "", ""}, {"http://h/#frag", "", ""}, {"http://h", "a\r\nX-Evil: 1", ""},
		{"http://h", "h:5600 x", ""}, {"http://h", "", "key with space\n"}, {"ftp://h", "", ""}, {"http://h:0", "", ""},
		{"http://%zz", "", ""}, {"http://h", "[::1]:5600", "k\x7f"},
	} {
		f.Add(c.base, c.host, c.key)
	}
	f.Fuzz(func(t *testing.T, base, host, key string) {
		c, err := New(Options{BaseURL: base, HostHeader: host, APIKey: key})
		if err != nil {
			msg := err.Error()
			if len(key) >= 4 && strings.Contains(msg, key) {
				t.Fatalf("error %q holds the API key", msg)
			}
			return
		}
		u, err := url.Parse(c.BaseURL())
		if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("base %q accepted as %q (%v)", base, c.BaseURL(), err)
		}
		h := c.hostHeader
		if h == "" || strings.ContainsAny(h, " \t\r\n/\\@") || !utf8.ValidString(h) || strings.IndexFunc(h, unicode.IsControl) >= 0 {
			t.Fatalf("Host header %q (base %q, override %q)", h, base, host)
		}
	})
}

// FuzzEventField: reading a field of an event's data (the app, the title,
// the URL, the AFK status) agrees with encoding/json on every object whose
// keys are unique, whatever the key: gjson path syntax in a key (dots,
// wildcards, pipes, '#', '@') is escaped, never interpreted.
func FuzzEventField(f *testing.F) {
	for _, c := range []struct{ data, key string }{
		{`{"app":"Code","title":"main.go"}`, "title"}, {`{"a.b":"x","a":{"b":"y"}}`, "a.b"}, {`{"a*":"x","ab":"y"}`, "a*"},
		{`{"a?":"x"}`, "a?"}, {`{"#":"x"}`, "#"}, {`{"@this":"x"}`, "@this"}, {`{"a|b":"x"}`, "a|b"}, {`{"\\":"x"}`, `\`},
		{`{"incognito":true}`, "incognito"}, {`{"n":12345678901234567890}`, "n"}, {`{"t":"\u00e9\ud800"}`, "t"}, {`{"":"empty"}`, ""},
		{`{"k":null}`, "k"}, {`{"k":"\"quoted\""}`, "k"}, {`{"a":{"b":1}}`, "a"},
	} {
		f.Add([]byte(c.data), c.key)
	}
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		if !json.Valid(data) || !utf8.Valid(data) || bytes.TrimSpace(data)[0] != '{' || hasDupKey(data) || !jsonw.DepthWithin(data, maxJSONDepth) {
			return // invalid UTF-8 is the sanitizers' business, not the reader's
		}
		ev := Event{Data: json.RawMessage(data)}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		want, _ := m[key].(string)
		if got := ev.Str(key); got != want {
			t.Fatalf("Str(%q) of %s = %q, want %q (a %T)", key, data, got, want, m[key])
		}
		wantBool, isBool := m[key].(bool)
		if got, ok := ev.Bool(key); ok != isBool || got != wantBool {
			t.Fatalf("Bool(%q) of %s = %v, %v; want %v, %v", key, data, got, ok, wantBool, isBool)
		}
		if _, isNum := m[key].(json.Number); func() bool { _, ok := ev.Int(key); return ok }() != isNum {
			t.Fatalf("Int(%q) of %s: number %v", key, data, isNum)
		}
	})
}

// hasDupKey reports whether an object anywhere in the valid document
// repeats a key (gjson reads the first, encoding/json the last).
func hasDupKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return walk()
}

// FuzzDecodeEventsSkip: the history decoder (skipping malformed and too
// deeply nested events) never panics, whatever the nesting, and keeps
// every event of a body the strict decoder accepts.
func FuzzDecodeEventsSkip(f *testing.F) {
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	f.Add([]byte(`[{"timestamp":"2026-11-22T01:35:20+00:00","duration":1,"data":` + deep + `},{"timestamp":"2026-11-22T01:35:20+00:00","duration":1,"data":{}}]`))
	f.Add([]byte(`[` + strings.Repeat("[", 100) + `,{}]`))
	f.Add([]byte(`[{"timestamp":"2026-11-22T01:35:20+00:00","duration":1,"data":{"k":"]}"}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeEventList(body, true)
		if strict, serr := decodeEventList(body, false); serr == nil && (err != nil || len(got) != len(strict)) {
			t.Fatalf("strict decoding gives %d events, skipping %d (%v)", len(strict), len(got), err)
		}
	})
}
