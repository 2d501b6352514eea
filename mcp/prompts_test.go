package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// promptStage serves one prompt, "p", whose argument "a" is echoed.
type promptStage struct{ *stageBackend }

func (promptStage) PromptsList() json.RawMessage {
	return json.RawMessage(`{"prompts":[{"name":"p","arguments":[{"name":"a","required":false}]}]}`)
}

func (promptStage) GetPrompt(name string, args map[string]string) (json.RawMessage, error) {
	if name != "p" {
		return nil, errors.New("unknown prompt")
	}
	return json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": "a=" + args["a"]}}}})
}

// TestPrompts: prompts/list and prompts/get in every era, the capability
// only with a PromptBackend, and every bad request a -32602 that says
// what is wrong (the backend's own words for an unknown prompt).
func TestPrompts(t *testing.T) {
	get := func(params string) string { return `"name":"p"` + params }
	tests := []struct {
		name, params string
		code         int
		result, msg  string
	}{
		{"list", "", 0, `{"prompts":[{"name":"p","arguments":[{"name":"a","required":false}]}]}`, ""},
		{"get", get(`,"arguments":{"a":"x"}`), 0, `"text":"a=x"`, ""},
		{"get, arguments null", get(`,"arguments":null`), 0, `"text":"a="`, ""},
		{"get, no name", `"arguments":{}`, CodeInvalidParams, "", "name is required"},
		{"get, name a number", `"name":3`, CodeInvalidParams, "", "name must be a string"},
		{"get, arguments an array", get(`,"arguments":["x"]`), CodeInvalidParams, "", "arguments must be an object"},
		{"get, an argument a number", get(`,"arguments":{"a":1}`), CodeInvalidParams, "", "a prompt's arguments are strings"},
		{"get, unknown prompt", `"name":"q"`, CodeInvalidParams, "", "invalid params: unknown prompt"},
	}
	for _, v := range []string{Version20241105, Version20251125, ModernVersion} {
		for _, tt := range tests {
			t.Run(v+"/"+tt.name, func(t *testing.T) {
				method := "prompts/get"
				if tt.name == "list" {
					method = "prompts/list"
				}
				line, init := `{"jsonrpc":"2.0","id":5,"method":"`+method+`","params":{`+tt.params+`}}`, v
				if v == ModernVersion {
					line, init = modernReq("5", method, tt.params), ""
				}
				r := checkOne(t, serveOne(t, NewServer(&promptStage{&stageBackend{}}, Options{}), init, line), want{id: "5", code: tt.code})
				if tt.code != 0 {
					if !strings.Contains(r.Error.Message, tt.msg) {
						t.Errorf("message %q, want %q", r.Error.Message, tt.msg)
					}
					return
				}
				res := string(r.Result)
				if !strings.Contains(res, strings.TrimSuffix(strings.TrimPrefix(tt.result, "{"), "}")) {
					t.Errorf("result %s, want %s", res, tt.result)
				}
				modern := strings.Contains(res, `"resultType":"complete"`)
				cached := strings.Contains(res, `"ttlMs":3600000,"cacheScope":"public"`)
				if modern != (v == ModernVersion) || cached != (modern && method == "prompts/list") {
					t.Errorf("result %s in %s: resultType %v, cache hints %v (only a modern list has them)", res, v, modern, cached)
				}
			})
		}
	}
	for _, v := range []string{Version20250618, ModernVersion} {
		without := NewServer(&stageBackend{}, Options{})
		line, init := `{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`, v
		if v == ModernVersion {
			line, init = modernReq("5", "prompts/list", ""), ""
		}
		checkOne(t, serveOne(t, without, init, line), want{id: "5", code: CodeMethodNotFound})
		if strings.Contains(string(without.discover)+string(without.initResult[Version20250618]), "prompts") {
			t.Errorf("a server without prompts advertises them: %s", without.discover)
		}
	}
	with := NewServer(&promptStage{&stageBackend{}}, Options{})
	if !strings.Contains(string(with.discover), `"prompts":{"listChanged":false}`) || !strings.Contains(string(with.initResult[Version20241105]), `"prompts":{"listChanged":false}`) {
		t.Errorf("the prompts capability is missing: %s", with.discover)
	}
}
