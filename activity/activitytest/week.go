// Package activitytest generates deterministic ActivityWatch histories for
// tests and benchmarks of activity and of the tools built on it, and loads
// them into an aw-server (the simulator, aw/awsim) through its REST API,
// as watchers and aw-client do. It is test support: nothing in the product
// imports it.
package activitytest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// Bucket types and the watchers' client names.
const (
	clientWindow = "aw-watcher-window"
	clientAFK    = "aw-watcher-afk"
	clientWeb    = "aw-client-web"
)

// WeekOptions shape a generated history; a zero field means its default.
type WeekOptions struct {
	Seed uint64 // default 1
	// Start's local midnight starts the first day (default Monday
	// 2026-03-23 in Europe/Berlin, a week holding the spring change).
	Start time.Time
	Days  int // default 7
	// WindowEvents is how many window events in all (default
	// DefaultWindowEvents), weekends lighter.
	WindowEvents int
	Host         string // the buckets' hostname (default "testhost")
}

// DefaultWindowEvents is WeekOptions.WindowEvents' default.
const DefaultWindowEvents = 50_000

// Bucket is one generated bucket and its events, oldest first, without
// ids (the server gives them).
type Bucket struct {
	ID, Type, Client string
	Events           []aw.Event
}

// History is a generated history: the buckets of one host, as the usual
// watchers would have written them.
type History struct {
	Host string
	// Start and End bound every event.
	Start, End time.Time
	// Window, AFK, Chrome and Firefox are the buckets (aw-watcher-window,
	// aw-watcher-afk and two aw-watcher-web browsers).
	Window, AFK, Chrome, Firefox *Bucket
}

// Buckets lists the buckets, window and AFK first.
func (h *History) Buckets() []*Bucket { return []*Bucket{h.Window, h.AFK, h.Chrome, h.Firefox} }

// pick is one thing to look at: an app's window, maybe a browser tab.
type pick struct {
	app, title string
	browser    *browser
	tab        *tab
}

type tab struct {
	url, title         string
	audible, incognito bool
}

type browser struct {
	app, suffix, private string
	bucket               *Bucket
	cur                  int // index into the bucket's events of the current tab event, -1 before the first
}

var (
	files  = []string{"main.go", "fetch.go", "period.go", "calendar.go", "README.md", "go.mod", "client_test.go", "ünïcödé.go"}
	shells = []string{"go test ./... — ~/src/awbridge", "git log --oneline — ~/src/awbridge", "htop — ~", "ssh build-1 — ~", "vim notes.md — ~"}
	chats  = []string{"Slack | #dev | Acme", "Slack | #random | Acme", "Slack | Alice Martin (DM) | Acme", "Signal"}
	docs   = []string{"Q3 report - Google Docs", "budget.ods - LibreOffice Calc", "Inbox - Thunderbird"}
	tabs   = []tab{
		{url: "https://pkg.go.dev/time", title: "time package - time - Go Packages"},
		{url: "https://github.com/awbridge/awbridge/pulls", title: "Pull requests · awbridge/awbridge · GitHub"},
		{url: "https://docs.activitywatch.net/en/latest/", title: "ActivityWatch documentation"},
		{url: "https://www.youtube.com/watch?v=jfKfPfyJRdk", title: "lofi hip hop radio - YouTube", audible: true},
		{url: "https://news.ycombinator.com/", title: "Hacker News"},
		{url: "https://stackoverflow.com/questions/tagged/go", title: "Newest 'go' Questions - Stack Overflow"},
		{url: "https://mail.google.com/mail/u/0/#inbox", title: "Inbox (3) - Gmail"},
		{url: "https://www.reddit.com/r/golang/", title: "r/golang"},
		{url: "https://example.org/private", title: "Private notes", incognito: true},
	}
)

// Week generates a history. It is deterministic: the same options give the
// same events.
func Week(o WeekOptions) *History {
	o.Seed, o.Days, o.WindowEvents, o.Host = cmp.Or(o.Seed, 1), cmp.Or(o.Days, 7), cmp.Or(o.WindowEvents, DefaultWindowEvents), cmp.Or(o.Host, "testhost")
	if o.Start.IsZero() {
		loc, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			loc = time.FixedZone("CET", 3600)
		}
		o.Start = time.Date(2026, 3, 23, 0, 0, 0, 0, loc)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	h := &History{
		Host:    o.Host,
		Window:  &Bucket{ID: "aw-watcher-window_" + o.Host, Type: aw.TypeWindow, Client: clientWindow},
		AFK:     &Bucket{ID: "aw-watcher-afk_" + o.Host, Type: aw.TypeAFK, Client: clientAFK},
		Chrome:  &Bucket{ID: "aw-watcher-web-chrome_" + o.Host, Type: aw.TypeWeb, Client: clientWeb},
		Firefox: &Bucket{ID: "aw-watcher-web-firefox_" + o.Host, Type: aw.TypeWeb, Client: clientWeb},
	}
	browsers := []*browser{
		{app: "Google-chrome", suffix: " - Google Chrome", private: " (Incognito)", bucket: h.Chrome, cur: -1},
		{app: "firefox", suffix: " — Mozilla Firefox", private: " — Private Browsing", bucket: h.Firefox, cur: -1},
	}

	// Window events per day: weekdays weigh 1, weekends 0.35.
	weights := make([]float64, o.Days)
	total := 0.0
	for i := range weights {
		wd := time.Date(o.Start.Year(), o.Start.Month(), o.Start.Day()+i, 12, 0, 0, 0, o.Start.Location()).Weekday()
		weights[i] = 1
		if wd == time.Saturday || wd == time.Sunday {
			weights[i] = 0.35
		}
		total += weights[i]
	}
	quota := make([]int, o.Days)
	left := o.WindowEvents
	for i := range quota {
		quota[i] = int(float64(o.WindowEvents) * weights[i] / total)
		left -= quota[i]
	}
	for i := 0; left > 0; i = (i + 1) % o.Days {
		quota[i]++
		left--
	}

	g := &gen{rng: rng, h: h, browsers: browsers}
	for i := range o.Days {
		midnight := time.Date(o.Start.Year(), o.Start.Month(), o.Start.Day()+i, 0, 0, 0, 0, o.Start.Location())
		g.day(midnight, weights[i] < 1, quota[i])
		if i == 0 {
			h.Start = g.sessionStart
		}
	}
	h.End = g.sessionEnd
	return h
}

// gen is the generator's state across days.
type gen struct {
	rng                      *rand.Rand
	h                        *History
	browsers                 []*browser
	last                     pick
	sessionStart, sessionEnd time.Time
}

func (g *gen) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

// next picks what the person looks at next: never what they look at now.
func (g *gen) next() pick {
	for {
		var p pick
		switch n := g.rng.IntN(100); {
		case n < 34:
			p = pick{app: "Code", title: files[g.rng.IntN(len(files))] + " — awbridge — Visual Studio Code"}
		case n < 64:
			b := g.browsers[0]
			if g.rng.IntN(3) == 0 {
				b = g.browsers[1]
			}
			t := tabs[g.rng.IntN(len(tabs))]
			if t.incognito && g.rng.IntN(3) > 0 {
				t = tabs[g.rng.IntN(4)]
			}
			title := t.title + b.suffix
			if t.incognito {
				title = t.title + b.private
			}
			p = pick{app: b.app, title: title, browser: b, tab: &t}
		case n < 78:
			p = pick{app: "Gnome-terminal", title: shells[g.rng.IntN(len(shells))]}
		case n < 90:
			app := "Slack"
			title := chats[g.rng.IntN(len(chats))]
			if title == "Signal" {
				app = "Signal"
			}
			p = pick{app: app, title: title}
		case n < 97:
			p = pick{app: "libreoffice", title: docs[g.rng.IntN(len(docs))]}
		default:
			p = pick{app: "KeePassXC", title: "Passwords.kdbx - KeePassXC"}
		}
		if p.app != g.last.app || p.title != g.last.title {
			return p
		}
	}
}

// span is a stretch of one day's session.
type span struct {
	start, end time.Time
	away       bool
}

// day writes one day: a session at the desk with AFK breaks, n window
// events, AFK events for the session, and the browsers' tab events.
func (g *gen) day(midnight time.Time, weekend bool, n int) {
	startMin, hours := g.between(7*60+30, 9*60+30), g.between(9, 11)
	if weekend {
		startMin, hours = g.between(10*60, 13*60), g.between(3, 5)
	}
	start := midnight.Add(time.Duration(startMin)*time.Minute + time.Duration(g.rng.IntN(60_000))*time.Millisecond)
	end := start.Add(time.Duration(hours)*time.Hour + time.Duration(g.rng.IntN(3_600_000))*time.Millisecond)
	g.sessionStart, g.sessionEnd = start, end

	// Breaks: lunch on weekdays, and a few short ones.
	var breaks []span
	if !weekend {
		at := midnight.Add(time.Duration(g.between(12*60, 13*60)) * time.Minute)
		breaks = append(breaks, span{start: at, end: at.Add(time.Duration(g.between(35, 60)) * time.Minute), away: true})
	}
	for range g.between(2, 4) {
		at := start.Add(time.Duration(g.rng.Int64N(int64(end.Sub(start) - time.Hour)))).Truncate(time.Millisecond)
		b := span{start: at, end: at.Add(time.Duration(g.between(4*60, 20*60)) * time.Second), away: true}
		overlaps := b.end.After(end.Add(-10 * time.Minute))
		for _, o := range breaks {
			overlaps = overlaps || (b.start.Before(o.end.Add(5*time.Minute)) && o.start.Before(b.end.Add(5*time.Minute)))
		}
		if !overlaps {
			breaks = append(breaks, b)
		}
	}
	slices.SortFunc(breaks, func(a, b span) int { return a.start.Compare(b.start) })
	var parts []span
	cur := start
	for _, b := range breaks {
		parts = append(parts, span{start: cur, end: b.start}, b)
		cur = b.end
	}
	parts = append(parts, span{start: cur, end: end})

	// AFK: not-afk while at the desk, afk during breaks.
	for _, p := range parts {
		status := "not-afk"
		if p.away {
			status = "afk"
		}
		g.h.AFK.Events = append(g.h.AFK.Events, event(p.start, p.end, map[string]any{"status": status}))
	}

	// Window events: n over the time at the desk, each break folded into
	// the window focused when it began (its heartbeats merge on).
	active := time.Duration(0)
	for _, p := range parts {
		if !p.away {
			active += p.end.Sub(p.start)
		}
	}
	var atDesk []span
	for _, p := range parts {
		if !p.away {
			atDesk = append(atDesk, p)
		}
	}
	// Split n over the stretches at the desk by their length, each at
	// least one, the rounding put on the longest.
	ks := make([]int, len(atDesk))
	sum, longest := 0, 0
	for i, p := range atDesk {
		ks[i] = max(1, int(float64(n)*float64(p.end.Sub(p.start))/float64(active)))
		sum += ks[i]
		if p.end.Sub(p.start) > atDesk[longest].end.Sub(atDesk[longest].start) {
			longest = i
		}
	}
	ks[longest] = max(1, ks[longest]+n-sum)
	for i, p := range atDesk {
		breakEnd := p.end
		for _, b := range breaks {
			if b.start.Equal(p.end) {
				breakEnd = b.end
			}
		}
		g.stretch(p.start, p.end, breakEnd, ks[i])
	}
	g.closeTabs(end)
}

// stretch writes k window events over [from, to), the last one lasting
// until until (through a break that follows).
func (g *gen) stretch(from, to, until time.Time, k int) {
	// Heavy-tailed lengths: most switches are quick, a few stretches long.
	w := make([]float64, k)
	sum := 0.0
	for i := range w {
		w[i] = math.Min(1/math.Pow(1-g.rng.Float64()*0.999, 0.8), 400)
		sum += w[i]
	}
	const minLen = 200 * time.Millisecond
	room := to.Sub(from) - time.Duration(k)*minLen
	if room < 0 {
		room = 0
	}
	t := from
	for i := range k {
		d := minLen + time.Duration(float64(room)*w[i]/sum)
		d = d.Truncate(time.Millisecond)
		end := t.Add(d)
		if i == k-1 {
			end = until
		}
		p := g.next()
		g.last = p
		evEnd := end
		// Now and then the watcher's events leave a small gap.
		if i < k-1 && d > 4*time.Second && g.rng.IntN(10) == 0 {
			evEnd = end.Add(-time.Duration(g.between(100, 900)) * time.Millisecond)
		}
		g.h.Window.Events = append(g.h.Window.Events, event(t, evEnd, map[string]any{"app": p.app, "title": p.title}))
		if p.browser != nil {
			g.showTab(p.browser, *p.tab, t)
		}
		t = end
	}
}

// showTab makes t the browser's active tab from at: the current tab event
// ends there and a new one begins (unless the tab is the same). The
// extension reports the active tab even while another window has focus.
func (g *gen) showTab(b *browser, t tab, at time.Time) {
	evs := b.bucket.Events
	if b.cur >= 0 {
		last := &evs[b.cur]
		var d struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(last.Data, &d)
		if d.URL == t.url && last.End().Equal(at) {
			return
		}
	}
	g.closeTab(b, at)
	data := map[string]any{"url": t.url, "title": t.title, "audible": t.audible, "incognito": t.incognito, "tabCount": g.between(2, 30)}
	b.bucket.Events = append(b.bucket.Events, event(at, at, data))
	b.cur = len(b.bucket.Events) - 1
}

// closeTab ends the browser's current tab event at at.
func (g *gen) closeTab(b *browser, at time.Time) {
	if b.cur < 0 {
		return
	}
	e := &b.bucket.Events[b.cur]
	e.Duration = seconds(at.Sub(e.Timestamp))
	b.cur = -1
}

// closeTabs ends every browser's tab at the session's end.
func (g *gen) closeTabs(at time.Time) {
	for _, b := range g.browsers {
		g.closeTab(b, at)
	}
}

// event builds an event [start, end) with ms precision, as aw-server
// stores it.
func event(start, end time.Time, data map[string]any) aw.Event {
	start = start.UTC().Truncate(time.Millisecond)
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err) // maps of strings, bools and ints always marshal
	}
	return aw.Event{Timestamp: start, Duration: seconds(end.Sub(start)), Data: raw}
}

// seconds is d in seconds to the millisecond.
func seconds(d time.Duration) float64 {
	return float64(d.Truncate(time.Millisecond).Milliseconds()) / 1000
}

// insertBatch bounds the events of one POST (well under the simulator's
// 16 MiB body limit).
const insertBatch = 5000

// Load writes the history into an aw-server-like handler (an
// *awsim.Server) through its REST API: it creates the buckets (POST
// /api/0/buckets/<id>, as watchers do) and inserts their events in
// batches (POST /api/0/buckets/<id>/events, as aw-client's insert_events
// does). Requests go to the handler directly, addressed to 127.0.0.1:5600.
func (h *History) Load(ctx context.Context, handler http.Handler) error {
	post := func(path string, body []byte) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:5600"+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("activitytest: POST %s: %d %s", path, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
		return nil
	}
	for _, b := range h.Buckets() {
		meta, _ := json.Marshal(map[string]string{"client": b.Client, "type": b.Type, "hostname": h.Host})
		path := "/api/0/buckets/" + url.PathEscape(b.ID)
		if err := post(path, meta); err != nil {
			return err
		}
		for i := 0; i < len(b.Events); i += insertBatch {
			if err := ctx.Err(); err != nil {
				return err
			}
			body, err := json.Marshal(b.Events[i:min(i+insertBatch, len(b.Events))])
			if err != nil {
				return err
			}
			if err := post(path+"/events", body); err != nil {
				return err
			}
		}
	}
	return nil
}
