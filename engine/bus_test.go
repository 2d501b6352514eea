package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// An open circuit answers CircuitOpen without touching ActivityWatch.
func TestOpenCircuitDoesNotTouchTheUpstream(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c := config.Defaults()
	c.AW.URL = srv.URL
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range 3 {
		e.Call(context.Background(), toolbus.Request{Name: "aw_get_state"})
	}
	before := hits.Load()
	out := e.Call(context.Background(), toolbus.Request{Name: "aw_get_state"})
	if out.Err == nil || out.Err.Code != toolbus.CodeCircuitOpen || out.Err.RetryAfterMs == nil || *out.Err.RetryAfterMs <= 0 {
		t.Fatalf("after three failures: %+v", out.Err)
	}
	if hits.Load() != before {
		t.Fatalf("the open circuit reached ActivityWatch %d more times", hits.Load()-before)
	}
	if !bytes.Contains(out.Body, []byte(`"circuit":"open"`)) || !bytes.Contains(out.Body, []byte(`{"tool":"system_health"`)) {
		t.Fatalf("envelope: %s", out.Body)
	}
	h := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "system.health"})
	if !bytes.Contains(h.Body, []byte(`"circuit":"open"`)) {
		t.Fatalf("health does not show the open circuit: %s", h.Body)
	}
}

// Direct methods pass the same pipeline: shaping, store_as, artifacts.
func TestDirectMethodsPassThePipeline(t *testing.T) {
	root := t.TempDir()
	e, _ := fixtureEngine(t, func(c *config.Config) { c.Paths.ContextRoot = root })
	out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build",
		Args: json.RawMessage(`{"reason":"x","trace_id":"direct","span_id":"d1","output":{"path":"now.window","pick":["app"]},"store_as":"w"}`)})
	if out.Err != nil || string(out.Body) != `{"app":"Google-chrome"}` {
		t.Fatalf("direct shaped result = %s, %v", out.Body, out.Err)
	}
	env, err := os.ReadFile(filepath.Join(root, "artifacts/runs/direct/tool_calls/d1/result.json"))
	if err != nil || !bytes.Contains(env, []byte(`"tool":"nowframe.build"`)) {
		t.Fatalf("no artifact for the direct call: %v", err)
	}
	got := e.Call(context.Background(), toolbus.Request{Name: "state", Args: json.RawMessage(`{"action":"get","key":"w"}`)})
	if !bytes.Contains(got.Body, []byte(`"value":{"app":"Google-chrome"}`)) {
		t.Fatalf("stored by the direct call: %s", got.Body)
	}
}

// nowframe_build honours the caller's timeout_ms: a hanging ActivityWatch
// does not hold the call past it.
func TestNowframeHonoursTimeout(t *testing.T) {
	hang := hangingServer(t)
	c := config.Defaults()
	c.AW.URL = hang.URL
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := e.Call(context.Background(), toolbus.Request{Name: "nowframe_build", Args: json.RawMessage(`{"timeout_ms":50}`)})
	if out.Err == nil || out.Err.Code != toolbus.CodeTimeout || !out.Err.Retryable {
		t.Fatalf("nowframe_build with timeout_ms 50 and a hanging ActivityWatch: %+v", out.Err)
	}
}
