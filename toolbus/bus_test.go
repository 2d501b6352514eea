package toolbus

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func testBus(t *testing.T) *Bus {
	t.Helper()
	b, err := New(Options{ServerName: "awbridge", newID: func() string { return "gen" }},
		&Tool{Name: "echo_reason", Aliases: []string{"echo.reason"}, ReadOnly: true, Idempotent: true,
			Params: []Param{{Name: "reason", Type: "string", MaxLen: 10}, {Name: "n", Type: "integer", Min: 0, Max: 5}},
			Run: func(_ context.Context, c *Call) (Result, error) {
				b, _ := json.Marshal(map[string]any{"reason": c.String("reason", "mcp"), "max_age_ms": c.MaxAgeMs})
				return Result{Body: b}, nil
			}},
		&Tool{Name: "down", Run: func(context.Context, *Call) (Result, error) {
			return Result{}, &ToolError{Kind: ExecutionError, Code: CodeAwUnavailable, Retryable: true, Message: "activitywatch: connection refused"}
		}},
		&Tool{Name: "slow", Timeout: 200 * time.Millisecond, Run: func(ctx context.Context, _ *Call) (Result, error) { <-ctx.Done(); return Result{}, ctx.Err() }},
		&Tool{Name: "boom", Run: func(context.Context, *Call) (Result, error) { panic("bug") }},
		&Tool{Name: "plain_err", Run: func(context.Context, *Call) (Result, error) { return Result{}, errors.New("secret detail") }},
	)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type env struct {
	Success    bool            `json:"success"`
	Tool       string          `json:"tool"`
	Status     string          `json:"status"`
	Result     json.RawMessage `json:"result"`
	Error      *ToolError      `json:"error"`
	DurationMs *float64        `json:"duration_ms"`
	Trace      Trace           `json:"trace"`
}

func TestCallEnvelope(t *testing.T) {
	b := testBus(t)
	tests := []struct {
		name, tool, args string
		stage            Stage
		status, code     string
		result           string
	}{
		{"ok via alias", "echo.reason", `{"reason":"manual","trace_id":"run","span_id":"call-1"}`, StageNone, "Ok", "", `{"max_age_ms":-1,"reason":"manual"}`},
		{"max_age_ms", "echo_reason", `{"max_age_ms":500}`, StageNone, "Ok", "", `{"max_age_ms":500,"reason":"mcp"}`},
		{"null args", "echo_reason", `null`, StageNone, "Ok", "", `{"max_age_ms":-1,"reason":"mcp"}`},
		{"unknown tool", "echo_reasn", `{}`, StageResolve, "Error", CodeUnknownTool, "null"},
		{"unknown arg", "echo_reason", `{"reasn":"x"}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"case matters", "echo_reason", `{"Reason":"x"}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"wrong type", "echo_reason", `{"reason":5}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"too long", "echo_reason", `{"reason":"01234567890"}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"int bounds", "echo_reason", `{"n":6}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"not int", "echo_reason", `{"n":1.5}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"args array", "echo_reason", `[1]`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"bad trace id", "echo_reason", `{"trace_id":"../etc"}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"dot trace id", "echo_reason", `{"span_id":".."}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"no max_age on write tool", "down", `{"max_age_ms":1}`, StageValidate, "Error", CodeSchemaInvalid, "null"},
		{"execution failure", "down", `{}`, StageExecute, "Retryable", CodeAwUnavailable, "null"},
		{"timeout", "slow", `{}`, StageExecute, "Retryable", CodeTimeout, "null"},
		{"panic", "boom", `{}`, StageExecute, "Error", CodeInternal, "null"},
		{"untyped error", "plain_err", `{}`, StageExecute, "Error", CodeInternal, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Call(context.Background(), Request{Name: tt.tool, Args: json.RawMessage(tt.args)})
			if r.Stage != tt.stage {
				t.Fatalf("stage = %v, want %v (err %v)", r.Stage, tt.stage, r.Err)
			}
			var e env
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatalf("envelope is not JSON: %v\n%s", err, r.Body)
			}
			if e.Tool != tt.tool || e.Status != tt.status || e.Success != (tt.status == "Ok") || e.DurationMs == nil {
				t.Fatalf("envelope = %s", r.Body)
			}
			if string(e.Result) != tt.result { // a failure's result is null
				t.Fatalf("result = %s, want %s", e.Result, tt.result)
			}
			if tt.code != "" {
				if e.Error == nil || e.Error.Code != tt.code || e.Error.Retryable != (tt.status == "Retryable") {
					t.Fatalf("error = %+v, want code %s", e.Error, tt.code)
				}
				if strings.Contains(string(r.Body), "secret detail") {
					t.Fatal("an untyped error's text leaked into the envelope")
				}
			}
		})
	}
}

func TestTraceEchoedOrGenerated(t *testing.T) {
	b := testBus(t)
	r := b.Call(context.Background(), Request{Name: "echo_reason", Args: json.RawMessage(`{"trace_id":"run","span_id":"call","parent_span_id":"p.1"}`)})
	var e env
	_ = json.Unmarshal(r.Body, &e)
	if e.Trace.TraceID != "run" || e.Trace.SpanID != "call" || e.Trace.ParentSpanID == nil || *e.Trace.ParentSpanID != "p.1" {
		t.Fatalf("trace = %+v", e.Trace)
	}
	r = b.Call(context.Background(), Request{Name: "echo_reason"})
	e = env{}
	_ = json.Unmarshal(r.Body, &e)
	if e.Trace.TraceID != "gen" || e.Trace.SpanID != "gen" || e.Trace.ParentSpanID != nil {
		t.Fatalf("generated trace = %+v", e.Trace)
	}
}

// TestUnknownToolNameShownValid: a tool name that is not valid UTF-8
// (the MCP reader passes its bytes through) is shown with "?" for the
// bad bytes, not as a Go escape.
func TestUnknownToolNameShownValid(t *testing.T) {
	r := testBus(t).Call(context.Background(), Request{Name: "a\xffb"})
	if r.Err == nil || !strings.HasPrefix(r.Err.Message, `unknown tool "a?b"`) {
		t.Fatalf("error = %+v", r.Err)
	}
}

func TestUnknownToolSuggests(t *testing.T) {
	b := testBus(t)
	r := b.Call(context.Background(), Request{Name: "echo_reasn"})
	if r.Err == nil || len(r.Err.DidYouMean) == 0 || r.Err.DidYouMean[0] != "echo_reason" {
		t.Fatalf("did_you_mean = %v", r.Err)
	}
}

func TestDirectReturnsBareResult(t *testing.T) {
	b := testBus(t)
	r := b.Call(context.Background(), Request{Name: "echo.reason", Args: json.RawMessage(`{"reason":"x"}`), Direct: true})
	if r.Err != nil || string(r.Body) != `{"max_age_ms":-1,"reason":"x"}` {
		t.Fatalf("direct = %s, %v", r.Body, r.Err)
	}
	r = b.Call(context.Background(), Request{Name: "down", Direct: true})
	if r.Body != nil || r.Err == nil || r.Stage != StageExecute {
		t.Fatalf("direct failure = %s, %v", r.Body, r.Err)
	}
}

func TestToolsListSchemas(t *testing.T) {
	b := testBus(t)
	var list struct {
		Tools []struct {
			Name         string         `json:"name"`
			Description  string         `json:"description"`
			InputSchema  map[string]any `json:"inputSchema"`
			OutputSchema map[string]any `json:"outputSchema"`
			Annotations  map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b.ToolsList("2025-11-25"), &list); err != nil {
		t.Fatal(err)
	}
	if list.Tools[0].Name != "help" {
		t.Fatalf("first tool = %s, want help", list.Tools[0].Name)
	}
	for _, tl := range list.Tools {
		if tl.InputSchema["additionalProperties"] != false || tl.OutputSchema["type"] != "object" {
			t.Fatalf("%s: schemas %v / %v", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
		props := tl.InputSchema["properties"].(map[string]any)
		if _, ok := props["trace_id"]; !ok {
			t.Fatalf("%s: no trace_id in schema", tl.Name)
		}
		_, hasMaxAge := props["max_age_ms"]
		if hasMaxAge != (tl.Annotations["readOnlyHint"] == true) {
			t.Fatalf("%s: max_age_ms offered=%v but readOnly=%v", tl.Name, hasMaxAge, tl.Annotations["readOnlyHint"])
		}
	}
}

func TestHelp(t *testing.T) {
	b := testBus(t)
	r := b.Call(context.Background(), Request{Name: "help", Args: json.RawMessage(`{"tool":"echo.reason"}`)})
	var e struct {
		Result struct {
			Name   string           `json:"name"`
			Fields []map[string]any `json:"fields"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Result.Name != "echo_reason" || len(e.Result.Fields) < 3 {
		t.Fatalf("help tool = %s", r.Body)
	}
	r = b.Call(context.Background(), Request{Name: "help", Args: json.RawMessage(`{"tool":"echo_reasn"}`)})
	if r.Err == nil || r.Stage != StageValidate || !strings.Contains(r.Err.Message, "did you mean echo_reason") {
		t.Fatalf("help for an unknown tool: %v", r.Err)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"reason":"x","n":3}`, `{"n":1e400}`, `[`, `{"trace_id":"a/b"}`} {
		f.Add([]byte(s))
	}
	params := append([]Param{{Name: "reason", Type: "string", MaxLen: 10}, {Name: "n", Type: "integer", Min: 0, Max: 5}}, commonParams(true, time.Second)...)
	f.Fuzz(func(t *testing.T, b []byte) {
		args, te := decodeArgs(b, params)
		if te != nil {
			if te.Kind != ContractError {
				t.Fatalf("kind = %s", te.Kind)
			}
			return
		}
		for k := range args {
			if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == k }) {
				t.Fatalf("accepted unknown key %q", k)
			}
		}
	})
}

// seedMembers are the members of the tool bus v1 envelope (seed 000).
var seedMembers = []string{"success", "tool", "action", "result", "duration_ms", "trace", "artifact_uri_context", "artifact_uri_json"}

// TestEnvelopeCarriesSeedMembers: the default envelope has every member
// of seed 000, null when empty; action is the tool's action argument;
// compact leaves the null ones out.
func TestEnvelopeCarriesSeedMembers(t *testing.T) {
	p := newPipeline(t, nil)
	off := testBus(t) // no artifacts: null URIs
	for _, tc := range []struct {
		name       string
		bus        *Bus
		tool, args string
		want       map[string]string // member -> its JSON in ai mode, "" for any but null
	}{
		{"no action", off, "echo_reason", `{}`,
			map[string]string{"action": "null", "artifact_uri_context": "null", "artifact_uri_json": "null", "result": ""}},
		{"failure", off, "down", `{}`,
			map[string]string{"action": "null", "result": "null", "artifact_uri_json": "null"}},
		{"state action", p.bus, "state", `{"action":"list","trace_id":"t","span_id":"s1"}`,
			map[string]string{"action": `"list"`, "artifact_uri_context": `"artifact://runs/t/tool_calls/s1.context"`,
				"artifact_uri_json": `"artifact://runs/t/tool_calls/s1/result.json"`}},
		{"artifacts action", p.bus, "artifacts", `{"action":"list","trace":"t","trace_id":"t","span_id":"s2"}`,
			map[string]string{"action": `"list"`, "result": ""}},
		{"bad action is not echoed", p.bus, "state", `{"action":"get\u001b[31m"}`,
			map[string]string{"action": "null", "result": "null", "artifact_uri_json": "null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"ai", "compact"} {
				if mode == "compact" && tc.name == "bad action is not echoed" {
					continue // arguments that fail validation set no response_mode
				}
				var args map[string]any
				if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
					t.Fatal(err)
				}
				if mode == "compact" {
					args["response_mode"] = mode
					if sp, ok := args["span_id"].(string); ok {
						args["span_id"] = sp + "c"
					}
				}
				r := tc.bus.Call(context.Background(), Request{Name: tc.tool, Args: mustJSON(args)})
				var env map[string]json.RawMessage
				if err := json.Unmarshal(r.Body, &env); err != nil {
					t.Fatalf("%s: %v\n%s", mode, err, r.Body)
				}
				for _, k := range seedMembers {
					got, ok := env[k]
					want, pinned := tc.want[k]
					switch {
					case mode == "compact":
						if string(got) == "null" {
							t.Errorf("compact: %s is null, want it left out:\n%s", k, r.Body)
						}
						if k == "action" && pinned && want != "null" && string(got) != want {
							t.Errorf("compact: action = %s, want %s", got, want)
						}
					case !ok:
						t.Errorf("ai: no %s member:\n%s", k, r.Body)
					case pinned && want == "" && string(got) == "null":
						t.Errorf("ai: %s is null:\n%s", k, r.Body)
					case pinned && want != "" && string(got) != want:
						t.Errorf("ai: %s = %s, want %s", k, got, want)
					}
				}
			}
		})
	}
}
