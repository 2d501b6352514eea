package nowframe

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/config"
)

// maxRulesAlloc bounds what one ComputeNow may allocate whatever privacy
// rules the config holds (each rule list at most 16 KiB of text, as the
// config accepts): one rule may multiply a bounded title by its
// replacement, but rules must not compound.
const maxRulesAlloc = 256 << 20

// FuzzPrivacyRules runs the person's own title and URL rules (as config
// parses them) over untrusted titles and URLs: ComputeNow never panics,
// the rewritten title and URL are as clean and bounded as without rules,
// and the rules' amplification stays bounded (they are applied to a
// bounded title, and the result is bounded again).
func FuzzPrivacyRules(f *testing.F) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct{ titleRules, urlRules, title, url string }{
		{"Acme (Corp|Inc) => [client]", "^https://intranet\\.example\\.com/.* => https://intranet.example.com/", "Meeting with Acme Inc", "https://intranet.example.com/wiki/x?q=1"},
		{"(?i)secret-\\d+ => [redacted];;\\s+ => \u202e", "example => \x00evil", "SECRET-42 \t plan", "https://example.com/a"},
		{" => \x1b[31m", " => ?q=1#f", "t", "https://example.com/"},
		{"(?s).* => $0$0$0$0", "(?s).* => $0$0$0$0", long, "https://example.com/" + long},
		{"(?P<x>a) => ${x}\u200b${x}", ". => é", "banana", "http://h/"},
		{" => " + strings.Repeat("x", 200), "", long, ""},
		// The widest single rules the config accepts (16 KiB of text):
		// one rule's output is large, but nothing compounds.
		{" => " + strings.Repeat("x", 16000), " => " + strings.Repeat("y", 16000), strings.Repeat("😀", 300), "https://example.com/" + strings.Repeat("a", 490)},
		{"(?s). => " + strings.Repeat("$0", 8000), "(?s). => " + strings.Repeat("$0", 8000), strings.Repeat("😀", 300), "https://example.com/" + strings.Repeat("a", 490)},
	} {
		f.Add(c.titleRules, c.urlRules, c.title, c.url)
	}
	f.Fuzz(func(t *testing.T, titleRules, urlRules, title, url string) {
		if len(titleRules) > 16<<10 || len(urlRules) > 16<<10 {
			return // the config refuses longer rule lists
		}
		tr, err := config.ParseRules(titleRules)
		if err != nil {
			return
		}
		ur, err := config.ParseRules(urlRules)
		if err != nil {
			return
		}
		ts := t0.Add(-time.Second)
		in := Input{Now: t0, Selection: fullSel,
			Window:  []aw.Event{event(ts, 5, map[string]any{"app": "Google-chrome", "title": title})},
			AFK:     []aw.Event{event(ts, 5, map[string]any{"status": "not-afk"})},
			Web:     map[string][]aw.Event{"aw-watcher-web-chrome_h": {event(ts, 5, map[string]any{"url": url, "title": title, "incognito": false})}},
			Privacy: Privacy{TitleRules: tr, URLRules: ur},
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := ComputeNow(in)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxRulesAlloc {
			t.Fatalf("ComputeNow allocated %d MiB for a %d-byte title under %d title rules and %d URL rules: the rules compound before the result is bounded",
				alloc>>20, len(title), len(tr), len(ur))
		}
		js, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, n, js, nil)
		checkTitle(t, n.Window.Title, 0)
		checkTitle(t, n.Browser.Title, 0)
		checkURL(t, n.Browser.URL)
	})
}
