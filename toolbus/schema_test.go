package toolbus

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestToolsListPerVersion: each protocol version gets the members of a
// tool its revision defines (title and outputSchema from 2025-06-18,
// annotations from 2025-03-26), in the same order every time.
func TestToolsListPerVersion(t *testing.T) {
	b := testBus(t)
	tests := []struct {
		version                  string
		title, output, annotated bool
		annotationTitle          bool
	}{
		{"", false, false, false, false},
		{"2024-11-05", false, false, false, false},
		{"2025-03-26", false, false, true, true},
		{"2025-06-18", true, true, true, false},
		{"2025-11-25", true, true, true, false},
		{"2026-07-28", true, true, true, false},
	}
	for _, tc := range tests {
		t.Run("v"+tc.version, func(t *testing.T) {
			raw := b.ToolsList(tc.version)
			var list struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(raw, &list); err != nil || len(list.Tools) == 0 {
				t.Fatalf("tools/list %s: %v: %s", tc.version, err, raw)
			}
			var names []string
			for _, tl := range list.Tools {
				var name string
				_ = json.Unmarshal(tl["name"], &name)
				names = append(names, name)
				_, title := tl["title"]
				_, output := tl["outputSchema"]
				ann, annotated := tl["annotations"]
				if !slices.Contains([]string{"help", "state", "artifacts"}, name) {
					title = tc.title // the test's own tools have no title
				}
				if title != tc.title || output != tc.output || annotated != tc.annotated {
					t.Fatalf("%s: title=%v outputSchema=%v annotations=%v, want %v %v %v", name, title, output, annotated, tc.title, tc.output, tc.annotated)
				}
				if annotated && name == "help" && bytes.Contains(ann, []byte(`"title"`)) != tc.annotationTitle {
					t.Fatalf("%s: annotations %s: title inside them is for 2025-03-26 only", name, ann)
				}
			}
			want := []string{"help", "state", "artifacts", "echo_reason", "down", "slow", "boom", "plain_err"}
			if !slices.Equal(names, want) {
				t.Fatalf("order %v, want %v", names, want)
			}
			if again := b.ToolsList(tc.version); &again[0] != &raw[0] {
				t.Fatal("tools/list is rendered per call, not once")
			}
			if other := testBus(t).ToolsList(tc.version); !bytes.Equal(other, raw) {
				t.Fatalf("two buses render different lists:\n%s\n%s", raw, other)
			}
		})
	}
}

// TestInputSchemaDescribesCommonArgumentsOnce: a tool's own arguments keep
// their description, values and bounds and come first; the common
// arguments carry their type and, where they have them, their allowed
// values (response_mode, store_scope); required says which argument every
// call needs.
func TestInputSchemaDescribesCommonArgumentsOnce(t *testing.T) {
	b := testBus(t)
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b.ToolsList("2025-11-25"), &list); err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		var s struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
			Additional *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil || s.Type != "object" || s.Additional == nil || *s.Additional {
			t.Fatalf("%s: not a strict object schema: %s", tl.Name, tl.InputSchema)
		}
		for _, p := range commonParams(true, 0) {
			got, ok := s.Properties[p.Name]
			if !ok {
				if p.Name == argMaxAgeMs {
					continue // read-only tools only
				}
				t.Fatalf("%s: common argument %s is not accepted by the schema", tl.Name, p.Name)
			}
			want := 1
			if len(p.Enum) > 0 {
				want = 2
				if enum, _ := got["enum"].([]any); len(enum) != len(p.Enum) || got["type"] != "string" {
					t.Fatalf("%s: common argument %s = %v, want type string and enum %q", tl.Name, p.Name, got, p.Enum)
				}
			}
			if _, typed := got["type"]; !typed || len(got) != want {
				t.Fatalf("%s: common argument %s = %v, want its type and values only", tl.Name, p.Name, got)
			}
		}
		wantReq := map[string][]string{"state": {"action"}, "artifacts": {"action"}}[tl.Name]
		if !slices.Equal(s.Required, wantReq) {
			t.Fatalf("%s: required %v, want %v", tl.Name, s.Required, wantReq)
		}
		if tl.Name == "echo_reason" {
			if !strings.HasPrefix(string(tl.InputSchema), `{"type":"object","properties":{"reason":{"maxLength":10,"type":"string"},"n":`) {
				t.Fatalf("own arguments first, with their bounds: %s", tl.InputSchema)
			}
		}
	}
}

// TestRequiredArgumentIsRefused: a call without a required argument fails
// validation naming it, before the tool runs.
func TestRequiredArgumentIsRefused(t *testing.T) {
	b := testBus(t)
	for _, args := range []string{``, `{}`, `{"key":"k"}`} {
		r := b.Call(context.Background(), Request{Name: "state", Args: json.RawMessage(args)})
		if r.Err == nil || r.Stage != StageValidate || r.Err.Code != CodeSchemaInvalid || r.Err.Message != `argument "action" is required` {
			t.Fatalf("state %s: %+v stage %v", args, r.Err, r.Stage)
		}
	}
}
