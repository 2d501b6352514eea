package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "s3cret-token-for-tests"

// httpFixture is a real HTTP server over an HTTPTransport.
type httpFixture struct {
	t   *testing.T
	ts  *httptest.Server
	tr  *HTTPTransport
	url string // the /mcp endpoint
}

func newHTTPFixture(t *testing.T, b Backend, opts HTTPOptions, tune ...func(*HTTPTransport)) *httpFixture {
	t.Helper()
	tr := NewServer(b, Options{}).HTTPHandler(opts)
	for _, f := range tune {
		f(tr)
	}
	ts := httptest.NewServer(tr)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := tr.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &httpFixture{t: t, ts: ts, tr: tr, url: ts.URL + PathMCP}
}

// resp is an HTTP answer, body read.
type resp struct {
	status int
	header http.Header
	body   string
}

// do sends one request; hdr holds name/value pairs ("Host" sets req.Host).
func (f *httpFixture) do(method, path, body string, hdr ...string) resp {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.ts.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := f.ts.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: string(b)}
}

// mcpHeaders are the headers of a well-behaved client.
func mcpHeaders(sid string, extra ...string) []string {
	h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Authorization", "Bearer " + testToken}
	if sid != "" {
		h = append(h, HeaderSessionID, sid)
	}
	return append(h, extra...)
}

// post sends one message in session sid ("" for none).
func (f *httpFixture) post(sid, body string, extra ...string) resp {
	f.t.Helper()
	return f.do(http.MethodPost, PathMCP, body, mcpHeaders(sid, extra...)...)
}

// initialize opens a session and returns its id.
func (f *httpFixture) initialize(version string) string {
	f.t.Helper()
	r := f.post("", initLine(`"init"`, version))
	if r.status != http.StatusOK {
		f.t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	sid := r.header.Get(HeaderSessionID)
	if sid == "" {
		f.t.Fatalf("initialize: no %s header", HeaderSessionID)
	}
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			f.t.Fatalf("session id %q has a character outside visible ASCII", sid)
		}
	}
	rep := decodeReply(f.t, r.body)
	var res struct{ ProtocolVersion string }
	if err := json.Unmarshal(rep.Result, &res); err != nil || res.ProtocolVersion != version {
		f.t.Fatalf("initialize result %s: %v", rep.Result, err)
	}
	if got := f.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got.status != http.StatusAccepted || got.body != "" {
		f.t.Fatalf("notifications/initialized: %d %q", got.status, got.body)
	}
	return sid
}

func TestHTTPInitializeAndCall(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)

	r := f.post(sid, toolCall("7", "ok", `{}`), HeaderProtocolVersion, Version20250618)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("tools/call: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	rep := decodeReply(t, r.body)
	if string(rep.ID) != "7" || rep.Error != nil || !strings.Contains(string(rep.Result), "structuredContent") {
		t.Fatalf("tools/call reply: %s", r.body)
	}

	r = f.post(sid, `{"jsonrpc":"2.0","id":"s-1","method":"tools/list"}`)
	if rep := decodeReply(t, r.body); r.status != http.StatusOK || string(rep.ID) != `"s-1"` || !strings.Contains(string(rep.Result), `"name":"ok"`) {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}

	// A pretty-printed body is one message all the same.
	r = f.post(sid, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 8,\n  \"method\": \"ping\"\n}\n")
	if rep := decodeReply(t, r.body); r.status != http.StatusOK || string(rep.ID) != "8" || string(rep.Result) != "{}" {
		t.Fatalf("pretty ping: %d %s", r.status, r.body)
	}

	// Notifications and responses: 202, no body.
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":42,"result":{}}`,
	} {
		if r := f.post(sid, body); r.status != http.StatusAccepted || r.body != "" {
			t.Fatalf("%s: %d %q", body, r.status, r.body)
		}
	}
}

// A POST of responses only is accepted (202, no body) and dropped, with
// or without a session; one under the id of a call in flight leaves the
// call alone.
func TestHTTPClientResponses(t *testing.T) {
	g := newGate()
	f := newHTTPFixture(t, g, HTTPOptions{Token: testToken})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}]`,
	} {
		if r := f.post("", body); r.status != http.StatusAccepted || r.body != "" {
			t.Fatalf("%s without a session: %d %q, want 202 and no body", body, r.status, r.body)
		}
	}
	sid := f.initialize(Version20250618)
	answer := make(chan resp, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(toolCall("5", "slow", `{}`)))
		for h := mcpHeaders(sid); len(h) > 1; h = h[2:] {
			req.Header.Set(h[0], h[1])
		}
		res, err := f.ts.Client().Do(req)
		if err != nil {
			answer <- resp{body: err.Error()}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		answer <- resp{status: res.StatusCode, body: string(b)}
	}()
	g.waitStarted(t, 1)
	if r := f.post(sid, `{"jsonrpc":"2.0","id":5,"result":{}}`); r.status != http.StatusAccepted || r.body != "" {
		t.Fatalf("a response in the session: %d %q, want 202 and no body", r.status, r.body)
	}
	g.release <- struct{}{}
	r := <-answer
	if rep := decodeReply(t, r.body); r.status != http.StatusOK || string(rep.ID) != "5" || rep.Error != nil || !strings.Contains(string(rep.Result), `"released"`) {
		t.Fatalf("the call: %d %s, want its result", r.status, r.body)
	}
}

func TestHTTPPostErrors(t *testing.T) {
	g := newGate()
	f := newHTTPFixture(t, g, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20251125)
	for _, tc := range []struct {
		name   string
		sid    string
		body   string
		hdr    []string
		status int
		code   int // JSON-RPC error code in the body; 0: no check
	}{
		{"no session id", "", ping("1"), nil, http.StatusBadRequest, CodeInvalidRequest},
		{"unknown session", "0123456789abcdef", ping("1"), nil, http.StatusNotFound, CodeInvalidRequest},
		{"overlong session id", strings.Repeat("a", 4096), ping("1"), nil, http.StatusNotFound, CodeInvalidRequest},
		{"parse error", sid, `{"jsonrpc":`, nil, http.StatusBadRequest, CodeParseError},
		{"not an object", sid, `42`, nil, http.StatusBadRequest, CodeInvalidRequest},
		{"null id", sid, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, http.StatusBadRequest, CodeInvalidRequest},
		{"bad notification", sid, `{"jsonrpc":"1.0","method":"x"}`, nil, http.StatusBadRequest, CodeInvalidRequest},
		{"batch outside 2025-03-26", sid, "[" + ping("1") + "]", nil, http.StatusBadRequest, CodeInvalidRequest},
		{"bad protocol version header", sid, ping("1"), []string{HeaderProtocolVersion, "1900-01-01"}, http.StatusBadRequest, CodeInvalidRequest},
		{"not JSON content", sid, ping("1"), []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, CodeInvalidRequest},
		{"unacceptable", sid, ping("1"), []string{"Accept", "text/html"}, http.StatusNotAcceptable, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.post(tc.sid, tc.body, tc.hdr...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != 0 {
				if rep := decodeReply(t, r.body); rep.Error == nil || rep.Error.Code != tc.code {
					t.Fatalf("body %s, want error code %d", r.body, tc.code)
				}
			}
		})
	}

	// An id already in flight in the session is refused, then free again.
	first := make(chan resp, 1)
	go func() { first <- f.post(sid, toolCall("5", "slow", `{}`)) }()
	g.waitStarted(t, 1)
	if r := f.post(sid, toolCall("5", "again", `{}`)); r.status != http.StatusBadRequest {
		t.Fatalf("same id in flight: %d %s", r.status, r.body)
	}
	g.release <- struct{}{}
	if r := <-first; r.status != http.StatusOK || !strings.Contains(r.body, `"released":"slow"`) {
		t.Fatalf("first call: %d %s", r.status, r.body)
	}
}

func TestHTTPBodyTooLarge(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}}`
	if r := f.post(sid, big); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB body: %d %.200s", r.status, r.body)
	}
	// The session goes on.
	if r := f.post(sid, ping("2")); r.status != http.StatusOK {
		t.Fatalf("ping after 413: %d %s", r.status, r.body)
	}
}

func TestHTTPSSEReplyToPost(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	r := f.post(sid, toolCall(`"x"`, "ok", `{}`), "Accept", "text/event-stream")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("SSE reply: %d %s", r.status, r.header.Get("Content-Type"))
	}
	events := sseData(t, r.body)
	if len(events) != 1 {
		t.Fatalf("events %q", r.body)
	}
	if rep := decodeReply(t, events[0]); string(rep.ID) != `"x"` || rep.Result == nil {
		t.Fatalf("event %s", events[0])
	}
}

// sseData returns the data of each event in an SSE body.
func sseData(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		for _, l := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

func TestHTTPBatch(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250326)
	r := f.post(sid, "["+ping("1")+`,{"jsonrpc":"2.0","method":"notifications/initialized"},`+toolCall("2", "ok", `{}`)+"]")
	if r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	ol := parseLine(t, r.body)
	if len(ol.Batch) != 2 {
		t.Fatalf("batch reply %s", r.body)
	}
	ids := map[string]bool{}
	for _, rep := range ol.Batch {
		ids[string(rep.ID)] = true
	}
	if !ids["1"] || !ids["2"] {
		t.Fatalf("batch reply ids %v", ids)
	}
	for _, tc := range []struct{ name, body string }{
		{"notifications only", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
		{"responses only", `[{"jsonrpc":"2.0","id":1,"result":{}}]`},
	} {
		if r := f.post(sid, tc.body); r.status != http.StatusAccepted || r.body != "" {
			t.Fatalf("%s: %d %q", tc.name, r.status, r.body)
		}
	}
	for _, tc := range []struct{ name, body string }{
		{"empty", `[]`},
		{"repeated id", "[" + ping("1") + "," + ping("1") + "]"},
		{"mixed responses", "[" + ping("1") + `,{"jsonrpc":"2.0","id":9,"result":{}}]`},
		{"element not an object", "[" + ping("1") + ",3]"},
	} {
		if r := f.post(sid, tc.body); r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
}

func TestHTTPSessionsIsolated(t *testing.T) {
	g := newGate()
	f := newHTTPFixture(t, g, HTTPOptions{Token: testToken})
	a := f.initialize(Version20250326)
	b := f.initialize(Version20251125)
	if a == b {
		t.Fatal("two sessions share an id")
	}
	// The same id in flight in both sessions: each POST gets its own reply.
	ra, rb := make(chan resp, 1), make(chan resp, 1)
	go func() { ra <- f.post(a, toolCall("1", "from-a", `{}`)) }()
	go func() { rb <- f.post(b, toolCall("1", "from-b", `{}`)) }()
	g.waitStarted(t, 2)
	g.release <- struct{}{}
	g.release <- struct{}{}
	if r := <-ra; !strings.Contains(r.body, `\"released\":\"from-a\"`) {
		t.Fatalf("session a got %s", r.body)
	}
	if r := <-rb; !strings.Contains(r.body, `\"released\":\"from-b\"`) {
		t.Fatalf("session b got %s", r.body)
	}
	// Each session keeps its negotiated version: a batch is a 2025-03-26 thing.
	if r := f.post(a, "["+ping("2")+"]"); r.status != http.StatusOK {
		t.Fatalf("batch in a: %d %s", r.status, r.body)
	}
	if r := f.post(b, "["+ping("2")+"]"); r.status != http.StatusBadRequest {
		t.Fatalf("batch in b: %d %s", r.status, r.body)
	}
	// Ending one leaves the other.
	if r := f.do(http.MethodDelete, PathMCP, "", mcpHeaders(a)...); r.status != http.StatusNoContent {
		t.Fatalf("DELETE a: %d %s", r.status, r.body)
	}
	if r := f.post(b, ping("3")); r.status != http.StatusOK {
		t.Fatalf("b after a ended: %d %s", r.status, r.body)
	}
}

func TestHTTPDeleteThen404(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	if n := f.tr.Sessions(); n != 1 {
		t.Fatalf("sessions %d", n)
	}
	if r := f.do(http.MethodDelete, PathMCP, "", mcpHeaders("")...); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE without id: %d", r.status)
	}
	if r := f.do(http.MethodDelete, PathMCP, "", mcpHeaders(sid)...); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := f.post(sid, ping("1")); r.status != http.StatusNotFound {
		t.Fatalf("POST after DELETE: %d %s", r.status, r.body)
	}
	if r := f.do(http.MethodGet, PathMCP, "", mcpHeaders(sid, "Accept", "text/event-stream")...); r.status != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", r.status)
	}
	if r := f.do(http.MethodDelete, PathMCP, "", mcpHeaders(sid)...); r.status != http.StatusNotFound {
		t.Fatalf("second DELETE: %d", r.status)
	}
	if n := f.tr.Sessions(); n != 0 {
		t.Fatalf("sessions after DELETE %d", n)
	}
	if r := f.do(http.MethodPut, PathMCP, "", mcpHeaders(sid)...); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") == "" {
		t.Fatalf("PUT: %d", r.status)
	}
}

func TestHTTPAuth(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	base := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
	}{
		{"mcp no token", http.MethodPost, PathMCP, "", http.StatusUnauthorized},
		{"mcp wrong token", http.MethodPost, PathMCP, "Bearer wrong", http.StatusUnauthorized},
		{"mcp token prefix", http.MethodPost, PathMCP, "Bearer " + testToken[:5], http.StatusUnauthorized},
		{"mcp basic scheme", http.MethodPost, PathMCP, "Basic " + testToken, http.StatusUnauthorized},
		{"mcp GET no token", http.MethodGet, PathMCP, "", http.StatusUnauthorized},
		{"mcp DELETE no token", http.MethodDelete, PathMCP, "", http.StatusUnauthorized},
		{"mcp right token", http.MethodPost, PathMCP, "Bearer " + testToken, http.StatusOK},
		{"mcp scheme case", http.MethodPost, PathMCP, "bearer " + testToken, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := append([]string(nil), base...)
			if tc.auth != "" {
				hdr = append(hdr, "Authorization", tc.auth)
			}
			body := ""
			if tc.method == http.MethodPost {
				body = initLine("1", Version20250618)
			}
			r := f.do(tc.method, tc.path, body, hdr...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.status == http.StatusUnauthorized && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	// Token "" requires none.
	open := newHTTPFixture(t, &stageBackend{}, HTTPOptions{})
	if r := open.do(http.MethodPost, PathMCP, initLine("1", Version20250618), base...); r.status != http.StatusOK {
		t.Fatalf("no token configured: %d %s", r.status, r.body)
	}
}

func TestHTTPHostAndOrigin(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{
		Token: testToken,
		Other: func(w http.ResponseWriter, _ *http.Request, _ bool) {
			WriteJSON(w, http.StatusOK, []byte(`{}`))
		},
	})
	u, err := url.Parse(f.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	body := initLine("1", Version20250618)
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"rebinding Host on POST /mcp", http.MethodPost, PathMCP, []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"rebinding Host on GET /mcp", http.MethodGet, PathMCP, []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"rebinding Host on DELETE /mcp", http.MethodDelete, PathMCP, []string{"Host", "evil.example"}, http.StatusForbidden},
		{"rebinding Host on another path", http.MethodGet, "/healthz", []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"non-loopback IP Host", http.MethodPost, PathMCP, []string{"Host", "192.168.1.10:" + port}, http.StatusForbidden},
		{"localhost Host", http.MethodPost, PathMCP, []string{"Host", "localhost:" + port}, http.StatusOK},
		{"[::1] Host", http.MethodPost, PathMCP, []string{"Host", "[::1]:" + port}, http.StatusOK},
		{"foreign Origin", http.MethodPost, PathMCP, []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"foreign Origin on another path", http.MethodGet, "/healthz", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"another path", http.MethodGet, "/healthz", nil, http.StatusOK},
		{"null Origin", http.MethodPost, PathMCP, []string{"Origin", "null"}, http.StatusForbidden},
		{"loopback Origin, other port", http.MethodPost, PathMCP, []string{"Origin", "http://localhost:1"}, http.StatusForbidden},
		{"https loopback Origin", http.MethodPost, PathMCP, []string{"Origin", "https://127.0.0.1:" + port}, http.StatusForbidden},
		{"loopback Origin, our port", http.MethodPost, PathMCP, []string{"Origin", "http://localhost:" + port}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ""
			if tc.method == http.MethodPost {
				b = body
			}
			r := f.do(tc.method, tc.path, b, append(mcpHeaders(""), tc.hdr...)...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if r.status >= 400 && !json.Valid([]byte(r.body)) {
				t.Fatalf("error body is not JSON: %q", r.body)
			}
		})
	}

	// Without Other, another path does not exist.
	if r := newHTTPFixture(t, &stageBackend{}, HTTPOptions{}).do(http.MethodGet, "/nope", ""); r.status != http.StatusNotFound || !json.Valid([]byte(r.body)) {
		t.Fatalf("unknown path: %d %s", r.status, r.body)
	}

	// Explicit AllowedHosts: only those.
	strict := newHTTPFixture(t, &stageBackend{}, HTTPOptions{AllowedHosts: []string{"localhost:1234"}})
	if r := strict.do(http.MethodPost, PathMCP, body, "Content-Type", "application/json"); r.status != http.StatusForbidden {
		t.Fatalf("Host not listed: %d", r.status)
	}
	if r := strict.do(http.MethodPost, PathMCP, body, "Content-Type", "application/json", "Host", "LOCALHOST:1234"); r.status != http.StatusOK {
		t.Fatalf("listed Host: %d %s", r.status, r.body)
	}
}

// resBackend serves one resource whose change the test triggers.
type resBackend struct {
	stageBackend
	changed chan struct{}
	watched chan struct{} // when not nil, told each time a watcher asks for changed
}

// waitWatched waits until a watcher waits for the next change.
func (b *resBackend) waitWatched(t *testing.T) {
	t.Helper()
	select {
	case <-b.watched:
	case <-time.After(waitLimit):
		t.Fatal("nobody watches the resource")
	}
}

func (b *resBackend) ResourcesList() json.RawMessage {
	return json.RawMessage(`{"resources":[{"uri":"test://r","name":"r"}]}`)
}

func (b *resBackend) ReadResource(_ context.Context, uri string) (json.RawMessage, bool) {
	return json.RawMessage(`{"contents":[]}`), uri == "test://r"
}

func (b *resBackend) KnownResource(uri string) bool { return uri == "test://r" }

func (b *resBackend) ResourceChanged(string) <-chan struct{} {
	if b.watched != nil {
		select {
		case b.watched <- struct{}{}:
		default:
		}
	}
	return b.changed
}

// openStream opens the GET stream of session sid.
func (f *httpFixture) openStream(ctx context.Context, sid string) (*http.Response, *bufio.Reader) {
	f.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set(HeaderSessionID, sid)
	res, err := f.ts.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		f.t.Fatalf("GET stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return res, bufio.NewReader(res.Body)
}

// nextData reads the next SSE data line.
func nextData(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "data: "); ok {
			return d
		}
	}
}

func TestHTTPGetStreamNotification(t *testing.T) {
	b := &resBackend{changed: make(chan struct{})}
	f := newHTTPFixture(t, b, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, br := f.openStream(ctx, sid)

	r := f.post(sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://r"}}`)
	if rep := decodeReply(t, r.body); r.status != http.StatusOK || string(rep.Result) != "{}" {
		t.Fatalf("subscribe: %d %s", r.status, r.body)
	}
	close(b.changed)
	var note struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct{ URI string }
	}
	d := nextData(t, br)
	if err := json.Unmarshal([]byte(d), &note); err != nil || note.Method != "notifications/resources/updated" || note.Params.URI != "test://r" || note.ID != nil {
		t.Fatalf("notification %s: %v", d, err)
	}

	// A session with an open stream is not idle; the stream ends with its session.
	f.tr.reap(time.Now().Add(24 * time.Hour))
	if r := f.post(sid, ping("4")); r.status != http.StatusOK {
		t.Fatalf("session with a stream was reaped: %d", r.status)
	}
	if r := f.do(http.MethodDelete, PathMCP, "", mcpHeaders(sid)...); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	for {
		if _, err := br.ReadString('\n'); err != nil {
			break // the stream closed
		}
	}
}

// A session is idle from the end of its last request or stream, not from
// its start: a GET stream open for longer than the idle bound must not get
// its session reaped the moment the stream closes.
func TestHTTPIdleCountsFromTheStreamsEnd(t *testing.T) {
	f := newHTTPFixture(t, &resBackend{changed: make(chan struct{})}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	res, _ := f.openStream(ctx, sid)
	f.tr.mu.Lock()
	s := f.tr.sessions[sid]
	f.tr.mu.Unlock()
	const open = 300 * time.Millisecond
	time.Sleep(open)
	cancel()
	res.Body.Close()
	for s.active.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	f.tr.reap(time.Now().Add(f.tr.idle - open/2))
	if r := f.post(sid, ping("1")); r.status != http.StatusOK {
		t.Fatalf("session reaped %v before its idle bound (%v) counted from the stream's end: %d", open/2, f.tr.idle, r.status)
	}
}

func TestHTTPGetStreamRules(t *testing.T) {
	f := newHTTPFixture(t, &resBackend{changed: make(chan struct{})}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20251125)
	if r := f.do(http.MethodGet, PathMCP, "", mcpHeaders(sid, "Accept", "application/json")...); r.status != http.StatusNotAcceptable {
		t.Fatalf("GET without text/event-stream: %d", r.status)
	}
	if r := f.do(http.MethodGet, PathMCP, "", mcpHeaders("", "Accept", "text/event-stream")...); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET without session: %d", r.status)
	}
	// A second GET stream replaces the first, which ends.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, first := f.openStream(ctx, sid)
	f.openStream(ctx, sid)
	if _, err := first.ReadString('\n'); err == nil {
		t.Fatal("the replaced stream is still open")
	}
}

func TestHTTPMaxSessionsAndIdle(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken}, func(tr *HTTPTransport) { tr.maxSessions = 2 })
	a := f.initialize(Version20250618)
	f.initialize(Version20250618)
	if r := f.post("", initLine("1", Version20250618)); r.status != http.StatusServiceUnavailable || r.header.Get(HeaderSessionID) != "" {
		t.Fatalf("third session: %d %s", r.status, r.body)
	}
	f.do(http.MethodDelete, PathMCP, "", mcpHeaders(a)...)
	c := f.initialize(Version20250618)

	// Idle sessions are reaped.
	f.tr.reap(time.Now().Add(sessionIdle + time.Minute))
	if r := f.post(c, ping("1")); r.status != http.StatusNotFound {
		t.Fatalf("idle session still answers: %d", r.status)
	}
	if n := f.tr.Sessions(); n != 0 {
		t.Fatalf("sessions after reaping %d", n)
	}
	// A failed initialize leaves no session behind.
	if r := f.post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`); r.status != http.StatusOK || r.header.Get(HeaderSessionID) != "" {
		t.Fatalf("bad initialize: %d %v", r.status, r.header)
	}
	if n := f.tr.Sessions(); n != 0 {
		t.Fatalf("sessions after a failed initialize %d", n)
	}
}

func TestHTTPShutdownAnswersInFlight(t *testing.T) {
	g := newGate()
	tr := NewServer(g, Options{}).HTTPHandler(HTTPOptions{Token: testToken})
	ts := httptest.NewServer(tr)
	defer ts.Close()
	f := &httpFixture{t: t, ts: ts, tr: tr, url: ts.URL + PathMCP}
	sid := f.initialize(Version20250618)

	got := make(chan resp, 1)
	go func() { got <- f.post(sid, toolCall("1", "inflight", `{}`)) }()
	g.waitStarted(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- tr.Shutdown(ctx) }()
	for tr.Sessions() != 0 { // Shutdown has taken the session
		if ctx.Err() != nil {
			t.Fatal("Shutdown did not start")
		}
		time.Sleep(time.Millisecond)
	}
	g.release <- struct{}{}
	if r := <-got; r.status != http.StatusOK || !strings.Contains(r.body, `\"released\":\"inflight\"`) {
		t.Fatalf("in-flight call during shutdown: %d %s", r.status, r.body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if r := f.post("", initLine("1", Version20250618)); r.status != http.StatusServiceUnavailable {
		t.Fatalf("initialize after Shutdown: %d", r.status)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

// bearer adds the token to every request and records "METHOD STATUS" of
// each exchange.
type bearer struct {
	token string
	next  http.RoundTripper
	mu    sync.Mutex
	seen  []string
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	res, err := b.next.RoundTrip(r)
	if err == nil {
		b.mu.Lock()
		b.seen = append(b.seen, r.Method+" "+strconv.Itoa(res.StatusCode))
		b.mu.Unlock()
	}
	return res, err
}

func (b *bearer) exchanges() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

// TestHTTPOfficialSDKClient connects the official MCP Go SDK's Streamable
// HTTP client, as an independent client.
func TestHTTPOfficialSDKClient(t *testing.T) {
	for _, tc := range []struct {
		name, version string // version "" is the SDK's default, 2026-07-28
		sessions      int
	}{
		{"modern", "", 0},
		{"legacy", Version20251125, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &resBackend{changed: make(chan struct{}), watched: make(chan struct{}, 8)}
			f := newHTTPFixture(t, b, HTTPOptions{Token: testToken})
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			updated := make(chan *sdk.ResourceUpdatedNotificationParams, 4)
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-http-test", Version: "0"}, &sdk.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params },
			})
			rt := &bearer{token: testToken, next: f.ts.Client().Transport}
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint:   f.url,
				HTTPClient: &http.Client{Transport: rt},
				MaxRetries: -1,
			}, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "awbridge" {
				t.Fatalf("server name %q", got)
			}
			wantVersion := tc.version
			if wantVersion == "" {
				wantVersion = ModernVersion
			}
			if got := cs.InitializeResult().ProtocolVersion; got != wantVersion {
				t.Fatalf("protocol version %q, want %q", got, wantVersion)
			}
			if n := f.tr.Sessions(); n != tc.sessions {
				t.Fatalf("sessions %d, want %d", n, tc.sessions)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if len(tools.Tools) != 1 || tools.Tools[0].Name != "ok" {
				t.Fatalf("tools %+v", tools.Tools)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ok", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("tools/call result %+v", res)
			}
			if txt, ok := res.Content[0].(*sdk.TextContent); !ok || !strings.Contains(txt.Text, `a \"quoted\" line`) {
				t.Fatalf("content %#v", res.Content[0])
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://r"}); err != nil {
				t.Fatalf("resources/read: %v", err)
			}
			if tc.version == "" {
				// subscriptions/listen: the update comes tagged with the
				// subscription's id.
				if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://r"}); err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				b.waitWatched(t)
				close(b.changed)
				select {
				case p := <-updated:
					if p.URI != "test://r" || p.Meta["io.modelcontextprotocol/subscriptionId"] == nil {
						t.Fatalf("update %+v", p)
					}
				case <-ctx.Done():
					t.Fatal("no resource update")
				}
				_ = cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "test://r"})
			}
			if err := cs.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if n := f.tr.Sessions(); n != 0 { // Close sends DELETE
				t.Fatalf("sessions after close %d", n)
			}
			ex := rt.exchanges()
			if tc.version != "" && (!slices.Contains(ex, "GET 200") || !slices.Contains(ex, "DELETE 204")) {
				t.Fatalf("legacy: the SDK opens a GET stream and ends with DELETE: %v", ex)
			}
			if tc.version == "" && (slices.Contains(ex, "GET 200") || slices.Contains(ex, "DELETE 204")) {
				t.Fatalf("modern: no GET stream or DELETE: %v", ex)
			}

			// Without the token, the SDK cannot connect.
			_, err = client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.url, HTTPClient: f.ts.Client(), MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			if err == nil {
				t.Fatal("connected without the token")
			}
		})
	}
}

func TestAcceptable(t *testing.T) {
	for _, tc := range []struct {
		accept    []string
		json, sse bool
	}{
		{nil, true, true},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"text/event-stream"}, false, true},
		{[]string{"application/json"}, true, false},
		{[]string{"*/*"}, true, true},
		{[]string{"application/*;q=0.5"}, true, false},
		{[]string{"application/json;q=0, text/event-stream"}, false, true},
		{[]string{"text/html"}, false, false},
		{[]string{"TEXT/EVENT-STREAM"}, false, true},
	} {
		j, s := acceptable(tc.accept)
		if j != tc.json || s != tc.sse {
			t.Errorf("acceptable(%q) = %v, %v; want %v, %v", tc.accept, j, s, tc.json, tc.sse)
		}
	}
}

func FuzzDecodePost(f *testing.F) {
	for _, s := range []string{
		initLine("1", Version20250618),
		ping(`"a"`),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"[" + ping("1") + "," + ping("2") + "]",
		"[" + ping("1") + "," + ping("1") + "]",
		`[]`, `[1]`, `{}`, `null`, `{"id":null}`, "\xef\xbb\xbf{\n\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"x\"}",
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, perr := decodePost(body, 4096)
		if perr != nil {
			if perr.status < 400 || !json.Valid(perr.body) {
				t.Fatalf("bad rejection %d %q", perr.status, perr.body)
			}
			return
		}
		if len(p.msgs) == 0 || (!p.batch && len(p.msgs) != 1) || len(bytes.TrimPrefix(body, bom)) > 4096 {
			t.Fatalf("post %+v", p)
		}
		if len(p.keys) > len(p.msgs) {
			t.Fatalf("more requests than messages %+v", p)
		}
		seen := map[string]bool{}
		for _, k := range p.keys {
			if seen[k] {
				t.Fatalf("repeated key %q", k)
			}
			seen[k] = true
		}
	})
}

// stalledRequest sends the headers of method path with a 1000-byte body
// and one byte of it, then stalls; it returns the connection.
func (f *httpFixture) stalledRequest(method, path string, hdr ...string) net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", f.ts.Listener.Addr().String())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	req := method + " " + path + " HTTP/1.1\r\nHost: " + f.ts.Listener.Addr().String() + "\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		req += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	if _, err := io.WriteString(c, req+"Content-Length: 1000\r\n\r\n{"); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// A request whose body stalls is answered and its connection closed once
// the body deadline passes, whether or not the handler reads the body: it
// cannot hold its connection (and a place under the server's cap) forever.
func TestHTTPStalledBodyIsCut(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken}, func(tr *HTTPTransport) { tr.bodyTimeout = 50 * time.Millisecond })
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    []string
		status int
	}{
		{"without the token", http.MethodPost, PathMCP, []string{"Content-Type", "application/json"}, http.StatusUnauthorized},
		{"with the token", http.MethodPost, PathMCP, mcpHeaders(""), http.StatusBadRequest},
		{"unknown path", http.MethodPost, "/nowhere", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.stalledRequest(tc.method, tc.path, tc.hdr...)
			c.SetReadDeadline(time.Now().Add(waitLimit)) // a ceiling, not the bound tested
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Fatalf("the connection is still open: %q, %v", rest, err)
			}
		})
	}
}

// A refusal is answered at once, not after the body that never comes, and
// closes the connection.
func TestHTTPRefusalClosesAtOnce(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken}, func(tr *HTTPTransport) { tr.bodyTimeout = time.Hour })
	for _, tc := range []struct {
		name   string
		path   string
		hdr    []string
		status int
	}{
		{"without the token", PathMCP, []string{"Content-Type", "application/json"}, http.StatusUnauthorized},
		{"foreign Origin", PathMCP, mcpHeaders("", "Origin", "http://evil.example"), http.StatusForbidden},
		{"unknown path", "/nowhere", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.stalledRequest(http.MethodPost, tc.path, tc.hdr...)
			c.SetReadDeadline(time.Now().Add(waitLimit)) // a ceiling, far below BodyTimeout
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status || !res.Close {
				t.Fatalf("status %d, Connection %q; want %d and close", res.StatusCode, res.Header.Get("Connection"), tc.status)
			}
		})
	}
}

// A body that arrives slowly but within the deadline is read whole.
func TestHTTPSlowBodyWithinDeadline(t *testing.T) {
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	body := initLine(`"init"`, Version20250618)
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for i := 0; i < len(body); i += len(body)/4 + 1 {
			if i > 0 {
				time.Sleep(100 * time.Millisecond) // pacing: slower than one write, within bodyTimeout
			}
			if _, err := io.WriteString(pw, body[i:min(i+len(body)/4+1, len(body))]); err != nil {
				return
			}
		}
		pw.Close()
	})
	req, _ := http.NewRequest(http.MethodPost, f.url, pr)
	for h := mcpHeaders(""); len(h) > 1; h = h[2:] {
		req.Header.Set(h[0], h[1])
	}
	res, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get(HeaderSessionID) == "" {
		t.Fatalf("initialize sent slowly: %d", res.StatusCode)
	}
}

// A GET stream has no body: the body deadline never cuts it.
func TestHTTPStreamOutlivesBodyDeadline(t *testing.T) {
	b := &resBackend{changed: make(chan struct{})}
	f := newHTTPFixture(t, b, HTTPOptions{Token: testToken}, func(tr *HTTPTransport) { tr.bodyTimeout = 50 * time.Millisecond })
	sid := f.initialize(Version20250618)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, br := f.openStream(ctx, sid)

	// The condition: a body deadline set after the stream opened has passed.
	c := f.stalledRequest(http.MethodPost, PathMCP, mcpHeaders(sid)...)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the stalled request was not cut: %v", err)
	}

	if r := f.post(sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://r"}}`); r.status != http.StatusOK {
		t.Fatalf("subscribe: %d %s", r.status, r.body)
	}
	close(b.changed)
	if d := nextData(t, br); !strings.Contains(d, "notifications/resources/updated") {
		t.Fatalf("stream: %s", d)
	}
}
