package mcp

import "testing"

// TestResourceTemplatesList: wherever resources are advertised,
// resources/templates/list is answered (with no templates: every resource
// has a fixed URI), in every protocol version; clients list templates as
// soon as they see the capability, and a -32601 broke them. Without
// resources it stays an unknown method.
func TestResourceTemplatesList(t *testing.T) {
	const line = `{"jsonrpc":"2.0","id":5,"method":"resources/templates/list","params":{}}`
	for _, v := range []string{Version20241105, Version20250326, Version20250618, Version20251125} {
		t.Run(v, func(t *testing.T) {
			withRes := NewServer(&resourceStage{stageBackend: &stageBackend{}}, Options{})
			checkOne(t, serveOne(t, withRes, v, line), want{id: "5", result: `{"resourceTemplates":[]}`})
			without := NewServer(&stageBackend{}, Options{})
			checkOne(t, serveOne(t, without, v, line), want{id: "5", code: CodeMethodNotFound})
		})
	}
}
