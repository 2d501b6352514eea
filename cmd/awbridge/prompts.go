package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/engine"
)

// manifestPrompt is a prompt as an MCP bundle's manifest (v0.3) lists it:
// its text with ${arguments.NAME} where each argument goes.
type manifestPrompt struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Arguments   []string `json:"arguments"`
	Text        string   `json:"text"`
}

// cmdPrompts lists the MCP prompts this binary serves; --json prints them
// as the Claude Desktop bundle's manifest lists them (packaging/mcpb reads
// it).
func cmdPrompts(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "prompts")
	acceptConfig(fs)
	asJSON := fs.Bool("json", false, "print the prompts as an MCP bundle's manifest lists them")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	var rows []named
	var list struct {
		Prompts []manifestPrompt `json:"prompts"`
	}
	for _, p := range engine.Prompts() {
		rows = append(rows, named{p.Name, p.Description})
		list.Prompts = append(list.Prompts, manifestPrompt{p.Name, p.Description, p.ArgNames(), p.Text})
	}
	if *asJSON {
		b, err := json.Marshal(list)
		if err != nil {
			return fail(e, "prompts", err, exitUsage)
		}
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	printNamed(e.stdout, rows)
	return exitOK
}
