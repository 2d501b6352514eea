package toolbus

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/awbridge/awbridge/toolbus/artifacts"
	"github.com/awbridge/awbridge/toolbus/state"
)

// fuzzNow is the bus's clock in FuzzCallArgs: deadlines are relative to it.
var fuzzNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// FuzzCallArgs sends arbitrary arguments to a tool through the whole
// pipeline, artifacts on: the call never panics and always answers one
// JSON envelope; a refusal is a ContractError before anything is written;
// every file written stays in its trace's folder under the context root;
// the trace ids echoed are the caller's when given and always safe file
// names; deadline and timeout_ms only ever shorten the tool's timeout; and
// NoWait, the transport's cheap pre-check, agrees with the decoded wait.
func FuzzCallArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, ``, `{"reason":"manual","trace_id":"run","span_id":"call-1","parent_span_id":"p.1"}`,
		`{"trace_id":"../etc"}`, `{"span_id":".."}`, `{"span_id":"a.context"}`, `{"trace_id":"` + strings.Repeat("a", 129) + `"}`,
		`{"trace_id":"CON"}`, `{"trace_id":"a\u0000b"}`, `{"trace_id":"\u0061"}`, `{"trace_id":"a","trace_id":"../b"}`,
		`{"deadline":"2026-11-22T10:00:00.5Z","timeout_ms":300}`, `{"deadline":"2026-11-22T09:00:00Z"}`, `{"deadline":"9999-12-31T23:59:59+23:59"}`,
		`{"deadline":"2026-11-22T10:00:00+24:00"}`, `{"deadline":"0000-01-01T00:00:00Z"}`, `{"timeout_ms":0}`, `{"timeout_ms":1e3}`,
		`{"timeout_ms":1.0}`, `{"timeout_ms":-1}`, `{"timeout_ms":99999999999999999999}`, `{"max_age_ms":0}`,
		`{"wait":false}`, `{"Wait":false}`, `{"wait":"false"}`, `{"wait":true,"wait":false}`,
		`{"output":{"path":"reason"},"store_as":"k","store_scope":"session"}`, `{"store_as":{"key":"a b"}}`, `{"store_scope":"persistent"}`,
		`{"output":{"path":"nope","missing":"error"}}`, `{"response_mode":"compact"}`, `{"reason":"` + strings.Repeat("é", 40) + `"}`,
		`{"reason":"\ud800"}`, `{"n":5,"n":6}`, `[1]`, `{"reason":1}`, `{"a":1}`, `{"reasn":"x"}`, "{\"\xff\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		if err := os.MkdirAll(root, 0o700); err != nil {
			t.Fatal(err)
		}
		store, warn := artifacts.Open(artifacts.Options{Root: root})
		if warn != "" {
			t.Fatal(warn)
		}
		const toolTimeout = time.Second
		var remaining time.Duration
		ran := false
		b, err := New(Options{Now: func() time.Time { return fuzzNow }, newID: func() string { return "gen" }, Artifacts: store},
			&Tool{Name: "echo", ReadOnly: true, Timeout: toolTimeout,
				Params: []Param{{Name: "reason", Type: "string", MaxLen: 64}, {Name: "n", Type: "integer", Min: 0, Max: 5}},
				Run: func(ctx context.Context, c *Call) (Result, error) {
					ran = true
					if dl, ok := ctx.Deadline(); ok {
						remaining = time.Until(dl)
					}
					body, _ := json.Marshal(map[string]any{"reason": c.String("reason", "mcp")})
					return Result{Body: body}, nil
				}})
		if err != nil {
			t.Fatal(err)
		}
		r := b.Call(context.Background(), Request{Name: "echo", Args: json.RawMessage(args)})
		var e struct {
			Success *bool      `json:"success"`
			Tool    string     `json:"tool"`
			Status  string     `json:"status"`
			Error   *ToolError `json:"error"`
			Trace   Trace      `json:"trace"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil || e.Success == nil || e.Tool != "echo" {
			t.Fatalf("envelope %q: %v", r.Body, err)
		}
		if r.Err != nil {
			if !utf8.ValidString(r.Err.Message) || len(r.Err.Message) > 1024 {
				t.Fatalf("error message %q", r.Err.Message)
			}
		}
		var written []string
		filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				written = append(written, p)
			}
			return nil
		})
		switch r.Stage {
		case StageValidate:
			if r.Err == nil || r.Err.Kind != ContractError || ran || len(written) != 0 {
				t.Fatalf("refused with %+v; ran %v; wrote %q", r.Err, ran, written)
			}
			return
		case StageExecute:
			switch r.Err.Code {
			case CodeTimeout, CodeOutputMissing, CodeStorage:
			default:
				t.Fatalf("execution failed: %+v", r.Err)
			}
		case StageNone:
		default:
			t.Fatalf("stage %v: %+v", r.Stage, r.Err)
		}
		// The call was valid: check what the arguments asked for.
		var m map[string]json.RawMessage
		if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
			if err := json.Unmarshal(args, &m); err != nil {
				t.Fatalf("accepted arguments that do not decode: %v", err)
			}
		}
		for _, id := range []string{e.Trace.TraceID, e.Trace.SpanID} {
			if id == "" || len(id) > 128 || id == "." || id == ".." || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
				t.Fatalf("trace %+v: unsafe id %q", e.Trace, id)
			}
		}
		var given string
		if raw, ok := m["trace_id"]; ok && json.Unmarshal(raw, &given) == nil && given != e.Trace.TraceID {
			t.Fatalf("trace_id %q echoed as %q", given, e.Trace.TraceID)
		}
		folder := filepath.Join(root, "artifacts", "runs", e.Trace.TraceID, "tool_calls") + string(filepath.Separator)
		for _, p := range written {
			if !strings.HasPrefix(p, folder) {
				t.Fatalf("trace %+v wrote %q, outside %q", e.Trace, p, folder)
			}
		}
		if ran {
			limit := toolTimeout
			var ms int64
			if raw, ok := m["timeout_ms"]; ok && json.Unmarshal(raw, &ms) == nil {
				limit = min(limit, time.Duration(ms)*time.Millisecond)
			}
			var dl string
			if raw, ok := m["deadline"]; ok && json.Unmarshal(raw, &dl) == nil {
				at, err := time.Parse(time.RFC3339Nano, dl)
				if err != nil || !at.After(fuzzNow) {
					t.Fatalf("ran with deadline %q", dl)
				}
				limit = min(limit, at.Sub(fuzzNow))
			}
			if remaining <= 0 || remaining > limit {
				t.Fatalf("the tool had %v, want at most %v", remaining, limit)
			}
		}
		wait := true
		if raw, ok := m["wait"]; ok {
			_ = json.Unmarshal(raw, &wait)
		}
		if NoWait(args) != !wait {
			t.Fatalf("NoWait(%q) = %v, but the call decoded wait = %v", args, NoWait(args), wait)
		}
	})
}

// outsideSecret is in a file next to the context root and the state dir:
// no built-in tool may read or reveal it.
const outsideSecret = "OUTSIDE-THE-ROOT-zQ7"

// FuzzBuiltinTools sends arbitrary arguments to the built-in tools that
// touch the disk (state, artifacts) and to help: the call never panics and
// answers one JSON envelope; a failure is a typed ToolError, never an
// internal error; nothing outside the context root and the state dir is
// read (a secret next to them never appears) or written; and the state
// file, when there is one, still parses.
func FuzzBuiltinTools(f *testing.F) {
	for _, c := range []struct {
		tool uint8
		args string
	}{
		{0, `{"action":"set","key":"last/reason","value":{"why":"manual"},"scope":"persistent"}`},
		{0, `{"action":"get","key":"last/reason","scope":"any"}`},
		{0, `{"action":"list","prefix":"last/"}`}, {0, `{"action":"dump"}`}, {0, `{"action":"clear","prefix":"","scope":"persistent"}`},
		{0, `{"action":"set","key":"../x","value":1}`}, {0, `{"action":"set","key":"k","value":"` + strings.Repeat("v", 300) + `"}`},
		{0, `{"action":"unset"}`}, {0, `{"action":"set","key":"k"}`}, {0, `{"action":"set","key":"k","value":"password=hunter2"}`},
		{1, `{"action":"get","uri":"artifact://runs/t1/tool_calls/s1.context"}`},
		{1, `{"action":"tail","uri":"artifact://runs/t1/tool_calls/s1/result.json","max_bytes":5}`},
		{1, `{"action":"list","trace":"t1"}`}, {1, `{"action":"list"}`}, {1, `{"action":"list","trace":".."}`},
		{1, `{"action":"get","uri":"artifact://runs/t1/tool_calls/../../../../secret.txt"}`},
		{1, `{"action":"get","uri":"artifact://runs/t1/tool_calls/s1/../../../../../secret.txt"}`},
		{1, `{"action":"head","uri":"file:///etc/passwd"}`}, {1, `{"action":"get","uri":"artifact://runs/t1/tool_calls/link/result.json"}`},
		{2, `{}`}, {2, `{"tool":"artifacts"}`}, {2, `{"tool":"artifact"}`}, {2, `{"tool":"` + strings.Repeat("x", 100) + `"}`},
	} {
		f.Add(c.tool, []byte(c.args))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		parent := t.TempDir()
		root, stateDir := filepath.Join(parent, "root"), filepath.Join(parent, "state")
		secret := filepath.Join(parent, "secret.txt")
		for _, d := range []string{root, stateDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(secret, []byte(outsideSecret), 0o600); err != nil {
			t.Fatal(err)
		}
		store, warn := artifacts.Open(artifacts.Options{Root: root})
		if warn != "" {
			t.Fatal(warn)
		}
		if _, _, err := store.WriteCall("t1", "s1", []byte("[LEGEND]\n[CONTENT]\nnow.app=Code\n"), []byte(`{"app":"Code"}`)); err != nil {
			t.Fatal(err)
		}
		// A symlink inside the root pointing at the secret: reads must refuse it.
		linkDir := filepath.Join(root, "artifacts", "runs", "t1", "tool_calls", "link")
		if err := os.MkdirAll(linkDir, 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.Symlink(secret, filepath.Join(linkDir, "result.json"))
		st, _, err := state.Open(state.Options{Dir: stateDir})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		b, err := New(Options{Now: func() time.Time { return fuzzNow }, newID: func() string { return "gen" }, Artifacts: store, State: st})
		if err != nil {
			t.Fatal(err)
		}
		name := []string{"state", "artifacts", "help"}[int(which)%3]
		r := b.Call(context.Background(), Request{Name: name, Args: json.RawMessage(args)})
		var e struct {
			Success *bool      `json:"success"`
			Error   *ToolError `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil || e.Success == nil {
			t.Fatalf("%s(%q): envelope %q: %v", name, args, r.Body, err)
		}
		if r.Err != nil && (r.Err.Code == CodeInternal || r.Err.Kind == SystemError && r.Err.Code != CodeStorage) {
			t.Fatalf("%s(%q): %+v", name, args, r.Err)
		}
		if bytes.Contains(r.Body, []byte(outsideSecret)) {
			t.Fatalf("%s(%q) revealed a file outside the root: %s", name, args, r.Body)
		}
		filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || p == secret {
				return nil
			}
			if !strings.HasPrefix(p, root+string(filepath.Separator)) && !strings.HasPrefix(p, stateDir+string(filepath.Separator)) {
				t.Fatalf("%s(%q) wrote %q", name, args, p)
			}
			return nil
		})
		if raw, err := os.ReadFile(filepath.Join(stateDir, state.FileName)); err == nil && !json.Valid(raw) {
			t.Fatalf("%s(%q) left a state file that is not JSON: %q", name, args, raw)
		}
	})
}
