package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestStructuredContentMatchesOutputSchema calls tools the way the server's
// instructions tell the model to (response_mode "compact", output shaping
// that picks members, selects a string or an array, or answers null for
// missing data), and plainly, in every protocol version that has
// outputSchema (2025-06-18 and 2025-11-25 by initialize, 2026-07-28 per
// request), and checks each successful structuredContent against the
// outputSchema the same version's tools/list published. The MCP spec says
// a server MUST return structured results that conform to the tool's
// outputSchema, and the official TypeScript SDK client (Claude Desktop,
// Claude Code) validates them: a mismatch turns a good answer into an
// error the model sees. An unshaped answer's result also matches the
// unshaped result schema the outputSchema documents under $defs/result.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	srv := simulatedAW(t)
	calls := []struct {
		name, args string
		plain      bool // neither shaped nor compact: the result is as $defs/result says
	}{
		{"nowframe_build", `{"response_mode":"compact"}`, false},
		{"system_health", `{"response_mode":"compact"}`, false},
		{"aw_get_state", `{"response_mode":"compact"}`, false},
		{"nowframe_history", `{"response_mode":"compact"}`, false},
		{"nowframe_build", `{"output":{"pick":["now"]}}`, false},
		{"nowframe_build", `{"output":{"path":"now.summary"}}`, false},
		{"system_health", `{"output":{"omit":["aw_ok","omni_probe"]}}`, false},
		{"nowframe_history", `{"output":{"path":"switches","map":{"pick":["at","app"]}}}`, false},
		{"aw_get_state", `{"output":{"path":"no_such_member","missing":"null"}}`, false},
		{"aw_get_state", `{"output":{"path":"no_such_member","missing":"undefined"}}`, false},
		{"help", `{"response_mode":"compact","output":{"path":"tools[0].name"}}`, false},
		{"nowframe_build", `{}`, true},
		{"system_health", `{}`, true},
		{"aw_get_state", `{}`, true},
		{"nowframe_history", `{}`, true},
	}
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			var input []string
			meta := ""
			if v == "2026-07-28" { // stateless: every request carries its version
				meta = wireMeta + ","
			} else {
				input = append(input,
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"outputschema-test","version":"0"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			input = append(input, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+strings.TrimSuffix(meta, ",")+`}}`)
			for i, c := range calls {
				input = append(input, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, 10+i, meta, c.name, c.args))
			}
			got := replies(t, baseEnv(t, srv.URL, "AWBRIDGE_RELAY=0"), input)
			envelope, result := publishedOutputSchemas(t, got["2"].Result)
			for i, c := range calls {
				r := got[fmt.Sprint(10+i)]
				var res struct {
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				}
				if r.Result == nil || json.Unmarshal(r.Result, &res) != nil || res.IsError || res.StructuredContent == nil {
					t.Fatalf("%s %s: no structured result: %s %s", c.name, c.args, r.Result, r.Error)
				}
				sc, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
				if err != nil {
					t.Fatal(err)
				}
				if err := envelope[c.name].Validate(sc); err != nil {
					t.Errorf("%s %s: structuredContent does not match the published outputSchema: %v\n%s", c.name, c.args, err, res.StructuredContent)
				}
				if !c.plain || result[c.name] == nil {
					continue
				}
				if err := result[c.name].Validate(sc.(map[string]any)["result"]); err != nil {
					t.Errorf("%s %s: the unshaped result does not match $defs/result: %v", c.name, c.args, err)
				}
			}
		})
	}
}

// publishedOutputSchemas compiles, from a tools/list result, each tool's
// outputSchema and the unshaped result schema it keeps under $defs/result.
func publishedOutputSchemas(t *testing.T, toolsResult json.RawMessage) (envelope, result map[string]*jsonschema.Schema) {
	t.Helper()
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsResult, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v: %s", err, toolsResult)
	}
	envelope, result = map[string]*jsonschema.Schema{}, map[string]*jsonschema.Schema{}
	for _, tl := range list.Tools {
		if tl.OutputSchema == nil {
			t.Fatalf("tool %s has no outputSchema", tl.Name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.OutputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "mem:///" + tl.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if envelope[tl.Name], err = c.Compile(url); err != nil {
			t.Fatalf("tool %s: outputSchema: %v", tl.Name, err)
		}
		if result[tl.Name], err = c.Compile(url + "#/$defs/result"); err != nil {
			t.Errorf("tool %s: outputSchema does not document the unshaped result in $defs/result: %v", tl.Name, err)
		}
	}
	return envelope, result
}
