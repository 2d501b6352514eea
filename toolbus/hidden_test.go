package toolbus

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/toolbus/redact"
)

// TestHiddenCharactersHideNoSecret: an invisible character glued before a
// key (cleaning would join it to the word before) or inside it hides
// nothing, in a state value, a tool's result and an error message the
// tool quotes; not in the envelope, the artifacts, the state file or the
// logs. Invisible includes the default-ignorables beyond control and
// format characters (U+034F, variation selectors, Hangul fillers).
func TestHiddenCharactersHideNoSecret(t *testing.T) {
	const key = "sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0"
	body := key[7:]
	for _, h := range []struct{ name, glue, inside string }{
		{"zero-width space, LRM", "\u200b", "\u200e"},
		{"grapheme joiner, emoji selector", "\u034f", "\ufe0f"},
		{"Hangul filler, ideographic selector", "\u3164", "\U000E0100"},
		{"choseong filler, Mongolian selector", "\u115f", "\u180b"},
	} {
		t.Run(h.name, func(t *testing.T) {
			glued := "key" + h.glue + key
			split := "key " + key[:20] + h.inside + key[20:]
			failing := &Tool{Name: "failing", ReadOnly: true, Run: func(context.Context, *Call) (Result, error) {
				return Result{}, &ToolError{Kind: ExecutionError, Code: CodeAwUnavailable, Message: "upstream said: " + glued,
					Hint: "retry with " + split}
			}}
			p := newPipeline(t, nil, failing)
			value, _ := json.Marshal(map[string]any{"title": glued, "note": []string{split}})
			for _, args := range []struct {
				tool, args string
				shown      bool // the envelope shows the (masked) text
			}{
				{"state", `{"action":"set","key":"a","value":` + string(value) + `,"scope":"persistent"}`, false},
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
		})
	}
}
