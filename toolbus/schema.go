package toolbus

import (
	"encoding/json"
)

// inputSchema renders params as a JSON Schema (draft 2020-12, the dialect
// of MCP and of the Claude API, which refuses a whole request when one
// tool's schema is not valid 2020-12).
func inputSchema(params []Param) map[string]any {
	props := make(map[string]any, len(params))
	for _, p := range params {
		s := map[string]any{"description": p.Description}
		switch p.Type {
		case "string|object":
			s["type"] = []string{"string", "object"}
		case "any":
			// No "type" keyword: any JSON value ("any" is not a JSON
			// Schema type).
		default:
			s["type"] = p.Type
		}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
		if p.MaxLen > 0 {
			s["maxLength"] = p.MaxLen
		}
		if p.Pattern != "" {
			s["pattern"] = p.Pattern
		}
		if p.Max > p.Min {
			s["minimum"], s["maximum"] = p.Min, p.Max
		}
		props[p.Name] = s
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// envelopeSchema describes the envelope that tools/call returns.
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
			"result":      map[string]any{"anyOf": []any{result, map[string]any{"type": "null"}}},
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
		// compact mode and output.missing "undefined" leave the others out.
		"required": []string{"success", "tool", "status", "duration_ms", "trace"},
	}
}

func (b *Bus) renderList() (json.RawMessage, error) {
	type annotations struct {
		Title           string `json:"title,omitempty"`
		ReadOnlyHint    bool   `json:"readOnlyHint"`
		IdempotentHint  bool   `json:"idempotentHint"`
		DestructiveHint bool   `json:"destructiveHint"`
		OpenWorldHint   bool   `json:"openWorldHint"`
	}
	type tool struct {
		Name         string         `json:"name"`
		Title        string         `json:"title,omitempty"`
		Description  string         `json:"description"`
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
		Annotations  annotations    `json:"annotations"`
	}
	out := struct {
		Tools []tool `json:"tools"`
	}{}
	for _, e := range b.tools {
		rs := e.tool.ResultSchema
		if len(rs) == 0 {
			rs = json.RawMessage(`{}`)
		}
		out.Tools = append(out.Tools, tool{
			Name: e.tool.Name, Title: e.tool.Title, Description: e.tool.Description,
			InputSchema:  inputSchema(e.params),
			OutputSchema: envelopeSchema(rs),
			Annotations: annotations{Title: e.tool.Title, ReadOnlyHint: e.tool.ReadOnly,
				IdempotentHint: e.tool.Idempotent, DestructiveHint: !e.tool.ReadOnly, OpenWorldHint: false},
		})
	}
	return json.Marshal(out)
}
