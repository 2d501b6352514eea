package mcp

import (
	"bytes"
	"testing"
)

// TestDecodeMessageOwnsItsValues: the line reader reuses its buffer for
// the next line, so what a decoded message holds (its id, its params and
// the tool's arguments, used by calls still running) must not change when
// the buffer is overwritten.
func TestDecodeMessageOwnsItsValues(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"ok","arguments":{"x":1}}}`)
	m, err := decodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeParams(m.params)
	if err != nil {
		t.Fatal(err)
	}
	_, args, msg := p.toolCall()
	if msg != "" {
		t.Fatal(msg)
	}
	copy(line, bytes.Repeat([]byte("#"), len(line)))
	if string(m.id) != `"a-1"` || string(args) != `{"x":1}` || string(m.params) != `{"name":"ok","arguments":{"x":1}}` {
		t.Fatalf("after the buffer was reused: id %s, params %s, arguments %s", m.id, m.params, args)
	}
}

// TestDecodeAllocations: decoding a message, its params and its _meta
// costs a copy of the message and the method's string, not an allocation
// per token (the encoding/json Decoder took 40 to 90 per message).
func TestDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, tc := range []struct {
		name string
		line string
		max  float64
	}{
		{"ping", ping("12345"), 2},
		{"tools/call", toolCall("12345", "aw_get_state", `{"max_age_ms":1000}`), 2},
		{"modern tools/call with traceparent", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ok","arguments":{},` +
			`"_meta":{"` + MetaProtocolVersion + `":"2026-07-28","` + MetaClientCapabilities + `":{},` +
			`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(tc.line)
			allocs := testing.AllocsPerRun(50, func() {
				m, err := decodeMessage(line)
				if err != nil || m.dup || !m.methodOK {
					t.Fatalf("decodeMessage: %+v, %v", m, err)
				}
				if m.params == nil {
					return
				}
				p, err := decodeParams(m.params)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := decodeMeta(p.meta); err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tc.max {
				t.Errorf("decoding %s allocates %v times, want at most %v", tc.name, allocs, tc.max)
			}
		})
	}
}
