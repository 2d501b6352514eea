package toolbus

import (
	"encoding/json"
	"sync"
)

// inputSchema renders params as a JSON Schema (draft 2020-12: the Claude
// API refuses a whole request when one tool's schema is not). The common
// arguments carry their type and values only (help and the instructions
// describe them once), which keeps what the model reads small. An enum
// keeps its "type": some providers (Gemini) refuse one without it.
func inputSchema(params []Param) json.RawMessage {
	// Rendered by hand so the properties keep the params' order: the
	// tool's own arguments first, then the common ones.
	props := []byte(`{"type":"object","properties":{`)
	var required []string
	for i, p := range params {
		s := map[string]any{}
		switch p.Type {
		case "string|object":
			s["type"] = []string{"string", "object"}
		case "any":
			// No "type" keyword: any JSON value ("any" is not a JSON
			// Schema type).
		default:
			s["type"] = p.Type
		}
		if p.Required {
			required = append(required, p.Name)
		}
		if len(p.Enum) > 0 { // the values: what a model needs most
			s["enum"] = p.Enum
		}
		if !p.common { // a common argument carries its type and values only
			if p.Description != "" {
				s["description"] = p.Description
			}
			if p.MaxLen > 0 {
				s["maxLength"] = p.MaxLen
			}
			if p.Max > p.Min {
				s["minimum"], s["maximum"] = p.Min, p.Max
			}
		}
		if i > 0 {
			props = append(props, ',')
		}
		props = append(append(append(props, mustJSON(p.Name)...), ':'), mustJSON(s)...)
	}
	props = append(props, '}')
	if len(required) > 0 {
		props = append(append(props, `,"required":`...), mustJSON(required)...)
	}
	return append(props, `,"additionalProperties":false}`...)
}

// resultDescription says why the published result requires nothing.
const resultDescription = "The tool's result as $defs/result describes it, unless the call's output argument or " +
	"response_mode compact reshaped it: then any JSON value."

// envelopeSchema describes the envelope tools/call returns (its
// structuredContent). output and response_mode may make the result any
// JSON value, so it accepts any; the tool's unshaped result schema stays
// under $defs, to read, not to validate against.
func envelopeSchema(result json.RawMessage) map[string]any {
	str := map[string]any{"type": "string"}
	strOrNull := map[string]any{"type": []string{"string", "null"}}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"success":     map[string]any{"type": "boolean"},
			"tool":        str,
			"action":      strOrNull,
			"status":      map[string]any{"type": "string", "enum": []string{"Ok", "Error", "Retryable"}},
			"result":      map[string]any{"description": resultDescription},
			"error":       map[string]any{"type": []string{"object", "null"}},
			"duration_ms": map[string]any{"type": "number"},
			"trace": map[string]any{"type": "object", "properties": map[string]any{
				"trace_id": str, "span_id": str, "parent_span_id": strOrNull}},
			"artifact_uri_context": strOrNull,
			"artifact_uri_json":    strOrNull,
			"attempts":             map[string]any{"type": "integer"},
			"policy":               map[string]any{"type": "object"},
			"cache_hit":            map[string]any{"type": "boolean"},
			"next_actions":         map[string]any{"type": "array"},
		},
		// Compact mode leaves seed 000's null members out: not required.
		"required": []string{"success", "tool", "status", "duration_ms", "trace"},
		"$defs":    map[string]any{"result": result},
	}
}

// Revisions that added members to a tool.
const (
	versionAnnotations = "2025-03-26" // annotations (title inside them)
	versionTitle       = "2025-06-18" // title, outputSchema
)

// toolLists are tools/list in the shape of each MCP revision's Tool, each
// rendered on its first use: base (2024-11-05, or none negotiated),
// annotations (2025-03-26), full (2025-06-18 and later).
type toolLists struct{ base, annotations, full func() json.RawMessage }

// forVersion picks the list for a protocol version. The revisions before
// 2025-06-18 are final; every later one lists the full Tool.
func (l *toolLists) forVersion(version string) json.RawMessage {
	switch version {
	case "", "2024-11-05":
		return l.base()
	case versionAnnotations:
		return l.annotations()
	}
	return l.full()
}

// lazyLists sets up the lists. New checked every result schema, so
// rendering cannot fail.
func (b *Bus) lazyLists() toolLists {
	render := func(version string) func() json.RawMessage {
		return sync.OnceValue(func() json.RawMessage { return mustJSON(b.listOf(version)) })
	}
	return toolLists{base: render(""), annotations: render(versionAnnotations), full: render(versionTitle)}
}

// listOf is tools/list in the shape of version: "" (base),
// versionAnnotations or versionTitle.
func (b *Bus) listOf(version string) any {
	type annotations struct {
		Title           string `json:"title,omitempty"`
		ReadOnlyHint    bool   `json:"readOnlyHint"`
		IdempotentHint  bool   `json:"idempotentHint"`
		DestructiveHint bool   `json:"destructiveHint"`
		OpenWorldHint   bool   `json:"openWorldHint"`
	}
	type tool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema map[string]any  `json:"outputSchema,omitempty"`
		Annotations  *annotations    `json:"annotations,omitempty"`
	}
	out := struct {
		Tools []tool `json:"tools"`
	}{Tools: []tool{}}
	for _, e := range b.tools {
		t := tool{Name: e.tool.Name, Description: e.tool.Description, InputSchema: inputSchema(e.params)}
		if version != "" {
			t.Annotations = &annotations{ReadOnlyHint: e.tool.ReadOnly,
				IdempotentHint: e.tool.Idempotent, DestructiveHint: !e.tool.ReadOnly, OpenWorldHint: false}
			if version == versionAnnotations {
				t.Annotations.Title = e.tool.Title // the only place 2025-03-26 has for it
			}
		}
		if version == versionTitle {
			rs := e.tool.ResultSchema
			if len(rs) == 0 {
				rs = json.RawMessage(`{}`)
			}
			t.Title, t.OutputSchema = e.tool.Title, envelopeSchema(rs)
		}
		out.Tools = append(out.Tools, t)
	}
	return out
}
