package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// ResourceBackend is implemented by a Backend that serves MCP resources
// (awbridge's nowframe://current and health://current). Safe for
// concurrent use.
type ResourceBackend interface {
	// ResourcesList is the pre-rendered result of resources/list.
	ResourcesList() json.RawMessage
	// ReadResource returns the result of resources/read for uri
	// ({"contents":[...]}), or false for an unknown uri.
	ReadResource(ctx context.Context, uri string) (json.RawMessage, bool)
	// KnownResource reports whether uri is one of ResourcesList's.
	KnownResource(uri string) bool
	// ResourceChanged returns a channel closed at uri's next change (a
	// known uri).
	ResourceChanged(uri string) <-chan struct{}
}

// ResourceWatcher is implemented by a ResourceBackend that wants to know
// while a resource has subscribers (awbridge polls faster then):
// WatchResource is called as a subscription to uri starts, and release
// once it ends.
type ResourceWatcher interface {
	WatchResource(uri string) (release func())
}

// watching tells rb, when it is a ResourceWatcher, that uri has a
// subscriber until release is called.
func watching(rb ResourceBackend, uri string) (release func()) {
	if w, ok := rb.(ResourceWatcher); ok {
		return w.WatchResource(uri)
	}
	return func() {}
}

// resourceDebounce is the least time between two updates of one resource
// to one session.
const resourceDebounce = time.Second

func (s *session) resourceBackend() ResourceBackend {
	rb, _ := s.srv.backend.(ResourceBackend)
	return rb
}

// handleResource answers resources/list, templates/list, read, subscribe
// and unsubscribe; v is the modern version of the request ("" legacy).
func (s *session) handleResource(callCtx context.Context, q *request, v string) {
	rb := s.resourceBackend()
	if rb == nil {
		s.fail(q, CodeMethodNotFound, "method not found", nil)
		return
	}
	modern := v != ""
	list := func(res []byte) []byte {
		if modern {
			return s.srv.modernResult(res, ListTTLMillis, "public")
		}
		return res
	}
	switch q.method {
	case "resources/list":
		s.replyTo(q, resultReply(q.id, list(rb.ResourcesList())))
		return
	case "resources/templates/list":
		// Every resource has a fixed URI: no templates. Clients that
		// advertise resources ask for both lists.
		s.replyTo(q, resultReply(q.id, list([]byte(`{"resourceTemplates":[]}`))))
		return
	}
	uri, ok := asString(q.params.uri)
	if !ok || uri == "" {
		s.fail(q, CodeInvalidParams, "invalid params: uri (a string) is required", nil)
		return
	}
	unknown := func() []byte {
		if modern {
			data, _ := jsonw.Marshal(map[string]string{"uri": bounded(uri)}) // the client's text, echoed bounded
			return errorReply(q.id, CodeInvalidParams, "Resource not found", data)
		}
		return errorReply(q.id, CodeInvalidParams, "invalid params: unknown resource (see resources/list)", nil)
	}
	if q.method != "resources/unsubscribe" && !rb.KnownResource(uri) {
		s.replyTo(q, unknown())
		return
	}
	switch q.method {
	case "resources/read":
		// Reading may build a frame: off the reading goroutine.
		if q.b != nil {
			q.b.hold()
		}
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			res, ok := rb.ReadResource(callCtx, uri)
			var reply []byte
			switch {
			case !ok:
				reply = unknown()
			case modern:
				reply = resultReply(q.id, s.srv.modernResult(res, ReadTTLMillis, "private"))
			default:
				reply = resultReply(q.id, res)
			}
			if q.b != nil {
				q.b.done(reply)
			} else {
				s.send(q.key, reply)
			}
		}()
	case "resources/subscribe":
		s.mu.Lock()
		if _, dup := s.subs[uri]; !dup && !s.stopped {
			ctx, cancel := context.WithCancel(callCtx)
			s.subs[uri] = cancel
			s.calls.Add(1)
			note := notification("notifications/resources/updated", map[string]string{"uri": uri})
			changed := rb.ResourceChanged(uri) // armed before the reply: no change after it is missed
			release := watching(rb, uri)
			go func() {
				defer s.calls.Done()
				defer release()
				s.watch(ctx, rb, uri, changed, note, "")
			}()
		}
		s.mu.Unlock()
		s.replyTo(q, resultReply(q.id, []byte("{}")))
	case "resources/unsubscribe":
		s.mu.Lock()
		if cancel, ok := s.subs[uri]; ok {
			cancel()
			delete(s.subs, uri)
		}
		s.mu.Unlock()
		s.replyTo(q, resultReply(q.id, []byte("{}")))
	}
}

// watch sends note at each change of uri, at most once per
// resourceDebounce, until ctx ends or the session stops. changed is uri's
// next-change channel, taken by the caller before it told the client the
// subscription exists. listen is the subscription the notes belong to (""
// legacy).
func (s *session) watch(ctx context.Context, rb ResourceBackend, uri string, changed <-chan struct{}, note []byte, listen string) {
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		}
		// Take the next change's channel before sending, so a change
		// during the send or the debounce is not missed (trailing edge).
		changed = rb.ResourceChanged(uri)
		s.sink(outbound{listen: listen, b: note})
		t := time.NewTimer(resourceDebounce)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.stop:
			t.Stop()
			return
		}
	}
}
