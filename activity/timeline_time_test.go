package activity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// timelineTime is how a timeline's time splits: in app blocks, in AFK
// gaps and in no-data gaps.
type timelineTime struct{ app, afk, noData time.Duration }

func timeOf(blocks []Block) timelineTime {
	var tt timelineTime
	for _, b := range blocks {
		switch d := b.End.Sub(b.Start); b.Gap {
		case "":
			tt.app += d
		case GapAFK:
			tt.afk += d
		default:
			tt.noData += d
		}
	}
	return tt
}

// wholeTimeline pages through a period's timeline with the largest pages.
func wholeTimeline(t *testing.T, s *Service, period string, minBlock int) (blocks []Block, p Period) {
	t.Helper()
	q := TimelineQuery{Period: period, MinBlockS: &minBlock, Limit: MaxTimelineLimit}
	for pages := 0; ; pages++ {
		page, err := s.Timeline(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 {
			p = page.Period
		}
		blocks = append(blocks, page.Blocks...)
		if page.NextCursor == "" || pages > 100 {
			return blocks, p
		}
		q = TimelineQuery{Cursor: page.NextCursor, Limit: MaxTimelineLimit}
	}
}

// TestTimelineKeepsTheTime: whatever min_block_s, a day's app blocks hold
// exactly its active time and its AFK gaps exactly its AFK time (what
// activity_summary says for the same day), so folding short stretches
// never turns activity into a gap, nor time away into activity. Before,
// at 300 s and more, most of the day's activity vanished into AFK gaps.
func TestTimelineKeepsTheTime(t *testing.T) {
	env := newSimEnv(t, envOptions{}) // the default week: a realistic day of quick switches
	clk := &clock{t: time.Date(2026, 3, 27, 16, 0, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	for _, period := range []string{"yesterday", "today"} {
		sum, err := s.Summary(context.Background(), SummaryQuery{Period: period})
		if err != nil {
			t.Fatal(err)
		}
		if sum.ActiveS < 3600 || sum.AFKS < 600 {
			t.Fatalf("%s: %v s active, %v s AFK: the day exercises nothing", period, sum.ActiveS, sum.AFKS)
		}
		prev := -1
		for _, minBlock := range []int{0, 60, 300, 600, 900, 3600} {
			t.Run(fmt.Sprintf("%s/min_block_s=%d", period, minBlock), func(t *testing.T) {
				blocks, p := wholeTimeline(t, s, period, minBlock)
				tt := timeOf(blocks)
				// Block ends are microseconds, the summary's seconds are
				// rounded to 0.1 s.
				if d := tt.app.Seconds() - sum.ActiveS; d > 0.06 || d < -0.06 {
					t.Errorf("app blocks hold %.1f s, the day's active time is %.1f s", tt.app.Seconds(), sum.ActiveS)
				}
				if d := tt.afk.Seconds() - sum.AFKS; d > 0.06 || d < -0.06 {
					t.Errorf("AFK gaps hold %.1f s, the day's AFK time is %.1f s", tt.afk.Seconds(), sum.AFKS)
				}
				if all := tt.app + tt.afk + tt.noData; all != p.End.Sub(p.Start) {
					t.Errorf("the blocks cover %v of a period of %v", all, p.End.Sub(p.Start))
				}
				apps := 0
				for i, b := range blocks {
					if b.Gap != "" {
						continue
					}
					apps++
					// A short app block stands only between gaps (or the
					// period's ends): next to activity it is folded.
					if b.End.Sub(b.Start) < time.Duration(minBlock)*time.Second &&
						(i > 0 && blocks[i-1].Gap == "" || i+1 < len(blocks) && blocks[i+1].Gap == "") {
						t.Errorf("block %d (%s, %.1f s) is shorter than min_block_s next to another app block", i, b.App, b.DurationS)
					}
				}
				if apps == 0 {
					t.Errorf("%d blocks and none of them activity", len(blocks))
				}
				if prev >= 0 && len(blocks) > prev {
					t.Errorf("%d blocks, more than the %d of a smaller min_block_s", len(blocks), prev)
				}
				prev = len(blocks)
			})
		}
	}
}

// FuzzFold folds any sequence of app stretches and gaps with any
// min_block_s: the time of each app, AFK and no-data kind is kept (a
// block holds time of one kind only), the blocks stay contiguous, a short
// app block touches no other app block, and equal neighbours are joined.
func FuzzFold(f *testing.F) {
	f.Add([]byte{1, 10, 0, 200, 1, 5, 2, 30, 3, 80, 0, 1, 2, 2}, uint32(60))
	f.Add([]byte{0, 20, 3, 20, 0, 20, 1, 20, 2, 70}, uint32(300))
	f.Add([]byte{2, 10, 1, 5, 2, 10}, uint32(86400))
	f.Add([]byte{0, 1, 1, 1, 0, 1}, uint32(0))
	f.Fuzz(func(t *testing.T, spec []byte, minS uint32) {
		minBlock := int64(minS%(MaxMinBlockS+1)) * 1e6
		views := []view{{app: "Code"}, {app: "Slack"}, {app: "excluded", excluded: true}}
		var raw []block
		at := int64(0)
		for i := 0; i+1 < len(spec); i += 2 {
			d := int64(spec[i+1]) * 10e6 // up to 42 min
			if d == 0 {
				continue
			}
			b := block{start: at, end: at + d}
			switch k := spec[i] % 5; k {
			case 3:
				b.gap = GapAFK
			case 4:
				b.gap = GapNoData
			default:
				b.v = views[k]
			}
			// The way blocks builds them: one app or kind per stretch.
			if n := len(raw); n > 0 && raw[n-1].gap == b.gap && (b.gap != "" || sameFocus(raw[n-1].v, b.v)) {
				raw[n-1].end = b.end
				raw[n-1].name = b.end - raw[n-1].start
			} else {
				b.name = d
				raw = append(raw, b)
			}
			at += d
		}
		kindTime := func(bs []block) map[string]int64 {
			m := map[string]int64{}
			for _, b := range bs {
				m[b.gap] += b.end - b.start
			}
			return m
		}
		out := fold(raw, minBlock)
		want, got := kindTime(raw), kindTime(out)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("kind %q: %d µs before folding, %d after", k, v, got[k])
			}
		}
		// Each block holds the time of its own kind only: its span is the
		// span of raw blocks of that kind.
		i := 0
		for n, b := range out {
			if n > 0 && b.start != out[n-1].end || b.end <= b.start {
				t.Fatalf("block %d %d-%d after %d", n, b.start, b.end, out[n-1].end)
			}
			for ; i < len(raw) && raw[i].end <= b.end; i++ {
				if (raw[i].gap == "") != (b.gap == "") || raw[i].gap != "" && raw[i].gap != b.gap {
					t.Fatalf("block %d (%q) holds %q time", n, b.gap, raw[i].gap)
				}
			}
			if n > 0 && b.gap == out[n-1].gap && (b.gap != "" || sameFocus(b.v, out[n-1].v)) {
				t.Errorf("blocks %d and %d are one app or kind, not joined", n-1, n)
			}
			if b.gap == "" && b.end-b.start < minBlock && (n > 0 && out[n-1].gap == "" || n+1 < len(out) && out[n+1].gap == "") {
				t.Errorf("block %d lasts %d µs, under %d, next to another app block", n, b.end-b.start, minBlock)
			}
		}
	})
}

// TestTimelineTitleAndDomainTogether: a browser block shows a title and a
// domain that were on screen together, the pair with the most time.
// Before, the title with the most time and the domain with the most time
// were chosen apart: "Hacker News" with github.com.
func TestTimelineTitleAndDomainTogether(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, at.Add(time.Hour))
	s := func(sec int) time.Time { return at.Add(time.Duration(sec) * time.Second) }
	pages := []struct {
		from, to   int
		title, url string
	}{
		{0, 200, "Hacker News", "https://news.ycombinator.com/"},
		{200, 350, "awbridge/awbridge: issues", "https://github.com/awbridge/awbridge/issues"},
		{350, 500, "awbridge/awbridge: pulls", "https://github.com/awbridge/awbridge/pulls"},
	}
	var window, tabs []string
	for _, p := range pages {
		window = append(window, ev1(s(p.from), float64(p.to-p.from), fmt.Sprintf(`{"app":"Google-chrome","title":%q}`, p.title+" - Google Chrome")))
		tabs = append(tabs, ev1(s(p.from), float64(p.to-p.from), fmt.Sprintf(`{"url":%q,"title":%q,"audible":false,"incognito":false}`, p.url, p.title)))
	}
	window = append(window, ev1(s(500), 700, `{"app":"Code","title":"timeline.go"}`))
	insert(t, env, "aw-watcher-afk_testhost", ev1(s(0), 1200, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost", window...)
	insert(t, env, "aw-watcher-web-chrome_testhost", tabs...)
	svc := reviewService(env, clk, ServiceOptions{})
	for _, minBlock := range []int{0, 60, 300} {
		blocks, _ := wholeTimeline(t, svc, "last_1h", minBlock)
		found := false
		for _, b := range blocks {
			if b.App != "Google-chrome" {
				continue
			}
			found = true
			if minBlock > 0 && (b.Title != "Hacker News - Google Chrome" || b.Domain != "news.ycombinator.com") {
				t.Errorf("min_block_s %d: the browser block shows %q on %q, want Hacker News on news.ycombinator.com (the page with the most time)", minBlock, b.Title, b.Domain)
			}
			together := false
			for _, p := range pages {
				together = together || p.title+" - Google Chrome" == b.Title && strings.Contains(p.url, "//"+b.Domain+"/")
			}
			if !together {
				t.Errorf("min_block_s %d: the block shows %q on %q, never on screen together", minBlock, b.Title, b.Domain)
			}
		}
		if !found {
			t.Errorf("min_block_s %d: no browser block in %+v", minBlock, blocks)
		}
	}
}
