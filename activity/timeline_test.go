package activity

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"encoding/json"
	"net/http/httptest"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
)

// TestFold: short app stretches fold into the app block before them,
// else into the next one of their run of activity, never into a gap, and
// gaps are never folded; neighbours of one app or gap join.
func TestFold(t *testing.T) {
	code, slack := view{app: "Code"}, view{app: "Slack"}
	b := func(start, end int64, v view) block { return block{start: start, end: end, v: v, name: end - start} }
	g := func(start, end int64, kind string) block { return block{start: start, end: end, gap: kind} }
	show := func(bs []block) string {
		var out []string
		for _, x := range bs {
			what := x.v.app
			if x.gap != "" {
				what = "gap:" + x.gap
			}
			out = append(out, fmt.Sprintf("%s %d-%d f%d", what, x.start, x.end, x.folded))
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct {
		name string
		in   []block
		min  int64
		want string
	}{
		{"nothing short", []block{b(0, 100, code), b(100, 200, slack)}, 60, "Code 0-100 f0, Slack 100-200 f0"},
		{"short into the one before", []block{b(0, 100, code), b(100, 110, slack), b(110, 300, slack)}, 60, "Code 0-110 f1, Slack 110-300 f0"},
		{"short between one app joins it", []block{b(0, 100, code), b(100, 110, slack), b(110, 300, code)}, 60, "Code 0-300 f1"},
		{"short AFK gap inside an app stays", []block{b(0, 100, code), g(100, 130, GapAFK), b(130, 300, code)}, 60, "Code 0-100 f0, gap:afk 100-130 f0, Code 130-300 f0"},
		{"short no-data gap inside an app stays", []block{b(0, 100, code), g(100, 130, GapNoData), b(130, 300, code)}, 60,
			"Code 0-100 f0, gap:no_data 100-130 f0, Code 130-300 f0"},
		{"short first block into the next", []block{b(0, 10, slack), b(10, 300, code)}, 60, "Code 0-300 f1"},
		{"short activity after a gap into the next", []block{g(0, 100, GapNoData), b(100, 120, slack), b(120, 300, code)}, 60,
			"gap:no_data 0-100 f0, Code 100-300 f1"},
		{"short activity between gaps stays", []block{g(0, 100, GapAFK), b(100, 120, slack), g(120, 300, GapAFK)}, 60,
			"gap:afk 0-100 f0, Slack 100-120 f0, gap:afk 120-300 f0"},
		{"short run between gaps is one block named by its longest", []block{g(0, 100, GapAFK), b(100, 110, code), b(110, 130, slack), g(130, 300, GapNoData)}, 60,
			"gap:afk 0-100 f0, Slack 100-130 f1, gap:no_data 130-300 f0"},
		{"an AFK gap beside a no-data gap", []block{b(0, 100, code), g(100, 110, GapAFK), g(110, 120, GapNoData), b(120, 300, code)}, 3600,
			"Code 0-100 f0, gap:afk 100-110 f0, gap:no_data 110-120 f0, Code 120-300 f0"},
		{"only short blocks at the end", []block{b(0, 100, code), g(100, 300, GapAFK), b(300, 310, slack), b(310, 320, code)}, 60,
			"Code 0-100 f0, gap:afk 100-300 f0, Slack 300-320 f1"},
		{"min 0 folds nothing", []block{b(0, 1, code), b(1, 2, slack)}, 0, "Code 0-1 f0, Slack 1-2 f0"},
		{"counts nest", []block{b(0, 100, code), b(100, 101, slack), b(101, 102, code), b(102, 103, slack), b(103, 200, slack)}, 60,
			"Code 0-103 f3, Slack 103-200 f0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := show(fold(c.in, c.min)); got != c.want {
				t.Errorf("fold:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestTimelinePaging: pages joined by their cursors are the one long
// page; the blocks cover the period without gap or overlap; the last page
// has no cursor.
func TestTimelinePaging(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: time.Date(2026, 3, 27, 16, 0, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	ctx := context.Background()
	for _, period := range []string{"yesterday", "today"} {
		all, err := s.Timeline(ctx, TimelineQuery{Period: period, Limit: MaxTimelineLimit})
		if err != nil {
			t.Fatal(err)
		}
		if all.NextCursor != "" || len(all.Blocks) < 20 {
			t.Fatalf("%s: %d blocks, cursor %q", period, len(all.Blocks), all.NextCursor)
		}
		at := all.Period.Start
		for i, b := range all.Blocks {
			if !b.Start.Equal(at) || !b.End.After(b.Start) {
				t.Fatalf("%s block %d: %v-%v after %v", period, i, b.Start, b.End, at)
			}
			at = b.End
			// Short activity folds into the activity it touches; only a
			// gap, or activity between gaps, may stay short.
			if b.Gap == "" && b.DurationS < DefaultMinBlockS &&
				(i > 0 && all.Blocks[i-1].Gap == "" || i+1 < len(all.Blocks) && all.Blocks[i+1].Gap == "") {
				t.Errorf("%s block %d lasts %v s, under min_block_s, next to activity", period, i, b.DurationS)
			}
		}
		if !at.Equal(all.Period.End) {
			t.Errorf("%s: blocks end at %v, the period at %v", period, at, all.Period.End)
		}
		var paged []Block
		q := TimelineQuery{Period: period, Limit: 7}
		for pages := 0; ; pages++ {
			page, err := s.Timeline(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, page.Blocks...)
			if page.NextCursor == "" {
				break
			}
			if len(page.Blocks) != 7 || pages > 100 {
				t.Fatalf("page %d: %d blocks", pages, len(page.Blocks))
			}
			if len(page.NextCursor) > MaxCursorLen {
				t.Fatalf("cursor of %d bytes", len(page.NextCursor))
			}
			q = TimelineQuery{Cursor: page.NextCursor, Limit: 7}
		}
		a, _ := json.Marshal(all.Blocks)
		p, _ := json.Marshal(paged)
		if string(a) != string(p) {
			t.Errorf("%s: the pages differ from the whole:\n%s\n%s", period, a, p)
		}
	}
}

// TestCursorRefused: a cursor that was altered, cut, made by another
// server, or given with a period is an argument error naming cursor.
func TestCursorRefused(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: time.Date(2026, 3, 27, 16, 0, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	other := newService(t, env, clk, ServiceOptions{})
	ctx := context.Background()
	page, err := s.Timeline(ctx, TimelineQuery{Period: "yesterday", Limit: 3})
	if err != nil || page.NextCursor == "" {
		t.Fatal(err, page.NextCursor)
	}
	c := page.NextCursor
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	flip := func(i int) string {
		b := []byte(string(raw))
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	five := 5
	for _, bad := range []struct {
		name string
		q    TimelineQuery
		arg  string
		svc  *Service
	}{
		{"altered time", TimelineQuery{Cursor: flip(22)}, "cursor", s},
		{"altered mac", TimelineQuery{Cursor: flip(len(raw) - 1)}, "cursor", s},
		{"cut", TimelineQuery{Cursor: c[:len(c)-4]}, "cursor", s},
		{"not base64", TimelineQuery{Cursor: "%%%"}, "cursor", s},
		{"too long", TimelineQuery{Cursor: strings.Repeat("A", MaxCursorLen+1)}, "cursor", s},
		{"another server's", TimelineQuery{Cursor: c}, "cursor", other},
		{"with another period", TimelineQuery{Cursor: c, Period: "today"}, "cursor", s},
		{"with a bad period", TimelineQuery{Cursor: c, Period: "fortnight"}, "period", s},
		{"another min_block_s", TimelineQuery{Cursor: c, MinBlockS: &five}, "min_block_s", s},
	} {
		_, err := bad.svc.Timeline(ctx, bad.q)
		var se *SpecError
		if !errors.As(err, &se) || se.Arg != bad.arg {
			t.Errorf("%s: %v, want a *SpecError on %s", bad.name, err, bad.arg)
		}
	}
	if _, err := s.Timeline(ctx, TimelineQuery{Cursor: c}); err != nil {
		t.Errorf("the cursor itself: %v", err)
	}
	// A client that repeats the first page's period beside the cursor
	// gets the next page, as with the cursor alone.
	if _, err := s.Timeline(ctx, TimelineQuery{Cursor: c, Period: "yesterday"}); err != nil {
		t.Errorf("the cursor with its own period: %v", err)
	}
}

// TestToolResultsGolden pins each tool's answer over a few hours of the
// generated week (go test -update rewrites testdata/tools.golden.json).
func TestToolResultsGolden(t *testing.T) {
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: time.Date(2026, 3, 25, 10, 40, 0, 0, env.h.Start.Location())}
	s := newService(t, env, clk, ServiceOptions{})
	ctx := context.Background()
	sum, err := s.Summary(ctx, SummaryQuery{Period: "last_2h", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	titles, err := s.Summary(ctx, SummaryQuery{Period: "last_2h", GroupBy: GroupByTitle, Limit: 3, IncludeAFK: true})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := s.Timeline(ctx, TimelineQuery{Period: "last_2h", Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	tl.NextCursor = "(random per process)"
	h, err := s.History(ctx, HistoryQuery{Minutes: 5, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(map[string]any{"summary": sum, "summary_titles": titles, "timeline": tl, "history": h}, "", "  ")
	checkGolden(t, filepath.Join("testdata", "tools.golden.json"), append(out, '\n'))
}

// TestShortenKeepsBlocksInThePeriod: compact mode cuts the blocks' bounds
// to the second, but a period starting within a second (last_2h at
// 10:00:00.600) keeps its first block from starting before it.
func TestShortenKeepsBlocksInThePeriod(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 600e6, time.UTC)
	tl := &Timeline{Period: Period{Start: start, End: start.Add(time.Hour)}, Blocks: []Block{
		{Start: start, End: start.Add(90 * time.Second), DurationS: 90, Folded: 2},
		{Start: start.Add(90 * time.Second), End: start.Add(time.Hour), DurationS: 3510},
	}}
	tl.Shorten()
	b := tl.Blocks
	if !b[0].Start.Equal(start) || !b[0].End.Equal(b[1].Start) || b[0].Folded != 0 ||
		!b[1].Start.Equal(time.Date(2026, 11, 24, 10, 1, 30, 0, time.UTC)) {
		t.Errorf("shortened blocks %+v", b)
	}
}

// reviewDesktop is an empty simulator of host "testhost" with a window, an
// AFK and a Chrome bucket, whose clock stands at now.
func reviewDesktop(t *testing.T, now time.Time) (*simEnv, *clock) {
	t.Helper()
	clk := &clock{t: now}
	sim := awsim.New(awsim.Options{Hostname: "testhost", Now: clk.now})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	env := &simEnv{srv: srv, sim: sim}
	for _, b := range []struct{ id, typ string }{
		{"aw-watcher-window_testhost", aw.TypeWindow}, {"aw-watcher-afk_testhost", aw.TypeAFK}, {"aw-watcher-web-chrome_testhost", aw.TypeWeb}} {
		createBucket(t, env, b.id, b.typ)
	}
	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	env.client = c
	env.src = testSource()
	return env, clk
}

func reviewService(env *simEnv, clk *clock, o ServiceOptions) *Service {
	o.AW, o.Source, o.Now = env.client, env.src, clk.now
	if o.Zone == nil {
		o.Zone = utc
	}
	return NewService(o)
}

// TestTimelineCursorSubMillisecondBlockEnd: aw-watcher-afk stores
// durations to the microsecond (seconds since the last input, a float), so
// active time, and with it a focus block, can end between two
// milliseconds. The cursor keeps its position in whole milliseconds only.
// A client paging with limit 1 gets, after the block ending at
// 09:20:00.0005, a page holding a 0.0 s sliver of that same block whose
// cursor points at the same place again: the cursor never ends, a client
// that follows next_cursor loops forever, and the AFK gap after it is
// never reached. Expected: pages
// joined by their cursors are exactly the whole timeline (e.g. keep the
// position in microseconds in the cursor, or resume at the first block
// whose end is after the position rounded up).
func TestTimelineCursorSubMillisecondBlockEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, at.Add(time.Hour))
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	// Active for 20 min and half a millisecond, then away for the rest.
	insert(t, env, "aw-watcher-afk_testhost",
		ev1(m(0), 1200.0005, `{"status":"not-afk"}`),
		ev1(m(0).Add(1200000500*time.Microsecond), 2399.9995, `{"status":"afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(m(0), 600, `{"app":"Code","title":"main.go"}`),
		ev1(m(10), 1800, `{"app":"Slack","title":"general"}`))
	s := reviewService(env, clk, ServiceOptions{})
	zero := 0
	whole, err := s.Timeline(ctx, TimelineQuery{Period: "last_1h", MinBlockS: &zero, Limit: MaxTimelineLimit})
	if err != nil {
		t.Fatal(err)
	}
	var paged []Block
	q := TimelineQuery{Period: "last_1h", MinBlockS: &zero, Limit: 1}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatalf("more than 20 pages for %d blocks: the cursor repeats itself (so far %d blocks, the last %+v)", len(whole.Blocks), len(paged), paged[len(paged)-1])
		}
		page, err := s.Timeline(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page.Blocks...)
		if page.NextCursor == "" {
			break
		}
		q = TimelineQuery{Cursor: page.NextCursor, Limit: 1}
	}
	a, _ := json.Marshal(whole.Blocks)
	p, _ := json.Marshal(paged)
	if string(a) != string(p) {
		t.Errorf("the pages differ from the whole timeline:\nwhole %s\npages %s", a, p)
	}
}
