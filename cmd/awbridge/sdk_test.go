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

// TestOfficialSDKClient connects the official MCP Go SDK, as an independent
// client, to `awbridge stdio` in both MCP eras (its default 2026-07-28,
// served per request, and 2025-11-25 by initialize), lists the tools, calls
// every one and reads every resource.
func TestOfficialSDKClient(t *testing.T) {
	for _, tc := range []struct{ name, pin, want string }{
		{"modern", "", "2026-07-28"},
		{"legacy", "2025-11-25", "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) { sdkClientSession(t, tc.pin, tc.want) })
	}
}

func sdkClientSession(t *testing.T, pin, want string) {
	srv, _ := recordedAW(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(binPath, "stdio")
	cmd.Env = baseEnv(t, srv.URL)
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: pin})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "awbridge" {
		t.Fatalf("server name %q", got)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("protocol version %q, want %q", got, want)
	}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources/list: %v %+v", err, resources)
	}
	for _, r := range resources.Resources {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text == "" {
			t.Fatalf("resources/read %s: %v", r.URI, err)
		}
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || tl.OutputSchema == nil || tl.Description == "" {
			t.Fatalf("tool %s lacks annotations, outputSchema or description", tl.Name)
		}
		if readOnly := tl.Name != "state"; tl.Annotations.ReadOnlyHint != readOnly {
			t.Fatalf("tool %s: readOnlyHint %v", tl.Name, tl.Annotations.ReadOnlyHint)
		}
	}
	for _, want := range []string{"help", "nowframe_build", "system_health", "aw_get_state", "state", "artifacts"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
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
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.name, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: isError=%v content=%d", tc.name, res.IsError, len(res.Content))
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if !strings.Contains(text, tc.want) || !strings.Contains(text, `"success":true`) {
			t.Fatalf("%s: envelope %s lacks %s", tc.name, clipLine(text, 300), tc.want)
		}
		structured, _ := json.Marshal(res.StructuredContent)
		var a, b any
		_ = json.Unmarshal([]byte(text), &a)
		_ = json.Unmarshal(structured, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%s: structuredContent differs from the text envelope", tc.name)
		}
	}
	// An unknown tool is a protocol error (-32602).
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nowframe_biuld"}); err == nil || !strings.Contains(err.Error(), "nowframe_build") {
		t.Fatalf("unknown tool: %v (want an error suggesting nowframe_build)", err)
	}
}
