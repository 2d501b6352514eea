package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/engine"
)

// checkWireReply fails unless raw is one well-formed JSON-RPC 2.0 reply.
func checkWireReply(t *testing.T, raw []byte) (id string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("reply %q is not a JSON object: %v", raw, err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("reply %s: jsonrpc", raw)
	}
	idRaw, ok := m["id"]
	if !ok || len(idRaw) == 0 || !(idRaw[0] == '"' || idRaw[0] == '-' || (idRaw[0] >= '0' && idRaw[0] <= '9') || string(idRaw) == "null") {
		t.Fatalf("reply %s: bad id", raw)
	}
	_, hasResult := m["result"]
	errRaw, hasError := m["error"]
	if hasResult == hasError || len(m) != 3 {
		t.Fatalf("reply %s: want jsonrpc, id and exactly one of result/error", raw)
	}
	if hasError {
		var e struct {
			Code    *int            `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		d := json.NewDecoder(bytes.NewReader(errRaw))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("reply %s: bad error object (%v)", raw, err)
		}
	}
	return string(idRaw)
}

// FuzzDispatch feeds one arbitrary line (after an optional initialize) to a
// session: it never panics, every reply is a valid JSON-RPC reply, a
// notification never gets one, and each line gets at most one reply line.
func FuzzDispatch(f *testing.F) {
	seeds := []string{
		ping("1"), ping(`"x\"y"`), ping(`1.0e-3`), `{"jsonrpc":"2.0","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a"}}`,
		toolCall("2", "ok", `{}`), toolCall("3", "ok", `{"mode":"validate"}`), toolCall("4", "x", `{"mode":"resolve"}`),
		toolCall("5", "ok", `{"mode":"execute","code":"Timeout"}`), toolCall("6", "ok", `{"mode":"panic"}`),
		`{"jsonrpc":"2.0","id":7,"method":"aw.get_state","params":{"mode":"execute","code":"AwUnavailable"}}`,
		`{"jsonrpc":"2.0","method":"nowframe.build","params":{"mode":"panic"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		initLine("8", "2025-03-26"), `[` + ping("9") + `,{"jsonrpc":"2.0","method":"x"},1]`, `[]`, `[[]]`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"id":2}`, `{"\u0069d":1}`,
		`{broken`, `"s"`, `null`, ` `, "\xef\xbb\xbf{}", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, pre uint8, line []byte) {
		line = bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, line)
		versions := append([]string{""}, SupportedVersions()...)
		v := versions[int(pre)%len(versions)]
		const limit = 4096
		srv := NewServer(&stageBackend{}, Options{MaxLineBytes: limit})
		input := string(line) + "\n"
		if v != "" {
			input = initLine(initID, v) + "\n" + input
		}
		var out bytes.Buffer
		if err := srv.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		var replies [][]byte
		for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			if l[0] == '[' {
				if v != Version20250326 {
					t.Fatalf("batch reply %q in a %q session", l, v)
				}
				var els []json.RawMessage
				if err := json.Unmarshal(l, &els); err != nil || len(els) == 0 {
					t.Fatalf("batch reply %q: %v", l, err)
				}
				for _, el := range els {
					checkWireReply(t, el)
				}
				replies = append(replies, l)
				continue
			}
			if checkWireReply(t, l) == initID {
				continue
			}
			replies = append(replies, l)
		}
		if len(replies) > 1 {
			t.Fatalf("one line got %d reply lines: %q", len(replies), replies)
		}
		trimmed := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		switch {
		case len(line) > limit:
			if len(replies) != 1 || !bytes.Contains(replies[0], []byte(`-32600`)) {
				t.Fatalf("too-long line got %q, want one -32600", replies)
			}
		case isBlank(line):
			if len(replies) != 0 {
				t.Fatalf("blank line got %q", replies)
			}
		case !json.Valid(trimmed):
			if len(replies) != 1 || !bytes.Contains(replies[0], []byte(`"code":-32700`)) {
				t.Fatalf("invalid JSON got %q, want one -32700", replies)
			}
		case trimmed[0] == '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(trimmed, &m); err != nil {
				t.Fatal(err)
			}
			if _, hasID := m["id"]; !hasID && len(replies) != 0 {
				t.Fatalf("notification %q got a reply %q", line, replies[0])
			}
			if _, hasID := m["id"]; hasID && len(replies) != 1 {
				t.Fatalf("request %q got %d replies", line, len(replies))
			}
		}
	})
}

// benchConn runs Serve over pipes and returns a write end and a line reader
// for the replies.
func benchServe(b *testing.B, backend Backend, line string) {
	srv := NewServer(backend, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		// Write in chunks of many lines, as a busy client would.
		const per = 64
		chunk := []byte(strings.Repeat(line+"\n", per))
		for n := b.N; n > 0; n -= per {
			k := min(n, per)
			if _, err := inW.Write(chunk[:k*(len(line)+1)]); err != nil {
				return
			}
		}
		inW.Close()
	}()
	b.ReportAllocs()
	b.ResetTimer()
	buf := make([]byte, 64<<10)
	lines := 0
	for lines < b.N {
		n, err := outR.Read(buf)
		lines += bytes.Count(buf[:n], []byte("\n"))
		if err != nil {
			b.Fatalf("read: %v after %d lines", err, lines)
		}
	}
	b.StopTimer()
	_, _ = io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPing(b *testing.B) {
	benchServe(b, &stageBackend{}, ping("12345"))
}

// trivialBackend returns a fixed envelope of realistic size.
type trivialBackend struct{ body json.RawMessage }

func (t trivialBackend) Call(context.Context, engine.Request) engine.Outcome {
	return engine.Outcome{Body: t.body}
}
func (trivialBackend) ToolsList() json.RawMessage { return json.RawMessage(fakeToolsList) }

func BenchmarkToolsCallFake(b *testing.B) {
	body := json.RawMessage(`{"success":true,"tool":"aw_get_state","action":null,"result":{"app":"firefox","title":"Inbox \"work\" – Mail","url":"https://example.org/mail?x=1&y=2","afk":false,"age_ms":812},"duration_ms":1.2,"trace":{"trace_id":"0190c3e2-7a4b-7c1d-9e2f-3a4b5c6d7e8f","span_id":"s1","parent_span_id":null},"artifact_uri_context":null,"artifact_uri_json":null,"status":"Ok","error":null,"attempts":1,"policy":null,"next_actions":[]}`)
	benchServe(b, trivialBackend{body}, toolCall("12345", "aw_get_state", `{"max_age_ms":1000}`))
}
