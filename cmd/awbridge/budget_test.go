package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
)

// Token budgets (issue 10): what a client hands the model for every tool
// (name, description and inputSchema), and the text of a nowframe_build
// answer per response mode.
const (
	budgetToolsList      = 9 << 10 // bytes, all the tools together
	budgetNowframeAI     = 3 << 10
	budgetNowframeCompac = 1 << 10
)

// publishedValues are the allowed values of the common arguments that have
// them: the schema of every tool lists them, since a model cannot guess
// them and the validator refuses any other.
var publishedValues = map[string][]string{
	"response_mode": {"ai", "compact"},
	"store_scope":   {"session", "persistent"},
}

// checkPublishedValues fails unless every tool's inputSchema lists the
// publishedValues.
func checkPublishedValues(t *testing.T, era string, toolsResult json.RawMessage) {
	t.Helper()
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					Type any      `json:"type"`
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsResult, &list); err != nil {
		t.Fatalf("tools/list %s: %v", era, err)
	}
	for _, tl := range list.Tools {
		for arg, want := range publishedValues {
			got := tl.InputSchema.Properties[arg]
			if got.Type != "string" || !slices.Equal(got.Enum, want) {
				t.Errorf("tools/list %s: %s's %s is %+v, want type string and enum %q", era, tl.Name, arg, got, want)
			}
		}
	}
}

// modelView is the compact JSON of what the model reads of each tool.
func modelView(t *testing.T, toolsResult json.RawMessage) (total int, per []string) {
	t.Helper()
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsResult, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v: %s", err, toolsResult)
	}
	for _, tl := range list.Tools {
		var schema bytes.Buffer
		if err := json.Compact(&schema, tl.InputSchema); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}{tl.Name, tl.Description, schema.Bytes()})
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		per = append(per, fmt.Sprintf("%s=%d", tl.Name, len(b)))
	}
	return total, per
}

const initialize20251125 = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget-test","version":"0"}}}`

// TestToolsListBudget measures what the real binary's tools/list hands the
// model (name, description and inputSchema of every tool) and fails above
// 9 KiB, and checks that every tool still lists the allowed values of the
// common arguments that have them. A 2025-11-25 session is measured, and a
// stateless 2026-07-28 request.
func TestToolsListBudget(t *testing.T) {
	env := baseEnv(t, "http://127.0.0.1:1", "AWBRIDGE_RELAY=0") // nothing listens: the list needs no ActivityWatch
	for _, era := range []struct {
		version string
		input   []string
	}{
		{"2025-11-25", []string{initialize20251125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`}},
		{"2026-07-28", []string{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"budget-test","version":"0"}}}}`}},
	} {
		got := replies(t, env, era.input)["2"].Result
		if era.version == "2026-07-28" && !bytes.Contains(got, []byte(`"resultType"`)) {
			t.Fatalf("tools/list %s: not a stateless answer (no resultType): %s", era.version, got)
		}
		total, per := modelView(t, got)
		t.Logf("tools/list %s: %d bytes for the model (%s); whole result %d bytes", era.version, total, strings.Join(per, " "), len(got))
		if total > budgetToolsList {
			t.Errorf("tools/list %s hands the model %d bytes, over the budget of %d", era.version, total, budgetToolsList)
		}
		checkPublishedValues(t, era.version, got)
	}
}

// longZone is one of the longest names in the zone database.
const longZone = "America/Argentina/Buenos_Aires"

// TestNowframeAnswerBudget measures the text content of real nowframe_build
// answers over stdio, against the recorded aw-server (a stale frame whose
// host was picked from the latest bucket: the longest notes) and against
// the simulator with its probe sidecar (a live frame with a probe payload),
// in ai and compact modes, in a zone with a long name, and fails over
// budget. It also checks what each
// mode keeps.
func TestNowframeAnswerBudget(t *testing.T) {
	recorded, _ := recordedAW(t)
	sim := awsim.New(awsim.Options{Hostname: "awsim", Seed: 7, Probe: true})
	sim.Seed(time.Now())
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)

	for _, tc := range []struct {
		name string
		env  []string
	}{
		// One of the longest zone names: frames name the zone.
		{"recorded", baseEnv(t, recorded.URL, "AWBRIDGE_RELAY=0", "TZ="+longZone)},
		{"simulator", baseEnv(t, simSrv.URL, "AWBRIDGE_RELAY=0", "AWBRIDGE_SIDECAR_URL="+simSrv.URL, "TZ="+longZone)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := replies(t, tc.env, []string{initialize20251125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nowframe_build","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"response_mode":"compact"}}}`,
			})
			for _, m := range []struct {
				id, mode     string
				budget       int
				keep, absent []string
			}{
				{"2", "ai", budgetNowframeAI,
					[]string{`"timezone":{"name":`, `"utc_offset":`, `"aw_info":`, `"aw_buckets":`, `"omni_probe":`, `"now":`, `"sources":`, `"notes":`, `"trace":`, `"policy":`,
						`"action":null`, `"artifact_uri_context":null`, `"artifact_uri_json":null`}, // seed 000's members, null when empty
					[]string{`,"error":null,`, `"parent_span_id":null`, `"next_actions":[]`, `"redactions":[]`}},
				{"3", "compact", budgetNowframeCompac,
					[]string{`"timestamp":`, `"timezone":{"name":`, `"utc_offset":`, `"reason":"mcp"`, `"now":{`, `"summary":`, `"stale":`, `"window":{`, `"afk":{`, `"status":"`, `"sources":{"activitywatch":{`},
					[]string{`"aw_info"`, `"aw_buckets"`, `"omni_probe"`, `"selection"`, `"notes"`, `"policy"`, `:null`}},
			} {
				var res struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					IsError bool `json:"isError"`
				}
				if err := json.Unmarshal(got[m.id].Result, &res); err != nil || len(res.Content) == 0 || res.IsError {
					t.Fatalf("%s answer: %v: %s %s", m.mode, err, got[m.id].Result, got[m.id].Error)
				}
				text := res.Content[0].Text
				t.Logf("nowframe_build %s (%s): %d bytes", m.mode, tc.name, len(text))
				if len(text) > m.budget {
					t.Errorf("nowframe_build %s answer is %d bytes, over the budget of %d:\n%s", m.mode, len(text), m.budget, text)
				}
				for _, k := range m.keep {
					if !strings.Contains(text, k) {
						t.Errorf("nowframe_build %s answer lacks %s:\n%s", m.mode, k, text)
					}
				}
				for _, k := range m.absent {
					if strings.Contains(text, k) {
						t.Errorf("nowframe_build %s answer still has %s:\n%s", m.mode, k, text)
					}
				}
			}
		})
	}
}
