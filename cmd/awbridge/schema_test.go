package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// protocolVersions are the MCP revisions initialize accepts.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// metaSchema2020 is the JSON Schema draft 2020-12 meta-schema (embedded in
// the validator library: nothing is fetched).
const metaSchema2020 = "https://json-schema.org/draft/2020-12/schema"

// listOverStdio runs one `awbridge stdio` session of protocol version v
// and returns the replies to tools/list, resources/list and
// resources/templates/list, and the advertised capabilities.
func listOverStdio(t *testing.T, env []string, v string) (tools, resources, templates reply, caps json.RawMessage) {
	t.Helper()
	got := replies(t, env, []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"schema-test","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/templates/list","params":{}}`,
	})
	for _, id := range []string{"1", "2", "3", "4"} {
		if _, ok := got[id]; !ok {
			t.Fatalf("%s: no reply to request %s: %v", v, id, got)
		}
	}
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(got["1"].Result, &init); err != nil || init.ProtocolVersion != v {
		t.Fatalf("initialize for %s answered %s %s (%v)", v, got["1"].Result, got["1"].Error, err)
	}
	return got["2"], got["3"], got["4"], init.Capabilities
}

// checkSchema validates schema against the 2020-12 meta-schema and
// compiles it as a 2020-12 schema.
func checkSchema(meta *jsonschema.Schema, name string, schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := meta.Validate(doc); err != nil {
		return fmt.Errorf("not a valid draft 2020-12 schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if _, err := c.Compile(url); err != nil {
		return fmt.Errorf("does not compile: %v", err)
	}
	return nil
}

// TestToolSchemasAreValidJSONSchema2020 starts the real binary for every
// protocol version and checks every inputSchema and outputSchema of
// tools/list against the JSON Schema draft 2020-12 meta-schema, as the
// Claude API does on every request (one invalid tool fails the whole
// request: a "type":"any" stopped Claude Desktop and Claude Code). Where
// resources are advertised, resources/templates/list is answered too.
func TestToolSchemasAreValidJSONSchema2020(t *testing.T) {
	meta, err := jsonschema.NewCompiler().Compile(metaSchema2020)
	if err != nil {
		t.Fatalf("the 2020-12 meta-schema: %v", err)
	}
	// The check itself refuses what broke Claude.
	if err := checkSchema(meta, "bad", json.RawMessage(`{"type":"object","properties":{"value":{"type":"any"}}}`)); err == nil {
		t.Fatal(`the schema check accepts "type":"any"`)
	}
	srv, _ := recordedAW(t)
	for _, v := range protocolVersions {
		t.Run(v, func(t *testing.T) {
			tools, resources, templates, caps := listOverStdio(t, baseEnv(t, srv.URL), v)
			var list struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(tools.Result, &list); err != nil || len(list.Tools) == 0 {
				t.Fatalf("tools/list: %v: %s %s", err, tools.Result, tools.Error)
			}
			for _, tl := range list.Tools {
				if tl.InputSchema == nil {
					t.Errorf("tool %s has no inputSchema", tl.Name)
				}
				for kind, s := range map[string]json.RawMessage{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
					if s == nil {
						continue
					}
					if err := checkSchema(meta, tl.Name+"-"+kind, s); err != nil {
						t.Errorf("tool %s: %s %v", tl.Name, kind, err)
					}
				}
			}

			var c struct {
				Resources json.RawMessage `json:"resources"`
			}
			if err := json.Unmarshal(caps, &c); err != nil || c.Resources == nil {
				t.Fatalf("resources are not advertised: %s", caps)
			}
			var rl struct {
				Resources []json.RawMessage `json:"resources"`
			}
			if err := json.Unmarshal(resources.Result, &rl); err != nil || len(rl.Resources) == 0 {
				t.Fatalf("resources/list: %v: %s %s", err, resources.Result, resources.Error)
			}
			var tl struct {
				ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
			}
			if err := json.Unmarshal(templates.Result, &tl); err != nil || tl.ResourceTemplates == nil {
				t.Fatalf("resources/templates/list must answer a resourceTemplates list: %v: %s %s", err, templates.Result, templates.Error)
			}
		})
	}
}
