package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// htmlEscape finds an HTML escape of encoding/json (\u003c, \u003e,
// \u0026) that is one: after an even number of backslashes (an escaped
// backslash before "u003c" is text).
var htmlEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u00(3[cCeE]|26)`)

// TestAnswersAreNotHTMLEscaped: a category the person named "R&D > <Dev>"
// reaches the model as written, in the text content and in
// structuredContent, and so does an argument quoted back in an error: no
// line the binary writes, for any tool, in either mode, holds \u003c,
// \u003e or \u0026.
func TestAnswersAreNotHTMLEscaped(t *testing.T) {
	now := time.Now()
	sim := newActSim(t, actDays(now, time.UTC, 1, now.Add(-time.Minute), true), map[string]any{
		"classes": actClassesSetting([]actClass{
			{Name: []string{"R&D"}, Rule: map[string]any{"type": "regex", "regex": "Code|Gnome-terminal"}},
			{Name: []string{"R&D", "<Dev>"}, Rule: map[string]any{"type": "regex", "regex": "Code"}},
		}),
	})
	b := actSession(t, actEnv(t, sim.URL(), "AWBRIDGE_TIMEZONE=UTC"))
	const category = `R&D > <Dev>`
	seen := false
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"activity_summary", map[string]any{"period": "last_24h", "group_by": "category"}},
		{"activity_summary", map[string]any{"period": "last_24h", "group_by": "category", "response_mode": "compact"}},
		{"activity_summary", map[string]any{"period": "last_24h", "group_by": "title", "limit": 50}},
		{"activity_summary", map[string]any{"period": "last_24h", "output": map[string]any{"path": "categories"}}},
		{"activity_summary", map[string]any{"period": "<a&b>"}},
		{"activity_timeline", map[string]any{"period": "last_24h", "limit": 100}},
		{"nowframe_history", map[string]any{"minutes": 600}},
		{"nowframe_build", nil},
		{"aw_get_state", nil},
		{"system_health", nil},
		{"help", map[string]any{"tool": "activity_summary"}},
		{"help", map[string]any{"tool": "<no&tool>"}},
	} {
		args := c.args
		if args == nil {
			args = map[string]any{}
		}
		line := b.request("tools/call", map[string]any{"name": c.name, "arguments": args})
		// The text content is what the model reads: decoded once, it
		// must not hold one either.
		var r struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || len(r.Result.Content) != 1 {
			t.Fatalf("%s: %v: %s", c.name, err, clipLine(line, 600))
		}
		for what, s := range map[string]string{"line": line, "text content": r.Result.Content[0].Text} {
			if m := htmlEscape.FindString(s); m != "" {
				t.Errorf("%s %v: its %s holds an HTML escape (%q): %s", c.name, args, what, m, clipLine(s, 600))
			}
		}
		if c.name == "activity_summary" && strings.Count(line, category) >= 2 {
			seen = true // text and structuredContent
		}
		if strings.Contains(line, "<a&b>") != (args["period"] == "<a&b>") {
			t.Errorf("%s %v: the bad period is not quoted back as written: %s", c.name, args, clipLine(line, 600))
		}
	}
	if !seen {
		t.Errorf("no summary named the category %q as written", category)
	}
}
