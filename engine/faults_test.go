package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// TestActivityWatchFaults: for each way ActivityWatch can fail, the frame
// still answers with aw fields null and the reason, aw_get_state is a
// retryable AwUnavailable, health is degraded, and the engine keeps serving.
func TestActivityWatchFaults(t *testing.T) {
	faults := []struct {
		name string
		h    http.HandlerFunc
		want string // in the error message
		// timeout is the source's deadline: short where the fault is
		// slowness, generous where a slow machine must not turn another
		// fault into a timeout.
		timeout time.Duration
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			w.Write([]byte(`{"message": "Internal Server Error"}`))
		}, "500", 5 * time.Second},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><title>not ActivityWatch</title>"))
		}, "JSON", 5 * time.Second},
		{"invalid json", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"hostname": "vm", "version": `))
		}, "JSON", 5 * time.Second},
		{"huge body", func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte(" "), 64<<10)
			w.Write([]byte(`{"hostname":"`))
			for range 200 { // 12.5 MiB, past the 8 MiB bound
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "too large", 10 * time.Second},
		{"slower than its deadline", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "deadline", 300 * time.Millisecond},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := httptest.NewServer(f.h)
			defer srv.Close()
			c := config.Defaults()
			c.AW.URL = srv.URL
			c.AW.Timeout = f.timeout
			e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()

			out := e.Call(ctx, Request{Kind: KindTool, Name: "aw_get_state"})
			if out.Err == nil || out.Err.Code != toolbus.CodeAwUnavailable || !out.Err.Retryable || out.Stage != StageExecute {
				t.Fatalf("aw_get_state: %+v", out.Err)
			}
			if !strings.Contains(strings.ToLower(out.Err.Message), strings.ToLower(f.want)) {
				t.Fatalf("message %q does not say %q", out.Err.Message, f.want)
			}
			if !bytes.Contains(out.Body, []byte(`"status":"Retryable"`)) || !bytes.Contains(out.Body, []byte(`"success":false`)) {
				t.Fatalf("envelope: %s", out.Body)
			}

			out = e.Call(ctx, Request{Kind: KindDirect, Name: "nowframe.build"})
			var fr struct {
				AWInfo  json.RawMessage `json:"aw_info"`
				Sources map[string]struct {
					OK    bool    `json:"ok"`
					Error *string `json:"error"`
				} `json:"sources"`
			}
			if out.Err != nil || json.Unmarshal(out.Body, &fr) != nil || string(fr.AWInfo) != "null" ||
				fr.Sources["activitywatch"].OK || fr.Sources["activitywatch"].Error == nil {
				t.Fatalf("frame: %s (%v)", out.Body, out.Err)
			}

			out = e.Call(ctx, Request{Kind: KindDirect, Name: "system.health"})
			if !bytes.Contains(out.Body, []byte(`"aw_ok":false`)) {
				t.Fatalf("health: %s", out.Body)
			}
			// Still serving: help answers.
			if out := e.Call(ctx, Request{Kind: KindTool, Name: "help"}); out.Err != nil {
				t.Fatalf("help after the fault: %v", out.Err)
			}
		})
	}
}
