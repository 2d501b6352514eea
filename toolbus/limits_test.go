package toolbus

import (
	"strings"
	"testing"

	"github.com/awbridge/awbridge/toolbus/redact"
)

// The state tool refuses, with a clear SchemaInvalid, a value that get could
// not hand back; one at the bound round-trips.
func TestStateValueBounds(t *testing.T) {
	p := newPipeline(t, nil)
	arr := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	wide := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]" }
	maxDepth, maxItems := redact.MaxDepth-1, redact.MaxItems-4
	tests := []struct {
		name, value, wantErr string
	}{
		{"at the depth bound", arr(maxDepth), ""},
		{"one level deeper", arr(maxDepth + 1), "value nests deeper than 63 levels"},
		{"far deeper", arr(5000), "value nests deeper than 63 levels"},
		{"at the items bound", wide(maxItems), ""},
		{"one element more", wide(maxItems + 1), "value holds more than 99996 members and elements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := p.call(t, "state", `{"action":"set","key":"k","value":`+tt.value+`}`)
			if tt.wantErr == "" {
				if r.Err != nil {
					t.Fatalf("set: %+v", r.Err)
				}
				r, env := p.call(t, "state", `{"action":"get","key":"k"}`)
				if r.Err != nil || !strings.Contains(string(r.Body), tt.value) {
					t.Fatalf("get did not hand the value back: %+v %v", r.Err, env["error"])
				}
				return
			}
			if r.Err == nil || r.Err.Code != CodeSchemaInvalid || r.Err.Message != tt.wantErr || r.Err.Details["argument"] != "value" {
				t.Fatalf("set: %+v, want SchemaInvalid %q", r.Err, tt.wantErr)
			}
		})
	}
}
