package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/internal/awfixture"
)

// recordedAW serves the recorded aw-server exchanges.
func recordedAW(t *testing.T) (*httptest.Server, *awfixture.Server) {
	t.Helper()
	srv, fs := serveRecorded(t)
	return srv, fs
}

// simulatedAW is the built-in ActivityWatch simulator holding the last
// hour of a simulated person's activity: unlike the recorded exchanges, it
// answers any period's event reads (the activity tools need them).
func simulatedAW(t *testing.T) *httptest.Server {
	t.Helper()
	sim := awsim.New(awsim.Options{Hostname: "vm", Seed: 7})
	sim.Seed(time.Now())
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv
}

func recordedAWb(b *testing.B) (string, *awfixture.Server) {
	srv, fs := serveRecorded(b)
	return srv.URL, fs
}

func serveRecorded(tb testing.TB) (*httptest.Server, *awfixture.Server) {
	tb.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		tb.Fatal(err)
	}
	fs := awfixture.NewServer(xs)
	srv := httptest.NewServer(fs)
	tb.Cleanup(srv.Close)
	return srv, fs
}

// volatile are keys whose values change run to run; transcripts show them
// as "<volatile>".
var volatileKeys = map[string]bool{
	"duration_ms": true, "trace_id": true, "span_id": true, "timestamp": true, "latency_ms": true,
	"checked_at": true, "age_seconds": true, "frame_version": true, "ended_at": true,
	"last_seen": true, "skew_seconds": true, "summary": true, "as_of": true,
	"activitywatch_url": true, // health's settings: the test server's port
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if volatileKeys[k] && val != nil {
				x[k] = "<volatile>"
				continue
			}
			if k == "text" {
				if s, ok := val.(string); ok && strings.HasPrefix(s, "{") {
					var inner any
					if json.Unmarshal([]byte(s), &inner) == nil {
						x[k] = normalize(inner)
						continue
					}
				}
			}
			x[k] = normalize(val)
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	}
	return v
}

func normalizeLine(t *testing.T, line string) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout line is not JSON: %v: %q", err, line)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(normalize(v))
	return strings.TrimSuffix(b.String(), "\n")
}

// TestTranscripts replays testdata/transcripts/*.txt through the real
// binary: "-> " lines are sent, "<- " lines are the expected replies (in
// the order of the requests; volatile values normalised).
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	srv, _ := recordedAW(t)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var input, header []string
			for _, l := range strings.Split(string(raw), "\n") {
				switch {
				case strings.HasPrefix(l, "-> "):
					input = append(input, strings.TrimPrefix(l, "-> "))
				case strings.HasPrefix(l, "#"):
					header = append(header, l)
				}
			}
			lines, stderr := session(t, baseEnv(t, srv.URL), input)
			// Ids are echoed byte for byte (normalising below would hide it).
			sent := map[string]bool{"null": true}
			for _, in := range input {
				sent[replyID(in)] = true
			}
			for _, l := range lines {
				if id := replyID(l); id != "" && !sent[id] {
					t.Fatalf("reply id %s was never sent (ids must be echoed exactly): %s", id, l)
				}
			}
			// Order replies by the request they answer; the ones that name
			// no request (id null, a batch's array) come last, in the order
			// written (the reader writes them in input order), whenever a
			// concurrent call's reply was written.
			pos := map[string]int{}
			for i, in := range input {
				if id := replyID(in); id != "" && id != "null" {
					pos[id] = i
				}
			}
			key := func(l string) int {
				if p, ok := pos[replyID(l)]; ok {
					return p
				}
				return len(input)
			}
			sort.SliceStable(lines, func(i, j int) bool { return key(lines[i]) < key(lines[j]) })
			var got strings.Builder
			for _, h := range header {
				got.WriteString(h + "\n")
			}
			for _, in := range input {
				got.WriteString("-> " + in + "\n")
			}
			for _, l := range lines {
				got.WriteString("<- " + normalizeLine(t, l) + "\n")
			}
			if *update {
				if err := os.WriteFile(f, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got.String() != string(raw) {
				t.Fatalf("transcript %s differs (go test -update rewrites it); stderr:\n%s\ngot:\n%s", f, stderr, got.String())
			}
		})
	}
}

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
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	fs := awfixture.NewServer(xs)
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

func TestHealthCommandWithActivityWatchStopped(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	env := baseEnv(t, url, "AWBRIDGE_AW_TIMEOUT=500ms")
	code, out, errs := runBin(t, env, "health")
	if code != 1 && code != 2 {
		t.Fatalf("exit %d, want 1 or 2", code)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if first != out[:len(first)] || !strings.HasPrefix(first, "ActivityWatch does not answer at "+url) || !strings.Contains(first, "start ActivityWatch") {
		t.Fatalf("first line = %q", first)
	}
	if strings.Contains(out+errs, "goroutine ") || strings.Contains(out+errs, "panic") {
		t.Fatalf("a stack trace:\n%s%s", out, errs)
	}

	_, out, _ = runBin(t, env, "health", "--json")
	var h map[string]any
	if err := json.Unmarshal([]byte(out), &h); err != nil || h["aw_ok"] != false {
		t.Fatalf("--json stdout = %q", out)
	}
}

func TestBadConfigIsOneLineAndExit2(t *testing.T) {
	code, _, errs := runBin(t, baseEnv(t, "http://127.0.0.1:5600", "AWBRIDGE_AW_TIMEOUT=soon"), "health")
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "AWBRIDGE_AW_TIMEOUT") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestDemoShowsASessionAndFrames(t *testing.T) {
	code, s, errs := runBin(t, baseEnv(t, "http://127.0.0.1:1"), "demo", "--duration", "3s")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errs)
	}
	for _, want := range []string{`<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"`, `"aw_ok":true`, `"sidecar_probe_status":true`, `<- {"jsonrpc":"2.0","id":3,"result":{"content"`} {
		if !strings.Contains(s, want) {
			t.Fatalf("demo output lacks %s:\n%s", want, s)
		}
	}
	if !strings.Contains(s, "Active in ") && !strings.Contains(s, "Away since") {
		t.Fatalf("demo showed no frame:\n%s", s)
	}
}

func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	for _, c := range commands() {
		code, out, errs := runBin(t, baseEnv(t, "http://127.0.0.1:1"), c.name, "--help")
		if code != 0 || !strings.Contains(out, "Example:\n  awbridge "+c.name) || errs != "" {
			t.Fatalf("%s --help: exit %d, no example on stdout:\n%s%s", c.name, code, out, errs)
		}
	}
}

func TestNowframeAgainstTheSimulator(t *testing.T) {
	// The real binary's `sim` on a free port, then `nowframe --json` at it.
	url := startSimBinary(t)
	code, out, errs := runBin(t, baseEnv(t, url, "AWBRIDGE_SIDECAR_URL="+url), "nowframe", "--json", "--reason", "sim-test")
	if code != 0 {
		t.Fatalf("nowframe at the simulator: exit %d\n%s%s", code, out, errs)
	}
	var f struct {
		Reason string `json:"reason"`
		Omni   struct {
			OK bool `json:"ok"`
		} `json:"omni_probe"`
		Now struct {
			Stale  bool `json:"stale"`
			Window struct {
				App string `json:"app"`
			} `json:"window"`
			Selection struct {
				Host string `json:"host"`
			} `json:"selection"`
		} `json:"now"`
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("nowframe --json stdout is not the frame alone: %v\n%s", err, out)
	}
	if f.Reason != "sim-test" || !f.Omni.OK || f.Now.Stale || f.Now.Window.App == "" || f.Now.Selection.Host != "awsim" {
		t.Fatalf("frame from the simulator: %s", out)
	}
}

// awbridge call passes the same pipeline: shaping, the envelope, artifacts.
func TestCallCommandPassesThePipeline(t *testing.T) {
	srv, _ := recordedAW(t)
	root := t.TempDir()
	code, out, errs := runBin(t, baseEnv(t, srv.URL, "AWBRIDGE_CONTEXT_ROOT="+root), "call", "aw_get_state",
		`{"trace_id":"cli","span_id":"c1","output":{"path":"info","pick":["hostname"]}}`)
	if code != 0 {
		t.Fatalf("awbridge call: exit %d\n%s", code, errs)
	}
	var env struct {
		Result map[string]any `json:"result"`
		URI    string         `json:"artifact_uri_json"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || len(env.Result) != 1 || env.Result["hostname"] != "vm" ||
		env.URI != "artifact://runs/cli/tool_calls/c1/result.json" {
		t.Fatalf("envelope %s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "artifacts/runs/cli/tool_calls/c1.context")); err != nil {
		t.Fatal(err)
	}
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
