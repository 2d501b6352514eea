package toolbus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/toolbus/artifacts"
	"github.com/awbridge/awbridge/toolbus/redact"
	"github.com/awbridge/awbridge/toolbus/state"
)

// Planted secrets a test-only tool returns; none may survive anywhere.
var planted = []string{
	"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
	"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	"AKIAABCDEFGHIJKLMNOP",
	"hunter2-the-password",
}

func secretsTool() *Tool {
	return &Tool{Name: "leaky", ReadOnly: true, Idempotent: true,
		Run: func(context.Context, *Call) (Result, error) {
			big := strings.Repeat("lorem ipsum ", (1<<20)/12) + " token " + planted[1] + " end"
			return Result{Body: mustJSON(map[string]any{
				"note":     "key " + planted[0] + " in prose",
				"password": planted[3],
				"nested":   map[string]any{"aws": planted[2], "ok": "fine"},
				"big":      big,
			})}, nil
		}}
}

type pipelineEnv struct {
	bus      *Bus
	as       *artifacts.Store
	root     string
	stateDir string
	logs     *bytes.Buffer
}

func newPipeline(t *testing.T, fsys artifacts.FS, tools ...*Tool) *pipelineEnv {
	t.Helper()
	root, stateDir := t.TempDir(), t.TempDir()
	red := redact.New(redact.Options{})
	st, _, err := state.Open(state.Options{Dir: stateDir, Redact: RedactValue(red)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs := &bytes.Buffer{}
	as, warn := artifacts.Open(artifacts.Options{Root: root, FS: fsys, Logger: zerolog.New(logs)})
	if warn != "" {
		t.Fatal(warn)
	}
	b, err := New(Options{Redactor: red, State: st, Artifacts: as,
		RateLimits: map[string]RateLimit{"limited": {PerSecond: 0.001, Burst: 1}}},
		append(tools, secretsTool(), &Tool{Name: "limited", ReadOnly: true, Run: func(context.Context, *Call) (Result, error) {
			return Result{Body: json.RawMessage(`{"ok":true}`)}, nil
		}})...)
	if err != nil {
		t.Fatal(err)
	}
	return &pipelineEnv{bus: b, as: as, root: root, stateDir: stateDir, logs: logs}
}

func (p *pipelineEnv) call(t *testing.T, name, args string) (Response, map[string]any) {
	t.Helper()
	r := p.bus.Call(context.Background(), Request{Name: name, Args: json.RawMessage(args)})
	var env map[string]any
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("envelope not JSON: %v", err)
	}
	return r, env
}

// everything returns every file under dir, concatenated.
func everything(t *testing.T, dir string) []byte {
	var all []byte
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	return all
}

func TestPlantedSecretsAreRedactedEverywhere(t *testing.T) {
	p := newPipeline(t, nil)
	r, env := p.call(t, "leaky", `{"trace_id":"run","span_id":"leak","store_as":{"key":"leak","scope":"persistent"}}`)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	res := env["result"].(map[string]any)
	big, ok := res["big"].(map[string]any)
	if !ok || big["truncated"] != true || big["sha256"] == "" || !strings.HasPrefix(big["artifact"].(string), "artifact://runs/run/tool_calls/leak/") {
		t.Fatalf("the 1 MiB string was not bounded and spilled: %v", res["big"])
	}
	if len(env["redactions"].([]any)) < 3 || len(env["bounded"].([]any)) != 1 {
		t.Fatalf("redactions %v bounded %v", env["redactions"], env["bounded"])
	}
	// The spilled full text is readable through the artifacts tool, redacted.
	_, got := p.call(t, "artifacts", `{"action":"tail","uri":"`+big["artifact"].(string)+`","max_bytes":200}`)
	content := got["result"].(map[string]any)["content"].(string)
	if !strings.HasSuffix(content, " end") {
		t.Fatalf("spilled tail = %q", content)
	}
	// Nowhere: not the envelope, artifacts (.context, result.json, spill),
	// the state file, the logs.
	places := map[string][]byte{
		"envelope": r.Body, "artifacts": everything(t, p.root), "state": everything(t, p.stateDir), "logs": p.logs.Bytes(),
	}
	for where, b := range places {
		for _, s := range planted {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("secret %q survived in %s", s[:6], where)
			}
		}
	}
	if !bytes.Contains(places["state"], []byte("[REDACTED]")) {
		t.Fatal("the state file does not hold the stored (redacted) result")
	}
	ctxDoc, err := os.ReadFile(filepath.Join(p.root, "artifacts/runs/run/tool_calls/leak.context"))
	if err != nil || !bytes.HasPrefix(ctxDoc, []byte("[LEGEND]")) || !bytes.Contains(ctxDoc, []byte("\nA: ")) {
		t.Fatalf(".context = %q, %v", ctxDoc, err)
	}
	resultJSON, _ := os.ReadFile(filepath.Join(p.root, "artifacts/runs/run/tool_calls/leak/result.json"))
	if !bytes.Equal(resultJSON, r.Body) {
		t.Fatal("result.json is not the exact envelope")
	}
	for _, f := range []string{"artifacts/runs/run/tool_calls/leak.context", "artifacts/runs/run/tool_calls/leak/result.json"} {
		st, _ := os.Stat(filepath.Join(p.root, f))
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v", f, st.Mode())
		}
	}
	st, _ := os.Stat(filepath.Join(p.root, "artifacts/runs/run"))
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("run folder mode %v", st.Mode())
	}
}

// An error's details go through the JSON redactor like a result: a
// sensitive key and an inline secret are masked, the rest kept.
func TestErrorDetailsAreRedacted(t *testing.T) {
	failing := &Tool{Name: "failing", ReadOnly: true, Run: func(context.Context, *Call) (Result, error) {
		return Result{}, &ToolError{Kind: ExecutionError, Code: "Upstream", Message: "failed",
			Details: map[string]any{"password": planted[3], "url": "https://x.test/?key " + planted[0], "n": 3}}
	}}
	p := newPipeline(t, nil, failing)
	r, _ := p.call(t, "failing", `{}`)
	if r.Err == nil {
		t.Fatal("the call did not fail")
	}
	for _, s := range planted {
		if bytes.Contains(r.Body, []byte(s)) {
			t.Errorf("secret %q survived in the envelope: %s", s[:6], r.Body)
		}
	}
	if !bytes.Contains(r.Body, []byte(`"password":"[REDACTED]"`)) || !bytes.Contains(r.Body, []byte(`"n":3`)) {
		t.Errorf("details not redacted as a document: %s", r.Body)
	}
}

// fullDisk fails every write with ENOSPC while full is set (or always,
// with a nil full).
type fullDisk struct {
	artifacts.OSFS
	full *atomic.Bool
}

type fullFile struct{ artifacts.File }

func (f fullFile) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func (d fullDisk) CreateTemp(dir, pattern string) (artifacts.File, error) {
	f, err := d.OSFS.CreateTemp(dir, pattern)
	if err != nil || (d.full != nil && !d.full.Load()) {
		return f, err
	}
	return fullFile{f}, nil
}

func TestArtifactWriteFailureNeverFailsTheCall(t *testing.T) {
	var full atomic.Bool
	full.Store(true)
	p := newPipeline(t, fullDisk{full: &full})
	for i := range 20 {
		r, env := p.call(t, "help", fmt.Sprintf(`{"trace_id":"run","span_id":"full-%d"}`, i))
		if r.Err != nil || env["success"] != true {
			t.Fatalf("the call failed with the disk: %v", r.Err)
		}
		if env["artifact_write_failed"] != true || env["artifact_uri_json"] != nil || env["artifact_uri_context"] != nil {
			t.Fatalf("envelope does not say the write failed: %v %v %v", env["artifact_write_failed"], env["artifact_uri_json"], env["artifact_uri_context"])
		}
	}
	// One warning for the whole outage, not one per call.
	if n := strings.Count(p.logs.String(), "artifact writes are failing"); n != 1 || !strings.Contains(p.logs.String(), "no space left on device") {
		t.Fatalf("want exactly one warning with the cause, got %d:\n%s", n, p.logs.String())
	}
	if failing, n := p.as.WritesFailing(); !failing || n != 20 {
		t.Fatalf("WritesFailing = %v, %d", failing, n)
	}
	// Nothing torn on disk: no result.json, no temp files left.
	var files []string
	filepath.WalkDir(p.root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("files left after failed writes: %v", files)
	}

	// Space comes back: the next call is written, and the log says so once.
	full.Store(false)
	r, env := p.call(t, "help", `{"trace_id":"run","span_id":"back"}`)
	if r.Err != nil || env["artifact_uri_json"] == nil {
		t.Fatalf("after the disk recovered: %v %v", r.Err, env["artifact_uri_json"])
	}
	if !strings.Contains(p.logs.String(), `"failed_writes":20,"message":"artifact writes work again"`) {
		t.Fatalf("no recovery line:\n%s", p.logs.String())
	}
	if failing, _ := p.as.WritesFailing(); failing {
		t.Fatal("still failing after a good write")
	}

	// A nearly full disk flips between failing and working at every call:
	// still at most one warning a minute, and the count starts afresh.
	logs := p.logs.Len()
	for i := range 10 {
		full.Store(i%2 == 0)
		p.call(t, "help", fmt.Sprintf(`{"trace_id":"run","span_id":"flip-%d"}`, i))
	}
	if n := strings.Count(p.logs.String()[logs:], "artifact writes are failing"); n != 0 {
		t.Fatalf("%d more warnings within the minute:\n%s", n, p.logs.String()[logs:])
	}
	if failing, n := p.as.WritesFailing(); failing || n != 0 {
		t.Fatalf("after a good write: failing %v, count %d", failing, n)
	}
}

func TestCompactIsStrictlySmaller(t *testing.T) {
	p := newPipeline(t, nil)
	for _, args := range []string{`{"trace_id":"t","span_id":"s"}`, `{"tool":"state","trace_id":"t","span_id":"s"}`} {
		ai := p.bus.Call(context.Background(), Request{Name: "help", Args: json.RawMessage(args)})
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		m["response_mode"] = "compact"
		m["span_id"] = "s2"
		c := p.bus.Call(context.Background(), Request{Name: "help", Args: mustJSON(m)})
		if len(c.Body) >= len(ai.Body) {
			t.Fatalf("compact %d bytes, ai %d bytes", len(c.Body), len(ai.Body))
		}
		if !json.Valid(c.Body) || !bytes.Contains(c.Body, []byte(`"status":"Ok"`)) || bytes.Contains(c.Body, []byte(`:null`)) {
			t.Fatalf("compact envelope: %s", c.Body)
		}
	}
	_, env := p.call(t, "help", `{"response_mode":"verbose"}`)
	if env["error"].(map[string]any)["code"] != CodeSchemaInvalid {
		t.Fatalf("unknown response_mode accepted: %v", env["error"])
	}
}

func TestRateLimit(t *testing.T) {
	p := newPipeline(t, nil)
	if r, _ := p.call(t, "limited", `{}`); r.Err != nil {
		t.Fatal(r.Err)
	}
	r, env := p.call(t, "limited", `{}`)
	if r.Err == nil || r.Err.Code != CodeRateLimited || !r.Err.Retryable || r.Err.RetryAfterMs == nil || env["status"] != "Retryable" {
		t.Fatalf("second call: %+v", r.Err)
	}
	if pol := env["policy"].(map[string]any); pol["rate_limit"] == nil {
		t.Fatalf("policy does not report the limit: %v", pol)
	}
}

// TestRateLimitUnderAnAlias: a limit named by an alias used to be accepted
// and never applied (limiters are keyed by the canonical name); it is
// refused with the name to use.
func TestRateLimitUnderAnAlias(t *testing.T) {
	tool := &Tool{Name: "canon", Aliases: []string{"canon.alias"}, ReadOnly: true, Run: func(context.Context, *Call) (Result, error) {
		return Result{Body: json.RawMessage(`{}`)}, nil
	}}
	_, err := New(Options{Redactor: redact.New(redact.Options{}), RateLimits: map[string]RateLimit{"canon.alias": {PerSecond: 1, Burst: 1}}}, tool)
	if err == nil || !strings.Contains(err.Error(), "name the tool canon") {
		t.Fatalf("New = %v, want a refusal naming canon", err)
	}
}

func TestShapingAndStoreReadBack(t *testing.T) {
	p := newPipeline(t, nil)
	_, env := p.call(t, "help", `{"output":{"path":"tools","map":{"pick":["name"]}},"store_as":"names"}`)
	tools := env["result"].([]any)
	if len(tools) < 5 || len(tools[0].(map[string]any)) != 1 {
		t.Fatalf("shaped result %v", env["result"])
	}
	acts := env["next_actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["tool"] != "state" {
		t.Fatalf("next_actions %v", acts)
	}
	_, got := p.call(t, "state", `{"action":"get","key":"names"}`)
	v := got["result"].(map[string]any)["value"]
	if a, _ := json.Marshal(v); !bytes.Equal(a, mustJSON(env["result"])) {
		t.Fatalf("stored %s, shaped %v", a, env["result"])
	}
	// Missing data: error names the path; null and undefined do not fail.
	r, _ := p.call(t, "help", `{"output":{"path":"nope.x"}}`)
	if r.Err == nil || r.Err.Code != CodeOutputMissing || r.Err.Details["path"] != "nope.x" {
		t.Fatalf("missing path: %+v", r.Err)
	}
	_, env = p.call(t, "help", `{"output":{"path":"nope","missing":"null"}}`)
	if v, ok := env["result"]; !ok || v != nil {
		t.Fatalf("missing null: %v", env)
	}
	_, env = p.call(t, "help", `{"output":{"path":"nope","missing":"undefined"}}`)
	if _, ok := env["result"]; ok || env["success"] != true {
		t.Fatalf("missing undefined kept result: %v", env)
	}
	_, env = p.call(t, "help", `{"output":{"path":"nope","default":{"x":1}}}`)
	if env["result"].(map[string]any)["x"] == nil {
		t.Fatalf("default: %v", env["result"])
	}
}

func TestTimeoutShortenedNeverLengthened(t *testing.T) {
	slow := &Tool{Name: "slow", ReadOnly: true, Timeout: time.Second, Run: func(ctx context.Context, _ *Call) (Result, error) {
		<-ctx.Done()
		return Result{}, ctx.Err()
	}}
	p := newPipeline(t, nil, slow)
	r, env := p.call(t, "slow", `{"timeout_ms":20}`)
	if r.Err == nil || r.Err.Code != CodeTimeout || !r.Err.Retryable || env["policy"].(map[string]any)["timeout_ms"] != 20.0 {
		t.Fatalf("timeout_ms 20: %+v %v", r.Err, env["policy"])
	}
	r, _ = p.call(t, "slow", `{"timeout_ms":5000}`)
	if r.Err == nil || r.Err.Code != CodeSchemaInvalid || r.Stage != StageValidate {
		t.Fatalf("a longer timeout_ms was accepted: %+v", r.Err)
	}
	dl := time.Now().Add(30 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	r, _ = p.call(t, "slow", `{"deadline":"`+dl+`"}`)
	if r.Err == nil || r.Err.Code != CodeTimeout {
		t.Fatalf("deadline: %+v", r.Err)
	}
	r, _ = p.call(t, "slow", `{"deadline":"2000-01-01T00:00:00Z"}`)
	if r.Err == nil || r.Err.Code != CodeTimeout || r.Err.Retryable {
		t.Fatalf("a deadline in the past: %+v", r.Err)
	}
}

func TestBadTraceWritesNothing(t *testing.T) {
	p := newPipeline(t, nil)
	r, _ := p.call(t, "help", `{"trace_id":"../../etc","span_id":"x"}`)
	if r.Stage != StageValidate || r.Err.Kind != ContractError {
		t.Fatalf("bad trace: %+v", r)
	}
	if files := everything(t, p.root); len(files) != 0 {
		t.Fatal("a rejected call wrote artifacts")
	}
}

func TestArtifactsToolRefusesEscapes(t *testing.T) {
	p := newPipeline(t, nil)
	for _, uri := range []string{"artifact://runs/../../etc/passwd", "file:///etc/passwd", "artifact://runs/a/tool_calls/../../../x"} {
		r, _ := p.call(t, "artifacts", `{"action":"get","uri":"`+uri+`"}`)
		if r.Err == nil || r.Err.Kind != ContractError {
			t.Fatalf("%s: %+v", uri, r.Err)
		}
	}
}
