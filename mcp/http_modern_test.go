package mcp

import (
	"bufio"
	"context"
	"encoding/base64"
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
		{"Mcp-Name bad base64", "", modernReq("7", "resources/read", `"uri":"test://r"`), hdr("resources/read", HeaderName, "=?base64?***?="), 400, CodeHeaderMismatch},
		{"unsupported version", "", strings.Replace(modernReq("7", "tools/list", ""), ModernVersion, "2099-01-01", 1), []string{HeaderProtocolVersion, "2099-01-01", HeaderMethod, "tools/list"}, 400, CodeUnsupportedVersion},
		{"no client capabilities", "", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, hdr("tools/list"), 400, CodeInvalidParams},
		{"2026-07-28 header, no _meta", "", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}`, hdr("server/discover"), 400, CodeInvalidParams},
		{"2026-07-28 header, _meta without its version", "", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, hdr("server/discover"), 400, CodeInvalidParams},
		{"unknown method", "", modernReq("7", "prompts/list", ""), hdr("prompts/list"), 404, CodeMethodNotFound},
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
