package mcp

import (
	"context"
	"encoding/json"
	"math"
	"sync"

	"github.com/awbridge/awbridge/toolbus"
)

// Progress: the tool bus decides when (toolbus.Call.Progress); here
// notifications are rendered and sent, never after the reply, for a call
// the client cancelled or for a batch element, and dropped rather than
// waited for when the connection is behind.

// MethodProgress is the notification of a call's progress.
const MethodProgress = "notifications/progress"

// progressQueue is how many progress notifications may wait for an HTTP
// response stream; beyond it they are dropped.
const progressQueue = 16

// progressToken returns a _meta progressToken that MCP allows (a string,
// or a number without fraction or exponent), else nil.
func progressToken(raw json.RawMessage) json.RawMessage {
	switch {
	case len(raw) == 0:
		return nil
	case raw[0] == '"':
		return raw
	}
	for i, c := range raw {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return nil
		}
	}
	return raw
}

// progressSink sends one call's progress to the session's sink, tagged
// with the call's key, until stop: the reply is queued only after stop,
// so no notification follows it.
type progressSink struct {
	s     *session
	ctx   context.Context // the call's: cancelled by the client, no more
	key   string
	token json.RawMessage
	mu    sync.Mutex
	done  bool
}

// progressFor returns the toolbus sink of a request's progress, or nil
// when none is asked for (or the request is a batch element).
func (s *session) progressFor(ctx context.Context, q *request) *progressSink {
	if q.meta.progressToken == nil || q.b != nil {
		return nil
	}
	return &progressSink{s: s, ctx: ctx, key: q.key, token: q.meta.progressToken}
}

func (p *progressSink) send(u toolbus.ProgressUpdate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.ctx.Err() != nil {
		return
	}
	p.s.sink(outbound{about: p.key, b: progressNote(p.token, u)})
}

// stop ends the sink before the reply is queued.
func (p *progressSink) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// progressNote renders one notifications/progress.
func progressNote(token json.RawMessage, u toolbus.ProgressUpdate) []byte {
	finite := func(v float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	return notification(MethodProgress, struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total,omitempty"`
		Message  string          `json:"message,omitempty"`
	}{token, finite(u.Progress), max(finite(u.Total), 0), u.Message})
}
