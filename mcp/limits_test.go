package mcp

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// nested is a tools/call whose arguments hold a value nesting to depth
// total for the whole message (the message object, params and arguments
// take three levels).
func nested(id string, total int) string {
	n := total - 3
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"t","arguments":{"v":` +
		strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
}

// wide is a tools/call whose arguments hold an array of n elements.
func wide(id string, n int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"t","arguments":{"v":[` +
		strings.TrimSuffix(strings.Repeat("0,", n), ",") + `]}}}`
}

// Every message is bounded in depth and in members and elements: beyond
// them one -32600 names the bound, echoes the id, never reaches the backend,
// and the stream goes on.
func TestMessageBounds(t *testing.T) {
	b := &stageBackend{}
	srv := NewServer(b, Options{MaxLineBytes: 4 << 20})
	atItems := MaxMessageItems - 7 // jsonrpc, id, method, params; name, arguments; v
	input := strings.Join([]string{
		initLine("0", Version20250618),
		nested("1", MaxMessageDepth),
		nested("2", MaxMessageDepth+1),
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`,
		wide("4", atItems),
		wide("5", atItems+1),
		`{"jsonrpc":"2.0","id":6,"method":"ping","params":{` + strings.TrimSuffix(strings.Repeat(`"k":1,`, MaxMessageItems+1), ",") + `}}`,
		ping("7"),
	}, "\n")
	got := runLines(t, srv, input)
	byID := map[string]wireReply{}
	for _, ol := range got {
		byID[string(ol.Reply.ID)] = ol.Reply
	}
	for _, tt := range []struct {
		id, wantMsg string
	}{
		{"1", ""},
		{"2", "invalid request: the message nests deeper than 64 levels"},
		{"3", "invalid request: the message nests deeper than 64 levels"},
		{"4", ""},
		{"5", "invalid request: the message has more than 10000 members and elements"},
		{"6", "invalid request: the message has more than 10000 members and elements"},
		{"7", ""},
	} {
		r, ok := byID[tt.id]
		switch {
		case !ok:
			t.Errorf("id %s: no reply", tt.id)
		case tt.wantMsg == "" && r.Error != nil && r.Error.Code == CodeInvalidRequest:
			t.Errorf("id %s: refused at the bound: %s", tt.id, r.Error.Message)
		case tt.wantMsg != "" && (r.Error == nil || r.Error.Code != CodeInvalidRequest || r.Error.Message != tt.wantMsg):
			t.Errorf("id %s: %s, want -32600 %q", tt.id, r.Raw, tt.wantMsg)
		}
	}
	calls := 0
	for _, req := range b.requests() {
		if req.Name == "t" {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("the backend saw %d tool calls, want the 2 within bounds", calls)
	}

	// The same bounds over HTTP: 400 with the JSON-RPC error.
	f := newHTTPFixture(t, &stageBackend{}, HTTPOptions{Token: testToken})
	sid := f.initialize(Version20250618)
	if r := f.post(sid, nested("8", MaxMessageDepth+1)); r.status != http.StatusBadRequest || !strings.Contains(r.body, "nests deeper than 64") {
		t.Errorf("HTTP, too deep: %d %s", r.status, r.body)
	}
	if r := f.post(sid, wide("9", MaxMessageItems)); r.status != http.StatusBadRequest || !strings.Contains(r.body, "more than 10000") {
		t.Errorf("HTTP, too wide: %d %s", r.status, r.body)
	}
	if r := f.post(sid, ping("10")); r.status != http.StatusOK {
		t.Errorf("HTTP, ping after: %d %s", r.status, r.body)
	}
}

// Subscriptions are one per known resource and session, however often a
// client subscribes; unsubscribing releases them.
func TestSubscriptionsAreBounded(t *testing.T) {
	b := &resBackend{changed: make(chan struct{})}
	srv := NewServer(b, Options{})
	c := startConn(t, srv)
	c.send(initLine("0", Version20250618))
	c.recv()
	base := runtime.NumGoroutine()
	const n = 500
	for i := range n {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"test://r"}}`, i+1))
		if r := c.recv(); r.Error != nil {
			t.Fatalf("subscribe: %s", r.Raw)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":"u","method":"resources/subscribe","params":{"uri":"test://other"}}`)
	if r := c.recv(); r.Error == nil || r.Error.Code != CodeInvalidParams {
		t.Fatalf("unknown resource: %s", r.Raw)
	}
	if g := runtime.NumGoroutine(); g > base+5 {
		t.Fatalf("%d subscriptions to one resource left %d goroutines (base %d)", n, g, base)
	}
	for i := range n {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"resources/subscribe","params":{"uri":"test://r"}}`, i),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":"x%d","method":"resources/unsubscribe","params":{"uri":"test://r"}}`, i))
		c.recv()
		c.recv()
	}
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > base+5 {
		if time.Now().After(deadline) {
			t.Fatalf("after %d subscribe/unsubscribe pairs: %d goroutines (base %d)", n, runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
