package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/awbridge/awbridge/engine"
)

// sdkPrompts is what a client does with the prompts: it lists them (the
// ones a person picks as /mcp__awbridge__standup...), gets each without
// arguments (the message names the calls, with the default period) and
// with a period (the message carries it instead), and gets an unknown
// prompt, an unknown argument and a bad period: each a JSON-RPC error
// that says what is wrong.
func sdkPrompts(t *testing.T, ctx context.Context, cs *sdk.ClientSession) {
	t.Helper()
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("no prompts capability")
	}
	listed, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	type want struct{ dflt, calls string }
	wants := map[string]want{
		"standup":     {`"period":"yesterday"`, `{"period":"today","group_by":"title"`},
		"week_review": {`"period":"this_week"`, `"compare":"previous"`},
		"categorize":  {`"period":"last_7d"`, `"category":"Uncategorized"`},
	}
	if len(listed.Prompts) != len(wants) {
		t.Fatalf("prompts/list: %d prompts, want %d", len(listed.Prompts), len(wants))
	}
	text := func(name string, args map[string]string) string {
		t.Helper()
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		if err != nil || len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("prompts/get %s %v: %v %+v", name, args, err, res)
		}
		tc, ok := res.Messages[0].Content.(*sdk.TextContent)
		if !ok {
			t.Fatalf("prompts/get %s: content %T", name, res.Messages[0].Content)
		}
		return tc.Text
	}
	for _, p := range listed.Prompts {
		w, ok := wants[p.Name]
		if !ok || p.Description == "" || len(p.Arguments) != 1 || p.Arguments[0].Name != "period" || p.Arguments[0].Required {
			t.Fatalf("prompt %+v: want one of %v with an optional period", p, wants)
		}
		got := text(p.Name, nil)
		if !strings.Contains(got, "activity_summary "+`{`) || !strings.Contains(got, w.dflt) || !strings.Contains(got, w.calls) || strings.Contains(got, "${") {
			t.Errorf("prompts/get %s: %q lacks the call with %s and %s", p.Name, got, w.dflt, w.calls)
		}
		if got := text(p.Name, map[string]string{"period": "last_14d"}); !strings.Contains(got, `"period":"last_14d"`) || strings.Contains(got, w.dflt) {
			t.Errorf("prompts/get %s with period last_14d: %q", p.Name, got)
		}
		if len(got) > 1200 {
			t.Errorf("prompts/get %s: %d bytes of text; keep a prompt under 1,200", p.Name, len(got))
		}
	}
	for _, bad := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"standupp", nil, `unknown prompt "standupp" (the prompts are standup, week_review, categorize)`},
		{"standup", map[string]string{"day": "monday"}, `standup takes no argument "day" (its arguments: period)`},
		{"week_review", map[string]string{"period": "fortnight"}, `unknown period "fortnight"`},
	} {
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: bad.name, Arguments: bad.args})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, bad.want) {
			t.Errorf("prompts/get %s %v: %v, want -32602 saying %s", bad.name, bad.args, err, bad.want)
		}
	}
}

// TestPromptCallsFitTheTools: every call a prompt tells the model to make
// (`TOOL {JSON}` in its message, its default period filled in) names a
// listed tool with arguments its inputSchema accepts, so a renamed tool
// or argument cannot leave a prompt asking for calls that fail; and
// `awbridge prompts --json` lists the same prompts, as the manifest takes
// them.
func TestPromptCallsFitTheTools(t *testing.T) {
	vars := cleanVars(t)
	code, list, errs := runIn(t, vars, false, "tools", "--json", "--no-relay")
	if code != exitOK {
		t.Fatalf("tools --json: exit %d: %s", code, errs)
	}
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(list), &tools); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range tools.Tools {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.InputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem:///"+tl.Name, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tl.Name], err = c.Compile("mem:///" + tl.Name); err != nil {
			t.Fatal(err)
		}
	}
	call := regexp.MustCompile(`\b([a-z]+_[a-z_]+) \{`)
	for _, p := range engine.Prompts() {
		msg, err := p.Fill(nil)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		calls := call.FindAllStringSubmatchIndex(msg, -1)
		if len(calls) < 2 {
			t.Fatalf("%s names %d calls: %s", p.Name, len(calls), msg)
		}
		for _, at := range calls {
			name := msg[at[2]:at[3]]
			dec := json.NewDecoder(strings.NewReader(msg[at[1]-1:]))
			dec.UseNumber()
			var args map[string]any
			if err := dec.Decode(&args); err != nil {
				t.Fatalf("%s: the arguments of %s are not JSON: %v", p.Name, name, err)
			}
			schema, ok := schemas[name]
			if !ok {
				t.Errorf("%s names the tool %s, which tools/list lacks", p.Name, name)
				continue
			}
			if err := schema.Validate(args); err != nil {
				t.Errorf("%s: %s %v does not fit its inputSchema: %v", p.Name, name, args, err)
			}
		}
	}

	code, out, errs := runIn(t, vars, false, "prompts", "--json")
	var manifest struct{ Prompts []manifestPrompt }
	if code != exitOK || json.Unmarshal([]byte(out), &manifest) != nil {
		t.Fatalf("prompts --json: exit %d: %s%s", code, out, errs)
	}
	for i, p := range engine.Prompts() {
		if i >= len(manifest.Prompts) || manifest.Prompts[i].Name != p.Name || manifest.Prompts[i].Text != p.Text ||
			!slices.Equal(manifest.Prompts[i].Arguments, p.ArgNames()) || !strings.Contains(p.Text, "${arguments.period}") {
			t.Errorf("prompts --json lists %+v, want %s with its template", manifest.Prompts, p.Name)
		}
	}
}
