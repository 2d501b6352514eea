package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkCeiling bounds every wait of the official-SDK tests: generous, never
// a timing assertion.
const sdkCeiling = 30 * time.Second

// sdkEras are the MCP protocol versions the official SDK is pinned to:
// "" is its default, 2026-07-28 (served per request); the others are
// negotiated by initialize.
var sdkEras = []struct{ name, pin, want string }{
	{"modern", "", "2026-07-28"},
	{"2025-11-25", "2025-11-25", "2025-11-25"},
	{"2025-06-18", "2025-06-18", "2025-06-18"},
	{"2025-03-26", "2025-03-26", "2025-03-26"},
}

// sdkToolArgs are the least valid arguments of every tool awbridge lists;
// a tool missing here fails the test, so a new tool is called too.
// artifacts lists the trace the other calls of the session ran in.
func sdkToolArgs(name, trace string) (map[string]any, bool) {
	switch name {
	case "help", "nowframe_build", "system_health", "aw_get_state", "nowframe_history", "activity_summary", "activity_timeline":
		return map[string]any{"trace_id": trace}, true
	case "activity_search":
		return map[string]any{"query": "main.go", "trace_id": trace}, true
	case "state":
		return map[string]any{"action": "list", "trace_id": trace}, true
	case "artifacts":
		return map[string]any{"action": "list", "trace": trace}, true
	}
	return nil, false
}

// TestOfficialSDKClient connects the official MCP Go SDK, as an independent
// client, to `awbridge stdio` (in-process) in every era it speaks, lists
// and calls every tool and reads every resource.
func TestOfficialSDKClient(t *testing.T) {
	srv := simulatedAW(t)
	for _, era := range sdkEras {
		t.Run(era.name, func(t *testing.T) {
			env, _, _ := faultEnv(t, srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), sdkCeiling)
			defer cancel()
			cmd := exec.Command(binPath, "stdio")
			cmd.Env = env
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: era.pin})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			sdkExercise(t, ctx, cs, era.want)
		})
	}
}

// sdkExercise is what a new user's client does with a connected session:
// it checks the negotiated version, reads every resource, lists the
// resource templates, lists the tools and calls every one of them with its
// least valid arguments (success, isError false, the text content is the
// envelope and structuredContent is the same envelope), then the calls an
// assistant chains (an alias, store_as then state, compact), then the
// prompts (sdkPrompts).
func sdkExercise(t *testing.T, ctx context.Context, cs *sdk.ClientSession, want string) {
	t.Helper()
	if got := cs.InitializeResult().ServerInfo.Name; got != "awbridge" {
		t.Fatalf("server name %q", got)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("protocol version %q, want %q", got, want)
	}
	structuredEra := want >= "2025-06-18" // outputSchema, title, structuredContent

	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("resources/read %s: %v %+v", r.URI, err, res)
		}
		c := res.Contents[0]
		if c.URI != r.URI || c.MIMEType != "application/json" || !json.Valid([]byte(c.Text)) || c.Text == "" {
			t.Fatalf("resources/read %s: uri %q, mime %q, text %s", r.URI, c.URI, c.MIMEType, clipLine(c.Text, 200))
		}
	}
	for _, u := range []string{"nowframe://current", "health://current"} {
		if !slices.Contains(uris, u) {
			t.Fatalf("resources/list lacks %s: %v", u, uris)
		}
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || tl.Description == "" || tl.InputSchema == nil {
			t.Fatalf("tool %s lacks annotations, description or inputSchema", tl.Name)
		}
		if (tl.OutputSchema != nil) != structuredEra || (tl.Title != "") != structuredEra {
			t.Fatalf("tool %s in %s: outputSchema %v, title %q", tl.Name, want, tl.OutputSchema != nil, tl.Title)
		}
		if readOnly := tl.Name != "state"; tl.Annotations.ReadOnlyHint != readOnly {
			t.Fatalf("tool %s: readOnlyHint %v", tl.Name, tl.Annotations.ReadOnlyHint)
		}
	}
	for _, w := range []string{"help", "nowframe_build", "nowframe_history", "system_health", "aw_get_state", "state", "artifacts"} {
		if !slices.Contains(names, w) {
			t.Fatalf("tools/list lacks %s: %v", w, names)
		}
	}

	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.Content) != 1 {
			t.Fatalf("%s: %d contents", name, len(res.Content))
		}
		tc, ok := res.Content[0].(*sdk.TextContent)
		if !ok {
			t.Fatalf("%s: content %T", name, res.Content[0])
		}
		text := tc.Text
		if res.IsError || !strings.Contains(text, `"success":true`) {
			t.Fatalf("%s: isError %v, envelope %s", name, res.IsError, clipLine(text, 400))
		}
		if res.StructuredContent == nil {
			if structuredEra {
				t.Fatalf("%s: no structuredContent in %s", name, want)
			}
			return text
		}
		structured, _ := json.Marshal(res.StructuredContent)
		if c := canonical(text); c == "" || c != canonical(string(structured)) {
			t.Fatalf("%s: structuredContent differs from the text envelope", name)
		}
		return text
	}

	// Every listed tool, artifacts last (it lists the others' trace).
	trace := "sdk-" + strings.ReplaceAll(want, "-", "")
	if i := slices.Index(names, "artifacts"); i >= 0 {
		names = append(slices.Delete(names, i, i+1), "artifacts")
	}
	for _, name := range names {
		args, ok := sdkToolArgs(name, trace)
		if !ok {
			t.Fatalf("tools/list names %s, which sdkToolArgs does not know: add its least valid arguments", name)
		}
		text := call(name, args)
		if !strings.Contains(text, `"tool":"`+name+`"`) {
			t.Fatalf("%s: the envelope names another tool: %s", name, clipLine(text, 200))
		}
		if name == "artifacts" && strings.Contains(text, `"total":0`) {
			t.Fatalf("artifacts: the session's calls left nothing in trace %s: %s", trace, clipLine(text, 300))
		}
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"help", nil, `"overview"`},
		{"nowframe_build", map[string]any{"reason": "sdk"}, `"reason":"sdk"`},
		{"system_health", map[string]any{}, `"aw_ok":true`},
		{"aw_get_state", map[string]any{"max_age_ms": 0}, `"hostname":"vm"`},
		{"nowframe.build", map[string]any{"reason": "alias"}, `"tool":"nowframe.build"`},
		{"nowframe_build", map[string]any{"output": map[string]any{"path": "now", "pick": []string{"summary"}}, "store_as": "now"}, `"stored":{"key":"now","scope":"session"}`},
		{"state", map[string]any{"action": "get", "key": "now"}, `"value":{"summary":`},
		{"system_health", map[string]any{"response_mode": "compact"}, `"status":"Ok"`},
	} {
		if text := call(tc.name, tc.args); !strings.Contains(text, tc.want) {
			t.Fatalf("%s: envelope %s lacks %s", tc.name, clipLine(text, 300), tc.want)
		}
	}
	// An unknown tool is a protocol error (-32602) that names the right one.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nowframe_biuld"}); err == nil || !strings.Contains(err.Error(), "nowframe_build") {
		t.Fatalf("unknown tool: %v (want an error suggesting nowframe_build)", err)
	}
	sdkPrompts(t, ctx, cs)
}
