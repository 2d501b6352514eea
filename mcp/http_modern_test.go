package mcp

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPModern: 2026-07-28 requests need no session; their headers must
// mirror the body; every error carries the request's own id.
func TestHTTPModern(t *testing.T) {
	f := newHTTPFixture(t, &resBackend{changed: make(chan struct{})}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20251125)
	hdr := func(method string, more ...string) []string {
		return append([]string{HeaderProtocolVersion, ModernVersion, HeaderMethod, method}, more...)
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	for _, tc := range []struct {
		name, sid, body string
		hdr             []string
		status, code    int // code 0: a result
	}{
		{"discover", "", modernReq("7", "server/discover", ""), hdr("server/discover"), 200, 0},
		{"tools/list", "", modernReq("7", "tools/list", ""), hdr("tools/list"), 200, 0},
		{"session id ignored", "0123456789abcdef", modernReq("7", "tools/list", ""), hdr("tools/list"), 200, 0},
		{"beside a legacy session", sid, modernReq("7", "tools/list", ""), hdr("tools/list"), 200, 0},
		{"tools/call", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call", HeaderName, "ok"), 200, 0},
		{"Mcp-Name in base64", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call", HeaderName, b64("ok")), 200, 0},
		{"resources/read", "", modernReq("7", "resources/read", `"uri":"test://r"`), hdr("resources/read", HeaderName, "test://r"), 200, 0},
		{"unknown tool is a JSON-RPC error", "", modernReq("7", "tools/call", `"name":"x","arguments":{"mode":"resolve"}`), hdr("tools/call", HeaderName, "x"), 200, CodeInvalidParams},
		{"no MCP-Protocol-Version", "", modernReq("7", "tools/list", ""), []string{HeaderMethod, "tools/list"}, 400, CodeHeaderMismatch},
		{"MCP-Protocol-Version differs", "", modernReq("7", "tools/list", ""), []string{HeaderProtocolVersion, Version20251125, HeaderMethod, "tools/list"}, 400, CodeHeaderMismatch},
		{"no Mcp-Method", "", modernReq("7", "tools/list", ""), []string{HeaderProtocolVersion, ModernVersion}, 400, CodeHeaderMismatch},
		{"Mcp-Method differs", "", modernReq("7", "tools/list", ""), hdr("resources/list"), 400, CodeHeaderMismatch},
		{"Mcp-Method case differs", "", modernReq("7", "tools/list", ""), hdr("Tools/List"), 400, CodeHeaderMismatch},
		{"no Mcp-Name", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call"), 400, CodeHeaderMismatch},
		{"Mcp-Name differs", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call", HeaderName, "other"), 400, CodeHeaderMismatch},
		{"Mcp-Name raw non-ASCII", "", modernReq("7", "tools/call", `"name":"café","arguments":{}`), hdr("tools/call", HeaderName, "café"), 400, CodeHeaderMismatch},
		{"Mcp-Name non-ASCII in base64", "", modernReq("7", "tools/call", `"name":"café","arguments":{}`), hdr("tools/call", HeaderName, b64("café")), 200, 0},
		{"Mcp-Name plain uri in base64", "", modernReq("7", "resources/read", `"uri":"test://r"`), hdr("resources/read", HeaderName, b64("test://r")), 200, 0},
		{"Mcp-Name base64 of another name", "", modernReq("7", "tools/call", `"name":"café","arguments":{}`), hdr("tools/call", HeaderName, b64("cafe")), 400, CodeHeaderMismatch},
		{"Mcp-Name base64 of invalid UTF-8", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call", HeaderName, "=?base64?"+base64.StdEncoding.EncodeToString([]byte{0xff})+"?="), 400, CodeHeaderMismatch},
		{"Mcp-Name sentinel markers in upper case", "", modernReq("7", "tools/call", `"name":"ok","arguments":{}`), hdr("tools/call", HeaderName, "=?BASE64?b2s=?="), 400, CodeHeaderMismatch},
		{"Mcp-Method raw non-ASCII", "", modernReq("7", "tööls/list", ""), hdr("tööls/list"), 400, CodeHeaderMismatch},
		{"Mcp-Name bad base64", "", modernReq("7", "resources/read", `"uri":"test://r"`), hdr("resources/read", HeaderName, "=?base64?***?="), 400, CodeHeaderMismatch},
		{"unsupported version", "", strings.Replace(modernReq("7", "tools/list", ""), ModernVersion, "2099-01-01", 1), []string{HeaderProtocolVersion, "2099-01-01", HeaderMethod, "tools/list"}, 400, CodeUnsupportedVersion},
		{"no client capabilities", "", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, hdr("tools/list"), 400, CodeInvalidParams},
		{"2026-07-28 header, no _meta", "", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}`, hdr("server/discover"), 400, CodeInvalidParams},
		{"2026-07-28 header, _meta without its version", "", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, hdr("server/discover"), 400, CodeInvalidParams},
		{"unknown method", "", modernReq("7", "completion/complete", ""), hdr("completion/complete"), 404, CodeMethodNotFound},
		{"prompts/get: no Mcp-Name", "", modernReq("7", "prompts/get", `"name":"p"`), hdr("prompts/get"), 400, CodeHeaderMismatch},
		{"prompts/get: Mcp-Name differs", "", modernReq("7", "prompts/get", `"name":"p"`), hdr("prompts/get", HeaderName, "q"), 400, CodeHeaderMismatch},
		{"removed method", "", modernReq("7", "ping", ""), hdr("ping"), 404, CodeMethodNotFound},
		{"legacy request without a session: its own id", "", ping("7"), nil, 400, CodeInvalidRequest},
		{"unknown session: its own id", "0123456789abcdef", ping("7"), nil, 404, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.post(tc.sid, tc.body, tc.hdr...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if r.header.Get(HeaderSessionID) != "" {
				t.Fatal("a session id was minted")
			}
			rep := decodeReply(t, r.body)
			if string(rep.ID) != "7" {
				t.Fatalf("id %s, want the request's own: %s", rep.ID, r.body)
			}
			switch {
			case tc.code == 0 && (rep.Error != nil || !strings.Contains(string(rep.Result), `"resultType":"complete"`)):
				t.Fatalf("want a modern result: %s", r.body)
			case tc.code != 0 && (rep.Error == nil || rep.Error.Code != tc.code):
				t.Fatalf("want error %d: %s", tc.code, r.body)
			}
		})
	}
	if n := f.tr.Sessions(); n != 1 {
		t.Fatalf("sessions %d, want the legacy one only", n)
	}
	// GET and DELETE are legacy only.
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := f.do(m, PathMCP, "", mcpHeaders("", "Accept", "text/event-stream")...); r.status != http.StatusMethodNotAllowed {
			t.Fatalf("%s without a session: %d", m, r.status)
		}
	}
}

// subscriptions/listen over HTTP is an SSE stream that stays open: the
// acknowledgement, the tagged update, and at Shutdown the completion result.
func TestHTTPListen(t *testing.T) {
	b := &resBackend{changed: make(chan struct{}), watched: make(chan struct{}, 8)}
	f := newHTTPFixture(t, b, HTTPOptions{Token: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(modernReq("9", "subscriptions/listen", `"notifications":{"resourceSubscriptions":["test://r"]}`)))
	for i, h := 0, mcpHeaders("", HeaderProtocolVersion, ModernVersion, HeaderMethod, "subscriptions/listen"); i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	res, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("listen: %d %v", res.StatusCode, res.Header)
	}
	br := bufio.NewReader(res.Body)
	if d := nextData(t, br); !strings.Contains(d, `"notifications/subscriptions/acknowledged"`) || !strings.Contains(d, `"resourceSubscriptions":["test://r"]`) {
		t.Fatalf("ack %s", d)
	}
	b.waitWatched(t)
	close(b.changed)
	if d := nextData(t, br); !strings.Contains(d, `"notifications/resources/updated"`) || !strings.Contains(d, `"io.modelcontextprotocol/subscriptionId":9`) {
		t.Fatalf("update %s", d)
	}
	if err := f.tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	d := nextData(t, br)
	for strings.Contains(d, `"notifications/resources/updated"`) {
		d = nextData(t, br) // the resource kept changing
	}
	if !strings.Contains(d, `"id":9,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":9`) {
		t.Fatalf("end %s", d)
	}
}

// modernHTTP sends one 2026-07-28 request over real HTTP without touching
// t (it may run on another goroutine); name fills Mcp-Name when not "".
func (f *httpFixture) modernHTTP(ctx context.Context, body, method, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := mcpHeaders("", HeaderProtocolVersion, ModernVersion, HeaderMethod, method)
	if name != "" {
		h = append(h, HeaderName, name)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	return f.ts.Client().Do(req)
}

// wantBusy checks a refusal for want of room: 503, Retry-After, and
// ConcurrencyLimited under the request's own id.
func wantBusy(t *testing.T, res *http.Response, id string) {
	t.Helper()
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q, want 503 and 1: %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	rep := decodeReply(t, string(body))
	if string(rep.ID) != id || rep.Error == nil || rep.Error.Code != CodeConcurrencyLimited ||
		!strings.Contains(string(rep.Error.Data), `"code":"ConcurrencyLimited"`) || !strings.Contains(string(rep.Error.Data), `"retryable":true`) {
		t.Fatalf("want ConcurrencyLimited (-32006) under id %s: %s", id, body)
	}
}

// Modern requests each run on a session of their own, so the transport
// caps them as a whole: beyond MaxModernCalls requests in progress, or
// MaxListens open subscriptions/listen streams, a request is refused at
// once (503) instead of piling up; the requests in progress are not
// disturbed and the room comes back as they end.
func TestHTTPModernCaps(t *testing.T) {
	g := newGate()
	f := newHTTPFixture(t, g, HTTPOptions{Token: testToken}, func(tr *HTTPTransport) { tr.maxModern, tr.maxListens = 2, 1 })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	call := func(id string) (*http.Response, error) {
		return f.modernHTTP(ctx, modernReq(id, "tools/call", `"name":"slow","arguments":{}`), "tools/call", "slow")
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, 2)
	for _, id := range []string{"1", "2"} {
		go func() {
			res, err := call(id)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			answers <- answer{res.StatusCode, string(b), err}
		}()
	}
	g.waitStarted(t, 2)
	for _, tc := range []struct{ id, method, params, name string }{
		{"3", "tools/call", `"name":"slow","arguments":{}`, "slow"},
		{`"list"`, "tools/list", "", ""},
	} {
		res, err := f.modernHTTP(ctx, modernReq(tc.id, tc.method, tc.params), tc.method, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		wantBusy(t, res, tc.id)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	for range 2 {
		a := <-answers
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"released"`) {
			t.Fatalf("a call in progress: %d %s %v", a.status, a.body, a.err)
		}
	}
	g.release <- struct{}{}
	res, err := call("4")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"released"`) {
		t.Fatalf("once the calls ended: %d %s", res.StatusCode, b)
	}
	res.Body.Close()

	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	first, err := f.modernHTTP(lctx, modernReq("5", "subscriptions/listen", ""), "subscriptions/listen", "")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	br := bufio.NewReader(first.Body)
	if d := nextData(t, br); !strings.Contains(d, `"notifications/subscriptions/acknowledged"`) {
		t.Fatalf("ack %s", d)
	}
	second, err := f.modernHTTP(ctx, modernReq(`"six"`, "subscriptions/listen", ""), "subscriptions/listen", "")
	if err != nil {
		t.Fatal(err)
	}
	wantBusy(t, second, `"six"`)
	// A call is still served beside the open stream.
	g.release <- struct{}{}
	if res, err = call("7"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("a call beside the open listen: %v %v", res, err)
	}
	res.Body.Close()
}
