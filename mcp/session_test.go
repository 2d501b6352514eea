package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/toolbus"
)

const initID = `"init-0"`

// serveOne runs an optional initialize at version, then line, and returns
// the replies to line (the initialize reply is checked and dropped).
func serveOne(t *testing.T, srv *Server, version, line string) []outLine {
	t.Helper()
	input := line + "\n"
	if version != "" {
		input = initLine(initID, version) + "\n" + input
	}
	var got []outLine
	for _, ol := range runLines(t, srv, input) {
		if ol.Batch == nil && string(ol.Reply.ID) == initID {
			if ol.Reply.Error != nil {
				t.Fatalf("initialize failed: %s", ol.Raw)
			}
			continue
		}
		got = append(got, ol)
	}
	return got
}

// want describes the single reply expected: no reply, a result, or an error.
type want struct {
	none   bool
	id     string // raw id, byte-exact ("null" for null)
	code   int    // 0: a result
	result string // exact result JSON when set
}

func checkOne(t *testing.T, got []outLine, w want) wireReply {
	t.Helper()
	if w.none {
		if len(got) != 0 {
			t.Fatalf("got %d replies %q, want none", len(got), got[0].Raw)
		}
		return wireReply{}
	}
	if len(got) != 1 || got[0].Batch != nil {
		t.Fatalf("got %d replies %+v, want exactly one", len(got), got)
	}
	r := got[0].Reply
	if r.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q", r.JSONRPC)
	}
	if string(r.ID) != w.id {
		t.Errorf("id = %s, want %s (byte-exact) in %s", r.ID, w.id, got[0].Raw)
	}
	if (r.Result != nil) == (r.Error != nil) {
		t.Fatalf("reply must have exactly one of result and error: %s", got[0].Raw)
	}
	if w.code != 0 {
		if r.Error == nil || r.Error.Code != w.code {
			t.Fatalf("reply %s, want error %d", got[0].Raw, w.code)
		}
		if r.Error.Message == "" {
			t.Errorf("error without message: %s", got[0].Raw)
		}
		return r
	}
	if r.Error != nil {
		t.Fatalf("reply %s, want a result", got[0].Raw)
	}
	if w.result != "" && string(r.Result) != w.result {
		t.Errorf("result = %s, want %s", r.Result, w.result)
	}
	return r
}

func TestProtocolRules(t *testing.T) {
	tests := []struct {
		name, version, line string
		want                want
	}{
		// Framing and JSON.
		{"invalid json", "", `{"jsonrpc":"2.0","id":1,`, want{id: "null", code: CodeParseError}},
		{"two values on a line", "", ping("1") + ping("2"), want{id: "null", code: CodeParseError}},
		{"trailing garbage", "", ping("1") + " x", want{id: "null", code: CodeParseError}},
		{"string", "", `"hello"`, want{id: "null", code: CodeInvalidRequest}},
		{"number", "", `42`, want{id: "null", code: CodeInvalidRequest}},
		{"null", "", `null`, want{id: "null", code: CodeInvalidRequest}},
		{"true", "", `true`, want{id: "null", code: CodeInvalidRequest}},
		{"BOM then ping", "", "\xef\xbb\xbf" + ping("1"), want{id: "1", result: `{}`}},
		{"whitespace around", "", " \t" + ping("1") + " \t", want{id: "1", result: `{}`}},

		// Batches outside 2025-03-26.
		{"batch without initialize", "", `[` + ping("1") + `]`, want{id: "null", code: CodeInvalidRequest}},
		{"batch in 2025-06-18", Version20250618, `[` + ping("1") + `]`, want{id: "null", code: CodeInvalidRequest}},
		{"batch in 2024-11-05", Version20241105, `[` + ping("1") + `]`, want{id: "null", code: CodeInvalidRequest}},
		{"empty batch in 2025-11-25", Version20251125, `[]`, want{id: "null", code: CodeInvalidRequest}},
		{"notification batch outside 2025-03-26", "", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, want{id: "null", code: CodeInvalidRequest}},

		// Envelope.
		{"jsonrpc 1.0", "", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, want{id: "3", code: CodeInvalidRequest}},
		{"jsonrpc number", "", `{"jsonrpc":2.0,"id":3,"method":"ping"}`, want{id: "3", code: CodeInvalidRequest}},
		{"jsonrpc missing", "", `{"id":"x","method":"ping"}`, want{id: `"x"`, code: CodeInvalidRequest}},
		{"keys are case-sensitive", "", `{"JSONRPC":"2.0","id":3,"method":"ping"}`, want{id: "3", code: CodeInvalidRequest}},
		{"method missing", "", `{"jsonrpc":"2.0","id":4}`, want{id: "4", code: CodeInvalidRequest}},
		{"method number", "", `{"jsonrpc":"2.0","id":4,"method":5}`, want{id: "4", code: CodeInvalidRequest}},
		{"method null", "", `{"jsonrpc":"2.0","id":4,"method":null}`, want{id: "4", code: CodeInvalidRequest}},
		{"repeated method", "", `{"jsonrpc":"2.0","id":5,"method":"ping","method":"ping"}`, want{id: "5", code: CodeInvalidRequest}},
		{"repeated id", "", `{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}`, want{id: "null", code: CodeInvalidRequest}},
		// Responses answer nothing the server asked: no reply at all.
		{"a response object", "", `{"jsonrpc":"2.0","id":7,"result":{}}`, want{none: true}},
		{"an error response", "", `{"jsonrpc":"2.0","id":"e","error":{"code":-32601,"message":"no"}}`, want{none: true}},
		{"a response with id null", "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, want{none: true}},
		{"a response without jsonrpc", Version20251125, `{"id":7,"result":1}`, want{none: true}},
		{"unknown members ignored", "", `{"jsonrpc":"2.0","id":8,"method":"ping","extra":[1,{"a":"}"}]}`, want{id: "8", result: `{}`}},
		{"escaped member names", "", `{"json\u0072pc":"2.\u0030","\u0069d":9,"method":"p\u0069ng"}`, want{id: "9", result: `{}`}},

		// Ids echoed exactly.
		{"id string 1", "", ping(`"1"`), want{id: `"1"`, result: `{}`}},
		{"id int", "", ping(`1`), want{id: `1`, result: `{}`}},
		{"id 1.0", "", ping(`1.0`), want{id: `1.0`, result: `{}`}},
		{"id -0", "", ping(`-0`), want{id: `-0`, result: `{}`}},
		{"id exponent", "", ping(`1E+3`), want{id: `1E+3`, result: `{}`}},
		{"id huge int", "", ping(`123456789012345678901234567890`), want{id: `123456789012345678901234567890`, result: `{}`}},
		{"id escapes", "", ping(`"a\"b\\c\u00e9\n"`), want{id: `"a\"b\\c\u00e9\n"`, result: `{}`}},
		{"id empty string", "", ping(`""`), want{id: `""`, result: `{}`}},
		{"id object", "", ping(`{"a":1}`), want{id: "null", code: CodeInvalidRequest}},
		{"id array", "", ping(`[1]`), want{id: "null", code: CodeInvalidRequest}},
		{"id bool", "", ping(`true`), want{id: "null", code: CodeInvalidRequest}},
		{"id null", "", ping(`null`), want{id: "null", code: CodeInvalidRequest}},
		{"id object and bad jsonrpc", "", `{"jsonrpc":"1","id":{},"method":"ping"}`, want{id: "null", code: CodeInvalidRequest}},

		// Notifications never get a reply.
		{"notification unknown method", "", `{"jsonrpc":"2.0","method":"nope"}`, want{none: true}},
		{"notification unknown notifications/", "", `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`, want{none: true}},
		{"notification bad jsonrpc", "", `{"jsonrpc":"1.0","method":"ping"}`, want{none: true}},
		{"notification no jsonrpc", "", `{"method":"ping"}`, want{none: true}},
		{"notification method number", "", `{"jsonrpc":"2.0","method":7}`, want{none: true}},
		{"notification bad params", "", `{"jsonrpc":"2.0","method":"tools/call","params":"x"}`, want{none: true}},
		{"notification ping", "", `{"jsonrpc":"2.0","method":"ping"}`, want{none: true}},
		{"notification initialized", "", `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, want{none: true}},
		{"notification cancelled unknown id", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, want{none: true}},
		{"notification cancelled bad params", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`, want{none: true}},
		{"empty object", "", `{}`, want{none: true}},

		// Methods.
		{"unknown method", "", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, want{id: "1", code: CodeMethodNotFound}},
		{"rpc. method", "", `{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`, want{id: "1", code: CodeMethodNotFound}},
		{"unknown notifications/ with id", "", `{"jsonrpc":"2.0","id":1,"method":"notifications/x"}`, want{id: "1", code: CodeMethodNotFound}},
		{"ping with params", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{}}}`, want{id: "1", result: `{}`}},
		{"ping with null params", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, want{id: "1", result: `{}`}},
		{"ping with array params", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, want{id: "1", code: CodeInvalidParams}},
		{"tools/list before initialize", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, want{id: "2", result: fakeToolsList}},
		{"tools/list with cursor", Version20250618, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"abc"}}`, want{id: "2", result: fakeToolsList}},
		{"tools/list params string", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":"x"}`, want{id: "2", code: CodeInvalidParams}},
		{"tools/call params string", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}`, want{id: "3", code: CodeInvalidParams}},
		{"tools/call without params", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call"}`, want{id: "3", code: CodeInvalidParams}},
		{"tools/call without name", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}`, want{id: "3", code: CodeInvalidParams}},
		{"tools/call name number", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`, want{id: "3", code: CodeInvalidParams}},
		{"tools/call arguments array", "", toolCall("3", "ok", `[1]`), want{id: "3", code: CodeInvalidParams}},
		{"tools/call arguments string", "", toolCall("3", "ok", `"a"`), want{id: "3", code: CodeInvalidParams}},
		{"tools/call repeated name", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok","name":"x"}}`, want{id: "3", code: CodeInvalidParams}},
		{"direct params array", "", `{"jsonrpc":"2.0","id":4,"method":"nowframe.build","params":["manual"]}`, want{id: "4", code: CodeInvalidParams}},
		{"direct without initialize", "", `{"jsonrpc":"2.0","id":4,"method":"system.health"}`, want{id: "4", result: `{"method":"system.health"}`}},
		{"direct with params", "", `{"jsonrpc":"2.0","id":4,"method":"nowframe.build","params":{"reason":"manual"}}`, want{id: "4", result: `{"method":"nowframe.build"}`}},
		{"direct aw.get_state", "", `{"jsonrpc":"2.0","id":4,"method":"aw.get_state"}`, want{id: "4", result: `{"method":"aw.get_state"}`}},
		{"initialized with id", "", `{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, want{id: "5", result: `{}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &stageBackend{}
			srv := NewServer(b, direct(Options{}))
			checkOne(t, serveOne(t, srv, tc.version, tc.line), tc.want)
			// Only calls with an id that passed the checks reach the backend.
			if tc.want.none && b.calls.Load() != 0 {
				t.Errorf("a notification reached the backend %d times", b.calls.Load())
			}
		})
	}
}

// After every error the stream goes on, and each request gets its answer.
func TestStreamGoesOnAfterErrors(t *testing.T) {
	srv := NewServer(&stageBackend{}, direct(Options{MaxLineBytes: 256}))
	input := strings.Join([]string{
		`{broken`,
		ping("1"),
		`"str"`,
		"\r",
		`{"jsonrpc":"2.0","method":"nope"}`,
		ping("2") + "\r",
		`{"jsonrpc":"2.0","id":3,"method":"nope"}`,
		`{"jsonrpc":"2.0","id":4,"method":"x","params":"` + strings.Repeat("y", 300) + `"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`,
		"   ",
		ping("6"), // the last line has no newline
	}, "\n")
	got := runLines(t, srv, input)
	var summary []string
	for _, ol := range got {
		r := ol.Reply
		if r.Error != nil {
			summary = append(summary, string(r.ID)+":"+itoa(r.Error.Code))
		} else {
			summary = append(summary, string(r.ID)+":ok")
		}
	}
	want := "null:-32700 1:ok null:-32600 2:ok 3:-32601 4:-32600 5:-32602 6:ok"
	if strings.Join(summary, " ") != want {
		t.Fatalf("replies\n got %s\nwant %s", strings.Join(summary, " "), want)
	}
	if r := got[5].Reply; r.Error.Message != "request too large" {
		t.Errorf("too-long message = %q", r.Error.Message)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestInitializeNegotiation(t *testing.T) {
	tests := []struct {
		name, params string
		wantVersion  string
		wantCode     int
	}{
		{"2024-11-05", `{"protocolVersion":"2024-11-05"}`, Version20241105, 0},
		{"2025-03-26", `{"protocolVersion":"2025-03-26"}`, Version20250326, 0},
		{"2025-06-18", `{"protocolVersion":"2025-06-18"}`, Version20250618, 0},
		{"2025-11-25", `{"protocolVersion":"2025-11-25"}`, Version20251125, 0},
		{"future", `{"protocolVersion":"2099-01-01"}`, LatestVersion, 0},
		{"past", `{"protocolVersion":"2024-10-07"}`, LatestVersion, 0},
		{"empty", `{"protocolVersion":""}`, LatestVersion, 0},
		{"no version", `{"capabilities":{}}`, LatestVersion, 0},
		{"no params", ``, LatestVersion, 0},
		{"null params", `null`, LatestVersion, 0},
		{"version number", `{"protocolVersion":20250618}`, "", CodeInvalidParams},
		{"params array", `["2025-06-18"]`, "", CodeInvalidParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewServer(&stageBackend{}, direct(Options{ServerVersion: "1.2.3", Instructions: "be brief"}))
			line := `{"jsonrpc":"2.0","id":1,"method":"initialize"`
			if tc.params != "" {
				line += `,"params":` + tc.params
			}
			line += "}"
			r := checkOne(t, serveOne(t, srv, "", line), want{id: "1", code: tc.wantCode})
			if tc.wantCode != 0 {
				return
			}
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
				Capabilities    struct {
					Tools *struct {
						ListChanged *bool `json:"listChanged"`
					} `json:"tools"`
				} `json:"capabilities"`
				ServerInfo struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"serverInfo"`
				Instructions string `json:"instructions"`
			}
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != tc.wantVersion {
				t.Errorf("protocolVersion = %q, want %q", res.ProtocolVersion, tc.wantVersion)
			}
			if res.Capabilities.Tools == nil || res.Capabilities.Tools.ListChanged == nil || *res.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities = %s, want tools.listChanged false", r.Result)
			}
			if res.ServerInfo.Name != "awbridge" || res.ServerInfo.Version != "1.2.3" || res.Instructions != "be brief" {
				t.Errorf("serverInfo/instructions = %s", r.Result)
			}
		})
	}
}

// The version a session negotiated reaches the backend.
func TestVersionReachesBackend(t *testing.T) {
	for _, v := range append(SupportedVersions(), "") {
		b := &stageBackend{}
		serveOne(t, NewServer(b, direct(Options{})), v, toolCall("1", "ok", `{}`))
		reqs := b.requests()
		if len(reqs) != 1 || reqs[0].Direct || reqs[0].Name != "ok" || string(reqs[0].Args) != `{}` {
			t.Errorf("version %q: backend saw %+v", v, reqs)
		}
	}
}

func TestToolsCallMapping(t *testing.T) {
	type toolResult struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           *bool           `json:"isError"`
	}
	tests := []struct {
		name, version, args string
		wantCode            int
		wantIsError         bool
		wantDataCode        string
	}{
		{"ok", Version20250618, `{}`, 0, false, ""},
		{"ok without initialize", "", `null`, 0, false, ""},
		{"resolve", Version20251125, `{"mode":"resolve"}`, CodeInvalidParams, false, toolbus.CodeUnknownTool},
		{"validate 2024-11-05", Version20241105, `{"mode":"validate"}`, CodeInvalidParams, false, toolbus.CodeSchemaInvalid},
		{"validate 2025-03-26", Version20250326, `{"mode":"validate"}`, CodeInvalidParams, false, toolbus.CodeSchemaInvalid},
		{"validate 2025-06-18", Version20250618, `{"mode":"validate"}`, CodeInvalidParams, false, toolbus.CodeSchemaInvalid},
		{"validate without initialize", "", `{"mode":"validate"}`, CodeInvalidParams, false, toolbus.CodeSchemaInvalid},
		{"validate 2025-11-25", Version20251125, `{"mode":"validate"}`, 0, true, ""},
		{"execute 2024-11-05", Version20241105, `{"mode":"execute","code":"AwUnavailable"}`, 0, true, ""},
		{"execute 2025-11-25", Version20251125, `{"mode":"execute","code":"Timeout"}`, 0, true, ""},
		{"backend panic", Version20251125, `{"mode":"panic"}`, 0, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &stageBackend{}
			r := checkOne(t, serveOne(t, NewServer(b, direct(Options{})), tc.version, toolCall(`"c1"`, "ok", tc.args)), want{id: `"c1"`, code: tc.wantCode})
			if tc.wantCode != 0 {
				var te toolbus.ToolError
				if err := json.Unmarshal(r.Error.Data, &te); err != nil || te.Code != tc.wantDataCode {
					t.Fatalf("error.data = %s (%v), want a ToolError %s", r.Error.Data, err, tc.wantDataCode)
				}
				if tc.wantDataCode == toolbus.CodeUnknownTool && (len(te.DidYouMean) != 1 || te.DidYouMean[0] != "ok") {
					t.Errorf("did_you_mean lost: %s", r.Error.Data)
				}
				return
			}
			var res toolResult
			d := json.NewDecoder(strings.NewReader(string(r.Result)))
			d.DisallowUnknownFields()
			if err := d.Decode(&res); err != nil {
				t.Fatalf("result %s: %v", r.Result, err)
			}
			if res.IsError == nil || *res.IsError != tc.wantIsError {
				t.Errorf("isError = %v, want %v", res.IsError, tc.wantIsError)
			}
			if len(res.Content) != 1 || res.Content[0].Type != "text" {
				t.Fatalf("content = %+v", res.Content)
			}
			// The text is the envelope, and structuredContent the same JSON.
			if !json.Valid([]byte(res.Content[0].Text)) {
				t.Fatalf("text content is not JSON: %q", res.Content[0].Text)
			}
			if string(res.StructuredContent) != res.Content[0].Text {
				t.Errorf("structuredContent %s != text %s", res.StructuredContent, res.Content[0].Text)
			}
			if tc.name == "ok" && res.Content[0].Text != okEnvelope {
				t.Errorf("text = %q, want the envelope %q", res.Content[0].Text, okEnvelope)
			}
			var env struct {
				Success bool `json:"success"`
			}
			_ = json.Unmarshal(res.StructuredContent, &env)
			if env.Success == tc.wantIsError {
				t.Errorf("envelope success = %v with isError %v", env.Success, tc.wantIsError)
			}
		})
	}
}

func TestDirectMethodMapping(t *testing.T) {
	tests := []struct {
		name     string
		params   string
		wantCode int
		wantData string
	}{
		{"ok", `{"reason":"manual"}`, 0, ""},
		{"validate", `{"mode":"validate"}`, CodeInvalidParams, toolbus.CodeSchemaInvalid},
		{"resolve", `{"mode":"resolve"}`, CodeMethodNotFound, toolbus.CodeUnknownTool},
		{"aw unavailable", `{"mode":"execute","code":"AwUnavailable"}`, -32001, toolbus.CodeAwUnavailable},
		{"sidecar unavailable", `{"mode":"execute","code":"SidecarUnavailable"}`, -32002, toolbus.CodeSidecarUnavailable},
		{"timeout", `{"mode":"execute","code":"Timeout"}`, -32003, toolbus.CodeTimeout},
		{"circuit open", `{"mode":"execute","code":"CircuitOpen"}`, -32004, toolbus.CodeCircuitOpen},
		{"rate limited", `{"mode":"execute","code":"RateLimited"}`, -32005, toolbus.CodeRateLimited},
		{"concurrency limited", `{"mode":"execute","code":"ConcurrencyLimited"}`, -32006, toolbus.CodeConcurrencyLimited},
		{"cancelled", `{"mode":"execute","code":"Cancelled"}`, -32007, toolbus.CodeCancelled},
		{"other", `{"mode":"execute","code":"Internal"}`, CodeServerError, toolbus.CodeInternal},
		{"panic", `{"mode":"panic"}`, CodeServerError, toolbus.CodeInternal},
	}
	for _, tc := range tests {
		for _, v := range []string{"", Version20251125} {
			t.Run(tc.name+"/"+v, func(t *testing.T) {
				b := &stageBackend{}
				srv := NewServer(b, direct(Options{}))
				line := `{"jsonrpc":"2.0","id":7,"method":"aw.get_state","params":` + tc.params + `}`
				r := checkOne(t, serveOne(t, srv, v, line), want{id: "7", code: tc.wantCode})
				reqs := b.requests()
				if len(reqs) != 1 || !reqs[0].Direct || reqs[0].Name != "aw.get_state" || string(reqs[0].Args) != tc.params {
					t.Fatalf("backend saw %+v", reqs)
				}
				if tc.wantCode == 0 {
					if string(r.Result) != `{"method":"aw.get_state"}` {
						t.Errorf("result = %s", r.Result)
					}
					return
				}
				var te toolbus.ToolError
				if err := json.Unmarshal(r.Error.Data, &te); err != nil || te.Code != tc.wantData {
					t.Fatalf("error.data = %s (%v), want ToolError %s", r.Error.Data, err, tc.wantData)
				}
				if tc.wantCode != CodeInvalidParams && tc.wantCode != CodeMethodNotFound && r.Error.Message != te.Message {
					t.Errorf("message %q != ToolError message %q", r.Error.Message, te.Message)
				}
			})
		}
	}
}

// _meta in a direct method's params is protocol metadata, not an
// argument: the Backend gets the other members, and _meta's traceparent
// as the call's trace, as tools/call does.
func TestDirectMethodMeta(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tests := []struct {
		name, params     string
		wantArgs, wantTP string
		wantCode         int
	}{
		{"traceparent", `{"_meta":{"traceparent":"` + tp + `"},"reason":"r"}`, `{"reason":"r"}`, tp, 0},
		{"_meta last", `{"reason":"r","_meta":{}}`, `{"reason":"r"}`, "", 0},
		{"only _meta", `{"_meta":{"` + MetaProtocolVersion + `":"` + ModernVersion + `"}}`, `{}`, "", 0},
		{"_meta null", `{"_meta":null}`, `{}`, "", 0},
		{"escaped name", `{"\u005fmeta":{"traceparent":"` + tp + `"}}`, `{}`, tp, 0},
		{"repeated _meta", `{"_meta":{},"reason":"r","_meta":{"traceparent":"` + tp + `"}}`, `{"reason":"r"}`, tp, 0},
		{"no _meta", `{"reason":"r", "meta":1}`, `{"reason":"r", "meta":1}`, "", 0},
		{"_meta not an object", `{"_meta":5}`, "", "", CodeInvalidParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &stageBackend{}
			line := `{"jsonrpc":"2.0","id":7,"method":"nowframe.build","params":` + tc.params + `}`
			r := checkOne(t, serveOne(t, NewServer(b, direct(Options{})), "", line), want{id: "7", code: tc.wantCode})
			reqs := b.requests()
			if tc.wantCode != 0 {
				if len(reqs) != 0 || !strings.Contains(r.Error.Message, "_meta must be an object") {
					t.Fatalf("backend saw %+v; reply %s", reqs, r.Raw)
				}
				return
			}
			if len(reqs) != 1 || !reqs[0].Direct || string(reqs[0].Args) != tc.wantArgs || reqs[0].TraceParent != tc.wantTP {
				t.Fatalf("backend saw %+v, want args %s and traceparent %q", reqs, tc.wantArgs, tc.wantTP)
			}
		})
	}
}

func TestDirectMethodsConfigurable(t *testing.T) {
	srv := NewServer(&stageBackend{}, Options{DirectMethods: []string{"custom.echo", "ping"}})
	checkOne(t, serveOne(t, srv, "", `{"jsonrpc":"2.0","id":1,"method":"custom.echo"}`), want{id: "1", result: `{"method":"custom.echo"}`})
	checkOne(t, serveOne(t, srv, "", `{"jsonrpc":"2.0","id":2,"method":"aw.get_state"}`), want{id: "2", code: CodeMethodNotFound})
	// MCP names keep their meaning.
	checkOne(t, serveOne(t, srv, "", ping("3")), want{id: "3", result: `{}`})

	none := NewServer(&stageBackend{}, Options{DirectMethods: []string{}})
	checkOne(t, serveOne(t, none, "", `{"jsonrpc":"2.0","id":4,"method":"system.health"}`), want{id: "4", code: CodeMethodNotFound})
}

func TestBatches(t *testing.T) {
	type elem struct {
		id   string
		code int
	}
	tests := []struct {
		name  string
		line  string
		none  bool
		elems []elem // in any order
	}{
		{"two pings", `[` + ping("1") + `,` + ping(`"two"`) + `]`, false, []elem{{"1", 0}, {`"two"`, 0}}},
		{"calls and direct", `[` + toolCall("1", "ok", `{}`) + `,{"jsonrpc":"2.0","id":2,"method":"system.health"},` + toolCall("3", "ok", `{"mode":"execute"}`) + `]`, false, []elem{{"1", 0}, {"2", 0}, {"3", 0}}},
		{"only notifications", `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"nope"}]`, true, nil},
		{"notification and request", `[{"jsonrpc":"2.0","method":"notifications/initialized"},` + ping("5") + `]`, false, []elem{{"5", 0}}},
		{"invalid elements", `[1,"x",` + ping("6") + `,[` + ping("7") + `]]`, false, []elem{{"null", CodeInvalidRequest}, {"null", CodeInvalidRequest}, {"6", 0}, {"null", CodeInvalidRequest}}},
		{"errors inside", `[{"jsonrpc":"2.0","id":8,"method":"nope"},{"jsonrpc":"1.0","id":9,"method":"ping"},` + toolCall("10", "ok", `[]`) + `]`, false, []elem{{"8", CodeMethodNotFound}, {"9", CodeInvalidRequest}, {"10", CodeInvalidParams}}},
		{"responses inside", `[{"jsonrpc":"2.0","id":1,"result":{}},` + ping("2") + `,{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}]`, false, []elem{{"2", 0}}},
		{"only responses", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, true, nil},
		{"initialize inside", `[` + initLine("11", Version20250326) + `]`, false, []elem{{"11", CodeInvalidRequest}}},
		{"tool validate in 2025-03-26 is an error", `[` + toolCall("12", "ok", `{"mode":"validate"}`) + `]`, false, []elem{{"12", CodeInvalidParams}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := serveOne(t, NewServer(&stageBackend{}, direct(Options{})), Version20250326, tc.line)
			if tc.none {
				if len(got) != 0 {
					t.Fatalf("got %q, want no reply", got[0].Raw)
				}
				return
			}
			if len(got) != 1 || got[0].Batch == nil {
				t.Fatalf("got %+v, want one batch reply", got)
			}
			remaining := append([]elem(nil), tc.elems...)
			for _, r := range got[0].Batch {
				code := 0
				if r.Error != nil {
					code = r.Error.Code
				}
				found := false
				for i, e := range remaining {
					if e.id == string(r.ID) && e.code == code {
						remaining = append(remaining[:i], remaining[i+1:]...)
						found = true
						break
					}
				}
				if !found {
					t.Errorf("unexpected element %s", r.Raw)
				}
			}
			if len(remaining) != 0 {
				t.Errorf("missing elements %+v in %s", remaining, got[0].Raw)
			}
		})
	}
	// The empty batch is a single error, not an array.
	checkOne(t, serveOne(t, NewServer(&stageBackend{}, direct(Options{})), Version20250326, `[]`), want{id: "null", code: CodeInvalidRequest})
	checkOne(t, serveOne(t, NewServer(&stageBackend{}, direct(Options{})), Version20250326, ` [ ] `), want{id: "null", code: CodeInvalidRequest})
}

func TestIDFromPrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":42,"method":"x","params":{"a":"bbbb`, `42`},
		{`{"id":"s\"1","method":`, `"s\"1"`},
		{`{"method":"x","params":{"a":[1,2,{"id":3}]},"id":7,`, `7`},
		{`{"jsonrpc":"2.0","method":"x","params":{"a":"bbbb`, ``},
		{`{"id":12`, ``}, // it might be 123...
		{`{"id":{"a":1},"method":"x"`, ``},
		{`{"id":null,"x":1`, ``},
		{`{"id":tru,"x":1`, ``},
		{`{"id":1-2,"x":1`, ``},
		{`[{"id":1},`, ``},
		{`  {  "id" : -3.5e1 , "x"`, `-3.5e1`},
		{``, ``},
	}
	for _, tc := range tests {
		if got := string(idFromPrefix([]byte(tc.in))); got != tc.want {
			t.Errorf("idFromPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A 2 MiB line gets one error with its id, and the next line works.
func TestTooLargeRequest(t *testing.T) {
	srv := NewServer(&stageBackend{}, direct(Options{}))
	g := &genReader{
		head: []byte(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"ok","arguments":{"x":"`),
		n:    2 << 20,
		fill: 'z',
		tail: []byte("\"}}}\n" + ping("2") + "\n" + `{"jsonrpc":"2.0","method":"nowframe.build","params":{"x":"` + strings.Repeat("q", 2<<20) + `"}}` + "\n" + ping("3")),
	}
	var out strings.Builder
	if err := srv.Serve(t.Context(), g, &out); err != nil {
		t.Fatal(err)
	}
	got := parseOutput(t, out.String())
	if len(got) != 4 {
		t.Fatalf("got %d replies, want 4: %q", len(got), out.String())
	}
	checkOne(t, got[:1], want{id: `"big"`, code: CodeInvalidRequest})
	if got[0].Reply.Error.Message != "request too large" {
		t.Errorf("message = %q", got[0].Reply.Error.Message)
	}
	checkOne(t, got[1:2], want{id: "2", result: "{}"})
	// A too-long notification cannot be told from a request: one error, id null.
	checkOne(t, got[2:3], want{id: "null", code: CodeInvalidRequest})
	checkOne(t, got[3:4], want{id: "3", result: "{}"})
}

func TestAppendJSONString(t *testing.T) {
	tests := []string{
		"", "plain", `q"uote`, `back\slash`, "nl\nr\rt\tb\bf\f", "\x00\x01\x1f\x7f",
		"é ü 漢字 🙂", "\u2028\u2029", "bad \xff utf8 \xe2\x82", "<html>&",
	}
	for _, s := range tests {
		got := jsonw.AppendString(nil, []byte(s))
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s) // encoding/json: same semantics, HTML-escaped
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q round-trips to %q, encoding/json gives %q", s, back, wantBack)
		}
		if strings.ContainsAny(string(got), "\n\r") {
			t.Errorf("%q -> %q holds a raw newline", s, got)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add([]byte("a\"b\\c\n\x00é\xff\u2028"))
	f.Fuzz(func(t *testing.T, s []byte) {
		got := jsonw.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		want, _ := json.Marshal(string(s))
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q round-trips to %q, want %q", s, back, wantBack)
		}
	})
}

// A pretty-printed backend body cannot break the framing.
func TestMultilineBodyStaysOnOneLine(t *testing.T) {
	b := backendFunc(func(req toolbus.Request) toolbus.Response {
		return toolbus.Response{Body: json.RawMessage("{\n  \"a\": \"x\",\r\n  \"b\": [1,\n 2]\n}")}
	})
	got := serveOne(t, NewServer(b, direct(Options{})), "", `{"jsonrpc":"2.0","id":1,"method":"system.health"}`+"\n"+toolCall("2", "t", "{}"))
	if len(got) != 2 {
		t.Fatalf("got %d lines, want 2", len(got))
	}
}

type backendFunc func(req toolbus.Request) toolbus.Response

func (f backendFunc) Call(_ context.Context, req toolbus.Request) toolbus.Response { return f(req) }
func (f backendFunc) ToolsList(string) json.RawMessage                             { return nil }

func TestEmptyToolsList(t *testing.T) {
	b := backendFunc(func(toolbus.Request) toolbus.Response { return toolbus.Response{} })
	checkOne(t, serveOne(t, NewServer(b, direct(Options{})), "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), want{id: "1", result: `{"tools":[]}`})
}

// Logs name methods and tools, never params, arguments or ids' contents.
func TestLogsNeverHoldParams(t *testing.T) {
	var logs syncBuffer
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)
	srv := NewServer(&stageBackend{}, direct(Options{Logger: log}))
	const secret = "s3cret-window-title"
	input := strings.Join([]string{
		toolCall("1", "ok", `{"title":"`+secret+`"}`),
		`{"jsonrpc":"2.0","id":2,"method":"nowframe.build","params":{"reason":"` + secret + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"nowframe.build","params":["` + secret + `"]}`,
		`{"jsonrpc":"2.0","id":"` + secret + `","method":"nope"}`,
		`{"broken":"` + secret,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"` + secret + `"}}`,
	}, "\n")
	runLines(t, srv, input)
	out := logs.String()
	if strings.Contains(out, secret) {
		t.Fatalf("a log line holds request data:\n%s", out)
	}
	for _, want := range []string{`"method":"tools/call"`, `"tool":"ok"`, `"method":"nowframe.build"`, `"level":"warn"`, `"code":-32700`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
}

// A response from the client, even under the id of a call in flight, gets
// no reply and leaves the call alone: it is answered once, with its result.
func TestClientResponseBesideCall(t *testing.T) {
	g := newGate()
	c := startConn(t, NewServer(g, direct(Options{})))
	c.send(toolCall("5", "slow", `{}`))
	g.waitStarted(t, 1)
	c.send(`{"jsonrpc":"2.0","id":5,"result":{}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"x"}}`, ping("6"))
	if r := c.recv(); string(r.ID) != "6" || r.Error != nil {
		t.Fatalf("got %s, want the ping's reply first (the responses get none)", r.Raw)
	}
	g.release <- struct{}{}
	if r := c.recv(); string(r.ID) != "5" || r.Error != nil || !strings.Contains(string(r.Result), `"released"`) {
		t.Fatalf("got %s, want the call's result", r.Raw)
	}
	if rest, err := c.closeAndWait(); err != nil || len(rest) != 0 {
		t.Fatalf("after the call: %q (%v), want nothing", rest, err)
	}
}
