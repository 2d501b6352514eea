package toolbus

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	tpTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	tpParent = "00f067aa0ba902b7"
	tpValid  = "00-" + tpTrace + "-" + tpParent + "-01"
)

func TestParseTraceParent(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"version 00, sampled", tpValid, true},
		{"version 00, not sampled", "00-" + tpTrace + "-" + tpParent + "-00", true},
		{"unknown flags are kept", "00-" + tpTrace + "-" + tpParent + "-ff", true},
		{"optional whitespace around", " \t" + tpValid + "\t ", true},
		{"future version", "cc-" + tpTrace + "-" + tpParent + "-01", true},
		{"future version with more fields", "cc-" + tpTrace + "-" + tpParent + "-01-what-the-future-holds", true},
		{"future version, extra field not after a dash", "cc-" + tpTrace + "-" + tpParent + "-01.x", false},
		{"version 00 with more fields", tpValid + "-extra", false},
		{"version ff", "ff-" + tpTrace + "-" + tpParent + "-01", false},
		{"uppercase version", "0A-" + tpTrace + "-" + tpParent + "-01", false},
		{"uppercase trace id", "00-" + strings.ToUpper(tpTrace) + "-" + tpParent + "-01", false},
		{"uppercase parent id", "00-" + tpTrace + "-" + strings.ToUpper(tpParent) + "-01", false},
		{"uppercase flags", "00-" + tpTrace + "-" + tpParent + "-0A", false},
		{"all-zero trace id", "00-" + strings.Repeat("0", 32) + "-" + tpParent + "-01", false},
		{"all-zero parent id", "00-" + tpTrace + "-" + strings.Repeat("0", 16) + "-01", false},
		{"short trace id", "00-" + tpTrace[:31] + "-" + tpParent + "-01", false},
		{"long parent id", "00-" + tpTrace + "-" + tpParent + "0-01", false},
		{"not hex", "00-" + tpTrace[:31] + "g-" + tpParent + "-01", false},
		{"underscores for dashes", "00_" + tpTrace + "_" + tpParent + "_01", false},
		{"one-digit flags", "00-" + tpTrace + "-" + tpParent + "-1", false},
		{"empty", "", false},
		{"path traversal", "00-../../../../../../../../etc/passwd-" + tpParent + "-01", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, ok := parseTraceParent(tt.in)
			if ok != tt.ok {
				t.Fatalf("parseTraceParent(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if ok && (tp.traceID != tpTrace || tp.parentID != tpParent) {
				t.Fatalf("parseTraceParent(%q) = %+v", tt.in, tp)
			}
		})
	}
}

// W3C ids name artifact files: they must pass the trace and span id checks.
func TestW3CIDsAreValidTraceIDs(t *testing.T) {
	for _, id := range []string{tpTrace, tpParent, newSpanID()} {
		if msg := checkSpanID(id); msg != "" {
			t.Fatalf("%q: %s", id, msg)
		}
	}
}

var w3cSpan = regexp.MustCompile(`^[0-9a-f]{16}$`)

func TestTraceParentJoinsTheCallersTrace(t *testing.T) {
	p := newPipeline(t, nil)
	r := p.bus.Call(context.Background(), Request{Name: "limited", TraceParent: tpValid})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var e struct {
		Trace      Trace  `json:"trace"`
		URIContext string `json:"artifact_uri_context"`
		URIJSON    string `json:"artifact_uri_json"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatal(err)
	}
	if e.Trace.TraceID != tpTrace || e.Trace.ParentSpanID == nil || *e.Trace.ParentSpanID != tpParent {
		t.Fatalf("trace = %+v, want the traceparent's trace and parent", e.Trace)
	}
	span := e.Trace.SpanID
	if !w3cSpan.MatchString(span) || span == tpParent {
		t.Fatalf("span id %q is not a fresh W3C span id", span)
	}
	if want := "artifact://runs/" + tpTrace + "/tool_calls/" + span + "/result.json"; e.URIJSON != want {
		t.Fatalf("artifact_uri_json = %q, want %q", e.URIJSON, want)
	}
	if want := "artifact://runs/" + tpTrace + "/tool_calls/" + span + ".context"; e.URIContext != want {
		t.Fatalf("artifact_uri_context = %q, want %q", e.URIContext, want)
	}
	onDisk, err := os.ReadFile(filepath.Join(p.root, "artifacts", "runs", tpTrace, "tool_calls", span, "result.json"))
	if err != nil || string(onDisk) != string(r.Body) {
		t.Fatalf("result.json in the trace's folder: %v", err)
	}

	// A second call in the same client span is a sibling: same trace and
	// parent, another span.
	r2 := p.bus.Call(context.Background(), Request{Name: "limited", Args: json.RawMessage(`{"wait":true}`), TraceParent: tpValid})
	var e2 env
	_ = json.Unmarshal(r2.Body, &e2)
	if e2.Trace.TraceID != tpTrace || e2.Trace.SpanID == span {
		t.Fatalf("second call trace = %+v (first span %s)", e2.Trace, span)
	}
}

func TestTraceParentAndArguments(t *testing.T) {
	b := testBus(t) // newID: "gen"
	p := func(s string) *string { return &s }
	tests := []struct {
		name, args, traceparent string
		trace                   string
		span                    string // "w3c": a fresh W3C span id
		parent                  *string
	}{
		{"traceparent alone", `{}`, tpValid, tpTrace, "w3c", p(tpParent)},
		{"trace_id argument: traceparent ignored", `{"trace_id":"run"}`, tpValid, "run", "gen", nil},
		{"all arguments win", `{"trace_id":"run","span_id":"s","parent_span_id":"q"}`, tpValid, "run", "s", p("q")},
		{"parent_span_id argument replaces the parent only", `{"parent_span_id":"q"}`, tpValid, tpTrace, "w3c", p("q")},
		{"span_id argument replaces the span only", `{"span_id":"s"}`, tpValid, tpTrace, "s", p(tpParent)},
		{"invalid traceparent: own trace", `{}`, "ff-" + tpTrace + "-" + tpParent + "-01", "gen", "gen", nil},
		{"all-zero trace id: own trace", `{}`, "00-" + strings.Repeat("0", 32) + "-" + tpParent + "-01", "gen", "gen", nil},
		{"garbage: own trace", `{}`, "not a traceparent", "gen", "gen", nil},
		{"rejected arguments still join", `{"nope":1}`, tpValid, tpTrace, "w3c", p(tpParent)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Call(context.Background(), Request{Name: "echo_reason", Args: json.RawMessage(tt.args), TraceParent: tt.traceparent})
			if r.Err != nil && !strings.Contains(tt.name, "rejected") {
				t.Fatalf("an invalid traceparent must never fail the call: %v", r.Err)
			}
			var e env
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatal(err)
			}
			got := e.Trace
			if got.TraceID != tt.trace {
				t.Errorf("trace_id = %q, want %q", got.TraceID, tt.trace)
			}
			if tt.span == "w3c" && !w3cSpan.MatchString(got.SpanID) || tt.span != "w3c" && got.SpanID != tt.span {
				t.Errorf("span_id = %q, want %s", got.SpanID, tt.span)
			}
			switch {
			case tt.parent == nil && got.ParentSpanID != nil:
				t.Errorf("parent_span_id = %q, want none", *got.ParentSpanID)
			case tt.parent != nil && (got.ParentSpanID == nil || *got.ParentSpanID != *tt.parent):
				t.Errorf("parent_span_id = %v, want %q", got.ParentSpanID, *tt.parent)
			}
		})
	}
}
