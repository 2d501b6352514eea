package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}`

func modernReq(id, method, params string) string {
	if params != "" {
		params = "," + params
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + modernMeta + params + `}}`
}

// TestModernRequests: a request carrying 2026-07-28 in _meta is served
// without initialize, beside a legacy session on the same connection.
func TestModernRequests(t *testing.T) {
	srv := NewServer(&resBackend{changed: make(chan struct{})}, Options{ServerVersion: "9.9", Instructions: "be brief"})
	has := func(members ...string) check {
		return func(t *testing.T, res map[string]json.RawMessage) {
			t.Helper()
			for _, m := range members {
				k, v, _ := strings.Cut(m, "=")
				if got, ok := res[k]; !ok || (v != "" && string(got) != v) {
					t.Errorf("member %s = %s, want %s", k, got, v)
				}
			}
		}
	}
	serverInfo := `_meta={"io.modelcontextprotocol/serverInfo":{"name":"awbridge","version":"9.9"}}`
	list := has(`resultType="complete"`, serverInfo, "ttlMs=3600000", `cacheScope="public"`)
	for _, tc := range []struct {
		name, version, line string
		code                int // 0: a result
		check               check
	}{
		{"discover", "", modernReq("1", "server/discover", ""), 0,
			has(`resultType="complete"`, serverInfo, `supportedVersions=["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`,
				"ttlMs=3600000", `cacheScope="public"`, "instructions", "capabilities")},
		{"tools/list", "", modernReq("1", "tools/list", ""), 0, has(`tools`).and(list)},
		{"tools/list in a legacy session", Version20250618, modernReq("1", "tools/list", ""), 0, list},
		{"resources/list", "", modernReq("1", "resources/list", ""), 0, has("resources").and(list)},
		{"resources/templates/list", "", modernReq("1", "resources/templates/list", ""), 0, has("resourceTemplates").and(list)},
		{"resources/read", "", modernReq("1", "resources/read", `"uri":"test://r"`), 0,
			has(`resultType="complete"`, serverInfo, "ttlMs=0", `cacheScope="private"`, "contents")},
		{"tools/call", "", modernReq(`"c"`, "tools/call", `"name":"ok","arguments":{}`), 0,
			has(`resultType="complete"`, serverInfo, "content", "structuredContent", "isError=false")},
		{"invalid arguments are a tool result", "", modernReq("1", "tools/call", `"name":"ok","arguments":{"mode":"validate"}`), 0,
			has(`resultType="complete"`, "isError=true")},
		{"unknown tool", "", modernReq("1", "tools/call", `"name":"nope","arguments":{"mode":"resolve"}`), CodeInvalidParams, nil},
		{"unknown resource", "", modernReq("1", "resources/read", `"uri":"x://y"`), CodeInvalidParams, nil},
		{"unsupported version", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, CodeUnsupportedVersion, nil},
		{"no client capabilities", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, CodeInvalidParams, nil},
		{"version not a string", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`, CodeInvalidParams, nil},
		{"initialize removed", "", modernReq("1", "initialize", `"protocolVersion":"2026-07-28"`), CodeMethodNotFound, nil},
		{"ping removed", "", modernReq("1", "ping", ""), CodeMethodNotFound, nil},
		{"logging/setLevel removed", "", modernReq("1", "logging/setLevel", `"level":"info"`), CodeMethodNotFound, nil},
		{"resources/subscribe removed", "", modernReq("1", "resources/subscribe", `"uri":"test://r"`), CodeMethodNotFound, nil},
		{"unknown method", "", modernReq("1", "prompts/list", ""), CodeMethodNotFound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := serveOne(t, srv, tc.version, tc.line)
			if len(out) != 1 {
				t.Fatalf("replies %v", out)
			}
			r := out[0].Reply
			r.Raw = out[0].Raw
			if string(r.ID) != "1" && string(r.ID) != `"c"` {
				t.Fatalf("id %s", r.ID)
			}
			if tc.code != 0 {
				if r.Error == nil || r.Error.Code != tc.code {
					t.Fatalf("reply %s, want error %d", r.Raw, tc.code)
				}
				if tc.code == CodeUnsupportedVersion && !strings.Contains(out[0].Raw, `"data":{"supported":["2026-07-28",`) ||
					tc.code == CodeUnsupportedVersion && !strings.Contains(out[0].Raw, `"requested":"2099-01-01"`) {
					t.Fatalf("-32022 without its data: %s", out[0].Raw)
				}
				return
			}
			var res map[string]json.RawMessage
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatalf("result %s: %v", out[0].Raw, err)
			}
			tc.check(t, res)
		})
	}
}

func (c check) and(d check) check {
	return func(t *testing.T, res map[string]json.RawMessage) { c(t, res); d(t, res) }
}

type check func(t *testing.T, res map[string]json.RawMessage)

// The legacy tools/list stays as it was, and the version asked of the
// Backend is the request's own.
func TestModernToolsListVersion(t *testing.T) {
	b := &versionBackend{}
	srv := NewServer(b, Options{})
	serveOne(t, srv, Version20250618, modernReq("1", "tools/list", ""))
	if got := b.asked(); len(got) != 1 || got[0] != ModernVersion {
		t.Fatalf("ToolsList asked %v", got)
	}
}

// A W3C traceparent in _meta reaches the tool bus, in either era.
func TestTraceParentReachesBackend(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{},"_meta":{"traceparent":"` + tp + `"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{},"_meta":{"traceparent":"` + tp + `","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		b := &stageBackend{}
		serveOne(t, NewServer(b, Options{}), "", line)
		if reqs := b.requests(); len(reqs) != 1 || reqs[0].TraceParent != tp {
			t.Fatalf("requests %+v", reqs)
		}
	}
}

// subscriptions/listen over a stream: acknowledged with the honoured
// filter, updates tagged with the subscription id, no reply once the
// client cancels it, a completion result when the server ends it.
func TestListenOverStream(t *testing.T) {
	b := &resBackend{changed: make(chan struct{}), watched: make(chan struct{}, 8)}
	srv := NewServer(b, Options{})
	c := startConn(t, srv)
	c.send(modernReq(`"L"`, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["test://r","x://unknown"],"toolsListChanged":true}`))
	ack := <-c.lines
	if ack != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"notifications":{"resourceSubscriptions":["test://r"]}}}` {
		t.Fatalf("ack %s", ack)
	}
	b.waitWatched(t)
	close(b.changed)
	if note := <-c.lines; note != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"uri":"test://r"}}` {
		t.Fatalf("update %s", note)
	}
	// A second listen, cancelled by the client: nothing more for it.
	c.send(modernReq("2", "subscriptions/listen", `"notifications":{}`))
	if ack := <-c.lines; !strings.Contains(ack, `/subscriptionId":2},"notifications":{}}`) {
		t.Fatalf("ack %s", ack)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, ping("3"))
	if r := c.recv(); string(r.ID) != "3" {
		t.Fatalf("reply %+v", r)
	}
	// The end of input ends "L" with its completion result.
	rest, err := c.closeAndWait()
	if err != nil {
		t.Fatal(err)
	}
	var closed []string
	for _, l := range rest {
		if !strings.Contains(l, "notifications/resources/updated") {
			closed = append(closed, l)
		}
	}
	if len(closed) != 1 || closed[0] != `{"jsonrpc":"2.0","id":"L","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L","io.modelcontextprotocol/serverInfo":{"name":"awbridge","version":"dev"}}}}` {
		t.Fatalf("after the end of input %q", rest)
	}
}

// A call read while the session stops still gets exactly one reply: here
// the reader holds call 2 (waiting for the only in-flight slot) when the
// server shuts down.
func TestCallReadAtShutdownIsAnswered(t *testing.T) {
	g := newGate()
	srv := tuned(NewServer(g, Options{MaxInFlight: 1}), 0, 0, time.Hour)
	paused := make(chan struct{}, 4)
	srv.hooks.readPaused = func() { paused <- struct{}{} }
	c := startConn(t, srv)
	c.send(toolCall("1", "a", `{}`), toolCall("2", "b", `{}`))
	g.waitStarted(t, 1)
	select {
	case <-paused:
	case <-time.After(waitLimit):
		t.Fatal("the reader never waited for a slot")
	}
	c.cancel()
	// Call 2 is answered at once (it never ran), call 1 once released.
	r := c.recv()
	if string(r.ID) != "2" || !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), toolbus.CodeCancelled) {
		t.Fatalf("call 2: %s", r.Raw)
	}
	g.release <- struct{}{}
	if r := c.recv(); string(r.ID) != "1" {
		t.Fatalf("call 1: %s", r.Raw)
	}
	c.in.Close()
	if rest, err := c.wait(); err != nil || len(rest) != 0 {
		t.Fatalf("Serve = %v, more lines %q", err, rest)
	}
	if n := g.started64.Load(); n != 1 {
		t.Fatalf("%d calls ran, want 1", n)
	}
}

type versionBackend struct {
	stageBackend
	versions []string
}

func (b *versionBackend) ToolsList(v string) json.RawMessage {
	b.mu.Lock()
	b.versions = append(b.versions, v)
	b.mu.Unlock()
	return json.RawMessage(fakeToolsList)
}

func (b *versionBackend) asked() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.versions...)
}

var _ = context.Background

// blockingWatch is a resBackend whose ResourceChanged blocks until
// released, so a test can see what the client was told before the watch
// was armed.
type blockingWatch struct {
	resBackend
	entered, release chan struct{}
}

func (b *blockingWatch) ResourceChanged(uri string) <-chan struct{} {
	b.entered <- struct{}{}
	<-b.release
	return b.resBackend.ResourceChanged(uri)
}

// A subscription is armed by the time the client hears it exists: the
// acknowledgement of a listen and the reply to resources/subscribe come
// after the resource's next-change channel was taken, so a change right
// after them is never lost. Here arming blocks, and no answer may arrive
// while it does.
func TestSubscriptionArmedBeforeItsAcknowledgement(t *testing.T) {
	for _, tc := range []struct{ name, init, req string }{
		{"subscriptions/listen", "", modernReq(`"L"`, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["test://r"]}`)},
		{"resources/subscribe", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &blockingWatch{resBackend: resBackend{changed: make(chan struct{})}, entered: make(chan struct{}, 1), release: make(chan struct{})}
			c := startConn(t, NewServer(b, Options{}))
			if tc.init != "" {
				c.send(tc.init)
				<-c.lines
			}
			c.send(tc.req)
			<-b.entered
			select {
			case l := <-c.lines:
				t.Fatalf("answered while the watch was not armed yet: %s", l)
			case <-time.After(300 * time.Millisecond):
			}
			close(b.release)
			<-c.lines
			c.closeAndWait()
		})
	}
}

// An unknown resource's error echoes its URI bounded, however long the
// client made it (review: a 300,000-character URI came back whole).
func TestUnknownResourceURIEchoedBounded(t *testing.T) {
	c := startConn(t, NewServer(&resBackend{changed: make(chan struct{})}, Options{}))
	long := "x://" + strings.Repeat("a", 100_000)
	c.send(modernReq("1", "resources/read", `"uri":"`+long+`"`))
	line := <-c.lines
	if !strings.Contains(line, `"code":-32602`) || len(line) > 1024 {
		t.Fatalf("%d bytes: %.200s", len(line), line)
	}
	c.closeAndWait()
}

// A second subscriptions/listen (or any request) under the id of an open
// listen is refused with -32600 under that id; the open listen goes on.
// Once the client cancelled it, the id is free again.
func TestListenIDInUse(t *testing.T) {
	b := &resBackend{changed: make(chan struct{}), watched: make(chan struct{}, 8)}
	c := startConn(t, NewServer(b, Options{}))
	c.send(modernReq(`"L"`, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["test://r"]}`))
	if ack := <-c.lines; !strings.Contains(ack, `"notifications/subscriptions/acknowledged"`) {
		t.Fatalf("ack %s", ack)
	}
	for _, line := range []string{
		modernReq(`"L"`, "subscriptions/listen", `"notifications":{}`),
		modernReq(`"L"`, "tools/call", `"name":"ok","arguments":{}`),
	} {
		c.send(line)
		if r := c.recv(); string(r.ID) != `"L"` || r.Error == nil || r.Error.Code != CodeInvalidRequest || r.Error.Message != errIDInUse {
			t.Fatalf("got %s, want -32600 %q", r.Raw, errIDInUse)
		}
	}
	// The first listen is still open: it gets the update.
	b.waitWatched(t)
	close(b.changed)
	if note := <-c.lines; note != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"uri":"test://r"}}` {
		t.Fatalf("update %s", note)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`,
		modernReq(`"L"`, "subscriptions/listen", `"notifications":{}`))
	for {
		l := <-c.lines
		if strings.Contains(l, "notifications/resources/updated") {
			continue // the resource kept changing before the cancel
		}
		if !strings.Contains(l, `"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"notifications":{}}`) {
			t.Fatalf("got %s, want the new listen's acknowledgement", l)
		}
		break
	}
}
