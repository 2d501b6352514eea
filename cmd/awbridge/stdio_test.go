package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/awfixture"
)

func TestStdoutCarriesProtocolLinesOnly(t *testing.T) {
	srv, _ := recordedAW(t)
	lines, stderr := session(t, baseEnv(t, srv.URL, "AWBRIDGE_LOG_LEVEL=debug"), []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nowframe_build","arguments":{}}}`,
		`not json`,
	})
	if len(lines) != 3 {
		t.Fatalf("got %d stdout lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q", l)
		}
	}
	if !strings.Contains(stderr, `"level":"debug"`) {
		t.Fatalf("debug logs did not go to stderr as JSON: %q", stderr)
	}
}

func TestHugeLineIsRejectedAndTheStreamGoesOn(t *testing.T) {
	srv, _ := recordedAW(t)
	huge := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	lines, _ := session(t, baseEnv(t, srv.URL), []string{huge, `{"jsonrpc":"2.0","id":10,"method":"ping"}`})
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want an error and a pong: %v", len(lines), lines)
	}
	if !strings.Contains(lines[0], `"error"`) || !strings.Contains(lines[1], `"id":10,"result":{}`) {
		t.Fatalf("replies: %v", lines)
	}
}

func TestCallsInFlightAtEndOfInputAreAnswered(t *testing.T) {
	fs := awfixture.NewServer(loadRecorded(t))
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond)
		fs.ServeHTTP(w, r)
	}))
	defer slow.Close()
	var input []string
	for i := range 20 {
		input = append(input, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"nowframe.build","params":{"reason":"r%d"}}`, i, i))
	}
	lines, stderr := session(t, baseEnv(t, slow.URL), input)
	if len(lines) != 20 {
		t.Fatalf("got %d answers for 20 calls in flight at EOF; stderr:\n%s", len(lines), stderr)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var r struct {
			ID     int `json:"id"`
			Result struct {
				Reason string          `json:"reason"`
				AWInfo json.RawMessage `json:"aw_info"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Result.Reason != fmt.Sprintf("r%d", r.ID) || string(r.Result.AWInfo) == "null" {
			t.Fatalf("answer %q", l)
		}
		seen[r.Result.Reason] = true
	}
	if len(seen) != 20 {
		t.Fatalf("answers were not one per call: %v", seen)
	}
}

func TestSlowActivityWatchDoesNotDelayPing(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer once.Do(func() { close(release) })

	p := start(t, baseEnv(t, hang.URL, "AWBRIDGE_AW_TIMEOUT=30s"))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"nowframe.build"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"system.health"}`)
	got := map[string]string{}
	for range 2 {
		l := p.next()
		got[replyID(l)] = l
	}
	if got["2"] != `{"jsonrpc":"2.0","id":2,"result":{}}` || !strings.Contains(got["3"], `"aw_ok":false`) {
		t.Fatalf("while ActivityWatch hangs (30 s deadline) the first replies were %v, want the pong and health", got)
	}
	once.Do(func() { close(release) })
}

// Persistent state outlives the process: one stdio session stores, the
// next (another process, another connection) reads it back.
func TestPersistentStateAcrossProcesses(t *testing.T) {
	srv, _ := recordedAW(t)
	stateDir := t.TempDir()
	env := baseEnv(t, srv.URL, "AWBRIDGE_STATE_DIR="+stateDir)
	lines, _ := session(t, env, []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"output":{"path":"now.window","pick":["app"]},"store_as":{"key":"focus","scope":"persistent"}}}}`,
	})
	if len(lines) != 1 || !strings.Contains(lines[0], `\"stored\":{\"key\":\"focus\",\"scope\":\"persistent\"}`) {
		t.Fatalf("store: %v", lines)
	}
	lines, _ = session(t, env, []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"get","key":"focus"}}}`,
	})
	if len(lines) != 1 || !strings.Contains(lines[0], `\"scope\":\"persistent\",\"value\":{\"app\":\"Google-chrome\"}`) {
		t.Fatalf("read back: %v", lines)
	}
	st, err := os.Stat(filepath.Join(stateDir, "state.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", st, err)
	}
	code, out, errs := runBin(t, env, "state", "--json")
	if code != 0 || !strings.Contains(out, `"key":"focus","scope":"persistent"`) || !strings.Contains(out, `"served_by":"in-process"`) {
		t.Fatalf("awbridge state --json: exit %d %s %s", code, out, errs)
	}
}

// Log lines pass the redactor: an upstream error quoting a secret is
// masked on stderr as well as in the envelope.
func TestSecretsNeverReachTheLogs(t *testing.T) {
	const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"message": "bad key %s, token=%s"}`, secret, secret)
	}))
	defer leaky.Close()
	lines, stderr := session(t, baseEnv(t, leaky.URL, "AWBRIDGE_LOG_LEVEL=debug"), []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aw_get_state","arguments":{}}}`,
	})
	if !strings.Contains(stderr, "source down") {
		t.Fatalf("the failure was not logged: %s", stderr)
	}
	if strings.Contains(stderr, secret) || strings.Contains(strings.Join(lines, "\n"), secret) {
		t.Fatalf("the secret reached stderr or stdout:\n%s\n%s", stderr, lines)
	}
}
