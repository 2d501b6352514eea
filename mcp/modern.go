package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// ModernVersion is the MCP version served statelessly: a request whose
// params._meta names it is answered on its own, without initialize.
const ModernVersion = "2026-07-28"

// MCP 2026-07-28 error codes.
const (
	CodeHeaderMismatch     = -32020 // HTTP headers missing or not matching the body
	CodeUnsupportedVersion = -32022 // the request's protocol version is not served
)

// Cache hints of modern results (ttlMs, cacheScope). The lists and the
// discovery result are the same for every caller and change only with a
// new awbridge build: public, one hour. resources/read returns the
// person's own activity and health, which change any second: private and
// immediately stale (0).
const (
	ListTTLMillis = 3_600_000
	ReadTTLMillis = 0
)

// AllVersions returns every version served, newest first: the modern one,
// then the ones initialize negotiates.
func AllVersions() []string {
	out := versions()
	slices.Reverse(out)
	return out
}

// removedMethod reports whether name is a legacy method MCP 2026-07-28
// removed: a modern request for one is -32601.
func removedMethod(name string) bool {
	switch name {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
		"notifications/initialized", "notifications/roots/list_changed",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	}
	return false
}

// modernMethod reports whether name is an MCP method a modern request may
// call.
func modernMethod(name string) bool {
	switch name {
	case "server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
		"resources/read", "subscriptions/listen", "prompts/list", "prompts/get":
		return true
	}
	return false
}

// mcpMethod reports whether name is an MCP method of either era: it keeps
// its MCP meaning even when configured as a direct method.
func mcpMethod(name string) bool {
	return modernMethod(name) || removedMethod(name) || strings.HasPrefix(name, "notifications/")
}

// unsupportedVersionData is -32022's data.
func unsupportedVersionData(requested string) []byte {
	b, _ := jsonw.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{AllVersions(), requested})
	return b
}

// modernCheck validates a modern request's _meta: the code and message of
// the error that answers it, or 0.
func modernCheck(m requestMeta) (code int, msg string, data []byte) {
	if m.version != ModernVersion {
		return CodeUnsupportedVersion, "Unsupported protocol version", unsupportedVersionData(m.version)
	}
	if !m.hasCaps {
		return CodeInvalidParams, "invalid params: _meta." + MetaClientCapabilities + " (an object) is required", nil
	}
	return 0, "", nil
}

// handleModern answers a request of MCP 2026-07-28, statelessly: nothing
// it does depends on or changes the session's negotiated version.
func (s *session) handleModern(callCtx context.Context, q *request) {
	if code, msg, data := modernCheck(q.meta); code != 0 {
		s.fail(q, code, msg, data)
		return
	}
	v := q.meta.version
	switch q.method {
	case "server/discover":
		s.replyTo(q, resultReply(q.id, s.srv.discover))
	case "tools/list":
		s.replyTo(q, resultReply(q.id, s.srv.modernResult(s.srv.toolsList(v), ListTTLMillis, "public")))
	case "tools/call":
		s.toolsCall(callCtx, q, v)
	case "resources/list", "resources/templates/list", "resources/read":
		s.handleResource(callCtx, q, v)
	case "prompts/list", "prompts/get":
		s.handlePrompt(q, v)
	case "subscriptions/listen":
		s.listen(callCtx, q)
	default:
		s.fail(q, CodeMethodNotFound, notFound(q.method), nil)
	}
}

// notFound is -32601's message for a modern request.
func notFound(method string) string {
	if removedMethod(method) {
		return "method not found: " + bounded(method) + " is not part of MCP " + ModernVersion
	}
	return "method not found"
}

// modernMembers are the members every modern result starts with; lists
// and the discovery result add their cache hints.
type modernMembers struct {
	ResultType string `json:"resultType"`
	Meta       any    `json:"_meta"`
	TTL        *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

func (srv *Server) modernMembers() modernMembers {
	return modernMembers{ResultType: "complete", Meta: resultMeta{Info: &srv.info}}
}

// resultMeta is the _meta of a modern result, and of a subscription's
// messages.
type resultMeta struct {
	SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId,omitempty"`
	Info           *serverInfo     `json:"io.modelcontextprotocol/serverInfo,omitempty"`
}

// discoverResult is server/discover's result.
type discoverResult struct {
	modernMembers
	SupportedVersions []string     `json:"supportedVersions"`
	Capabilities      capabilities `json:"capabilities"`
	Instructions      string       `json:"instructions,omitempty"`
}

// modernResult adds resultType, the server's identity and the cache hints
// (none for ttl noCacheHints) to a result object rendered elsewhere (spliced in as it is: see
// resultReply).
func (srv *Server) modernResult(result []byte, ttl int, scope string) []byte {
	i := bytes.IndexByte(result, '{')
	if i < 0 {
		return result
	}
	m := srv.modernMembers()
	if ttl != noCacheHints {
		m.TTL, m.CacheScope = &ttl, scope
	}
	out := marshal(m)
	out = out[:len(out)-1]
	rest := result[i+1:]
	if firstByte(rest) != '}' {
		out = append(out, ',')
	}
	return appendRawJSON(out, rest)
}

// listenFilter is the part of subscriptions/listen's filter awbridge
// honours: resource updates of its own resources.
func listenFilter(raw json.RawMessage, rb ResourceBackend) (uris []string, ok bool) {
	uris = []string{}
	if raw == nil {
		return uris, true
	}
	if !isObject(raw) {
		return nil, false
	}
	var subs json.RawMessage
	if eachMember(raw, func(name []byte, val json.RawMessage) error {
		if string(name) == "resourceSubscriptions" {
			subs = val
		}
		return nil
	}) != nil {
		return nil, false
	}
	var asked []string // null: none
	if subs != nil && json.Unmarshal(subs, &asked) != nil {
		return nil, false
	}
	seen := map[string]bool{}
	for _, u := range asked {
		if rb != nil && rb.KnownResource(u) && !seen[u] {
			seen[u] = true
			uris = append(uris, u)
		}
	}
	return uris, true
}

// listen opens a subscriptions/listen stream: acknowledged at once with the
// honoured filter, then notifications/resources/updated for each
// subscribed resource, tagged with the subscription id (the request's id).
// It ends with no reply when the client cancels it, and with a completion
// result when the server ends it (the session stops).
func (s *session) listen(callCtx context.Context, q *request) {
	if q.b != nil {
		s.fail(q, CodeInvalidRequest, "invalid request: subscriptions/listen must not be batched", nil)
		return
	}
	rb := s.resourceBackend()
	uris, ok := listenFilter(q.params.notifications, rb)
	if !ok {
		s.fail(q, CodeInvalidParams, "invalid params: notifications must be a subscription filter object", nil)
		return
	}
	c := &call{id: append([]byte(nil), q.id...), key: q.key}
	ctx, cancel := context.WithCancel(callCtx)
	c.cancel = cancel
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		cancel()
		s.send(q.key, listenEnded(c.id, s.srv.info))
		return
	case s.idInUse(c.key):
		s.mu.Unlock()
		cancel()
		s.fail(q, CodeInvalidRequest, errIDInUse, nil)
		return
	case s.listens >= maxListens:
		s.mu.Unlock()
		cancel()
		s.fail(q, CodeInvalidRequest, "invalid request: too many subscriptions/listen streams on this connection", nil)
		return
	}
	s.listens++
	s.inflight[c.key] = append(s.inflight[c.key], c)
	s.calls.Add(1)
	s.mu.Unlock()

	filter := map[string]any{}
	if len(uris) > 0 {
		filter["resourceSubscriptions"] = uris
	}
	subID := resultMeta{SubscriptionID: c.id}
	ack := notification("notifications/subscriptions/acknowledged", map[string]any{"_meta": subID, "notifications": filter})
	// Arm every watch before the acknowledgement: a change right after it
	// must not be missed.
	changed := make([]<-chan struct{}, len(uris))
	release := make([]func(), len(uris))
	for i, uri := range uris {
		changed[i] = rb.ResourceChanged(uri)
		release[i] = watching(rb, uri)
	}
	s.sink(outbound{listen: c.key, b: ack})

	go func() {
		defer s.calls.Done()
		var wg sync.WaitGroup
		for i, uri := range uris {
			note := notification("notifications/resources/updated", map[string]any{"_meta": subID, "uri": uri})
			wg.Go(func() { defer release[i](); s.watch(ctx, rb, uri, changed[i], note, c.key) })
		}
		select {
		case <-ctx.Done():
		case <-s.stop:
		}
		cancel()
		wg.Wait()
		s.mu.Lock()
		s.listens--
		s.mu.Unlock()
		if s.forget(c) {
			return // the client cancelled it: nothing more for it
		}
		s.sink(outbound{key: c.key, listen: c.key, b: listenEnded(c.id, s.srv.info)})
	}()
}

// listenEnded is the completion result of the subscription id.
func listenEnded(id []byte, info serverInfo) []byte {
	return resultReply(id, marshal(modernMembers{ResultType: "complete",
		Meta: resultMeta{SubscriptionID: id, Info: &info}}))
}
