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

// resourceDebounce is the least time between two updates of one resource
// to one session.
const resourceDebounce = time.Second

func (s *session) resourceBackend() ResourceBackend {
	rb, _ := s.srv.backend.(ResourceBackend)
	return rb
}

// handleResource answers resources/list, templates/list, read, subscribe
// and unsubscribe.
func (s *session) handleResource(callCtx context.Context, method string, id, params []byte, b *batch) {
	rb := s.resourceBackend()
	if rb == nil {
		s.reply(b, errorReply(id, CodeMethodNotFound, "method not found", nil))
		return
	}
	switch method {
	case "resources/list":
		s.reply(b, resultReply(id, rb.ResourcesList()))
		return
	case "resources/templates/list":
		// Every resource has a fixed URI: no templates. Clients that
		// advertise resources ask for both lists.
		s.reply(b, resultReply(id, []byte(`{"resourceTemplates":[]}`)))
		return
	}
	var p struct {
		URI string `json:"uri"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.URI == "" {
		s.reply(b, errorReply(id, CodeInvalidParams, "invalid params: uri (a string) is required", nil))
		return
	}
	unknown := func() {
		s.reply(b, errorReply(id, CodeInvalidParams, "invalid params: unknown resource (see resources/list)", nil))
	}
	switch method {
	case "resources/read":
		if !rb.KnownResource(p.URI) {
			unknown()
			return
		}
		// Reading may build a frame: off the reading goroutine.
		if b != nil {
			b.hold()
		}
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			res, ok := rb.ReadResource(callCtx, p.URI)
			reply := resultReply(id, res)
			if !ok {
				reply = errorReply(id, CodeInvalidParams, "invalid params: unknown resource (see resources/list)", nil)
			}
			if b != nil {
				b.done(reply)
			} else {
				s.send(reply)
			}
		}()
	case "resources/subscribe":
		if !rb.KnownResource(p.URI) {
			unknown()
			return
		}
		s.mu.Lock()
		if _, dup := s.subs[p.URI]; !dup && !s.stopped {
			ctx, cancel := context.WithCancel(callCtx)
			s.subs[p.URI] = cancel
			s.calls.Add(1)
			go s.watch(ctx, rb, p.URI)
		}
		s.mu.Unlock()
		s.reply(b, resultReply(id, []byte("{}")))
	case "resources/unsubscribe":
		s.mu.Lock()
		if cancel, ok := s.subs[p.URI]; ok {
			cancel()
			delete(s.subs, p.URI)
		}
		s.mu.Unlock()
		s.reply(b, resultReply(id, []byte("{}")))
	}
}

// watch sends notifications/resources/updated for uri at each change, at
// most once per resourceDebounce, until unsubscribed or the session ends.
func (s *session) watch(ctx context.Context, rb ResourceBackend, uri string) {
	defer s.calls.Done()
	note := append([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":`), jsonw.AppendString(nil, uri)...)
	note = append(note, "}}"...)
	changed := rb.ResourceChanged(uri)
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
		s.send(note)
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
