package toolbus

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/toolbus/redact"
)

// TestHiddenCharactersHideNoSecret: a zero-width space glued before a key
// (cleaning would join it to the word before) or a bidi mark inside it
// hides nothing, in a state value, a tool's result and an error message
// the tool quotes; not in the envelope, the artifacts, the state file or
// the logs.
func TestHiddenCharactersHideNoSecret(t *testing.T) {
	const key = "sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0"
	body := key[7:]
	glued := "key\u200b" + key
	split := "key " + key[:20] + "\u200e" + key[20:]
	failing := &Tool{Name: "failing", ReadOnly: true, Run: func(context.Context, *Call) (Result, error) {
		return Result{}, &ToolError{Kind: ExecutionError, Code: CodeAwUnavailable, Message: "upstream said: " + glued,
			Hint: "retry with " + split}
	}}
	p := newPipeline(t, nil, failing)
	for _, args := range []struct {
		tool, args string
		shown      bool // the envelope shows the (masked) text
	}{
		{"state", `{"action":"set","key":"a","value":{"title":"` + glued + `","note":["` + split + `"]},"scope":"persistent"}`, false},
		{"state", `{"action":"get","key":"a"}`, true},
		{"failing", `{"trace_id":"run","span_id":"fail"}`, true},
	} {
		r, _ := p.call(t, args.tool, args.args)
		if c := redact.Clean(string(r.Body)); strings.Contains(c, body) || strings.Contains(c, body[20:]) {
			t.Errorf("%s: the key survived in the envelope: %s", args.tool, c)
		}
		if args.shown && bytes.Count(r.Body, []byte("sk-…[REDACTED]")) != 2 {
			t.Errorf("%s: nothing masked: %s", args.tool, r.Body)
		}
	}
	for where, b := range map[string][]byte{"artifacts": everything(t, p.root), "state": everything(t, p.stateDir), "logs": p.logs.Bytes()} {
		if c := redact.Clean(string(b)); strings.Contains(c, body) || strings.Contains(c, body[20:]) {
			t.Errorf("the key survived in %s", where)
		}
	}
}
