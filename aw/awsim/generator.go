package awsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The activity generator: a deterministic (Options.Seed) person at a
// desktop, reported by simulated watchers as the real ones send heartbeats:
// aw-watcher-window every step (pulsetime step+1); aw-watcher-afk every 5 s
// (pulsetime 185), reporting "afk" from the last input once 180 s pass
// without one, 1 ms after the not-afk event ends; aw-watcher-web-chrome
// every 5 s (pulsetime 60), its tab events going on while other windows
// have focus. The person switches between an editor, the browser, a
// terminal, chat, now and then a password manager (a sensitive title, for
// the privacy exclusion) and breaks, every 3-10 s live (minutes in Seed's
// history), and takes no break in the first two live minutes, so a 30 s
// demo shows several changes.

const (
	afkTimeout   = 180 * usPerSecond
	afkPoll      = 5 * usPerSecond
	webPoll      = 5 * usPerSecond
	afkPulsetime = 185.0
	webPulsetime = 60.0
)

type tab struct {
	url, title         string
	audible, incognito bool
}

// activity is one segment of the script.
type activity struct {
	app, title string
	tab        *tab // the browser's tab, when app is the browser
	away       bool // the person left the desk
}

var (
	codeFiles = []string{"main.go", "frame.go", "poller.go", "awsim.go", "client.go", "README.md", "config.toml", "server_test.go"}
	terminals = []string{"go test ./... — ~/src/awbridge", "vim config.toml — ~/src/awbridge", "git log --oneline — ~/src/awbridge", "htop — ~", "ssh deploy@build-1 — ~"}
	chats     = []string{"Slack | #dev | Acme", "Slack | #random | Acme", "Slack | Alice Martin (DM) | Acme", "Slack | #incidents | Acme"}
	tabs      = []tab{
		{url: "https://pkg.go.dev/encoding/json", title: "encoding/json - Go Packages"},
		{url: "https://github.com/awbridge/awbridge/pulls", title: "Pull requests · awbridge/awbridge · GitHub"},
		{url: "https://docs.activitywatch.net/en/latest/api/rest.html", title: "REST API — ActivityWatch documentation"},
		{url: "https://www.youtube.com/watch?v=jfKfPfyJRdk", title: "lofi hip hop radio 📚 beats to relax/study to - YouTube", audible: true},
		{url: "https://news.ycombinator.com/", title: "Hacker News"},
		{url: "https://stackoverflow.com/questions/44305617/nested-functions-in-go", title: "Nested functions in Go - Stack Overflow"},
		{url: "https://mail.google.com/mail/u/0/#inbox", title: "Inbox (3) - j.doe@example.com - Gmail"},
		{url: "https://accounts.example-bank.com/login", title: "Sign in · Example Bank"},
		{url: "https://www.example.org/private/notes", title: "Private notes", incognito: true},
	}
	vaults = []activity{
		{app: "1Password", title: "Example Bank — Login (j.doe) — Personal Vault — 1Password"},
		{app: "KeePassXC", title: "Passwords.kdbx [bank.example.com — password] - KeePassXC"},
	}
)

// person is the generator state. Guarded by Server.mu.
type person struct {
	rng       *rand.Rand
	win, afkB string // bucket ids
	web       string

	cur      activity
	segEnd   int64
	window   activity // the focused window (kept while away)
	tab      tab
	tabCount int

	lastTick  int64
	lastInput int64
	afk       bool
	nextAFK   int64
	nextWeb   int64
	history   bool  // Seed's long segments
	breakAt   int64 // Seed: take a break at the first switch after this
	started   bool
	liveFrom  int64 // when live segments began (0: not yet)
}

// liveNoBreak: no break this long after live segments begin.
const liveNoBreak = 120 * usPerSecond

// personLocked returns the generator's state, made on first use. Caller
// holds s.mu.
func (s *Server) personLocked() *person {
	if s.person != nil {
		return s.person
	}
	h := s.opts.Hostname
	s.person = &person{
		rng:      rand.New(rand.NewPCG(uint64(s.opts.Seed), 0xa0c71e5)),
		win:      "aw-watcher-window_" + h,
		afkB:     "aw-watcher-afk_" + h,
		web:      "aw-watcher-web-chrome_" + h,
		tab:      tabs[0],
		tabCount: 7,
	}
	return s.person
}

// ensureBuckets creates the watchers' buckets as the watchers do at start
// (again if someone deleted them). Caller holds s.mu.
func (s *Server) ensureBuckets(p *person, now int64) {
	for _, b := range []struct{ id, typ, client string }{
		{p.win, "currentwindow", "aw-watcher-window"},
		{p.afkB, "afkstatus", "aw-watcher-afk"},
		{p.web, "web.tab.current", "aw-client-web"},
	} {
		if s.st.bucket(b.id) == nil {
			s.st.createBucket(&bucket{id: b.id, created: now, typ: b.typ, client: b.client, hostname: s.opts.Hostname})
		}
	}
}

func (p *person) between(lo, hi int64) int64 { return lo + p.rng.Int64N(hi-lo+1) }

// nextActivity picks the next segment.
func (p *person) nextActivity() activity {
	awayWeight := 2
	switch {
	case p.cur.away:
		awayWeight = 0
	case p.history:
		awayWeight = 1 // Seed plans its own break
	case p.liveFrom == 0 || p.segEnd-p.liveFrom < liveNoBreak:
		awayWeight = 0
	}
	n := p.rng.IntN(30 + 25 + 15 + 12 + 4 + awayWeight)
	switch {
	case n < 30:
		f := codeFiles[p.rng.IntN(len(codeFiles))]
		if p.rng.IntN(4) == 0 {
			f = "● " + f // unsaved
		}
		return activity{app: "Code", title: f + " — awbridge — Visual Studio Code"}
	case n < 55:
		t := p.tab
		if !p.window.away && (p.window.app != "Google-chrome" || p.rng.IntN(3) > 0) {
			// Navigate: mostly ordinary pages, rarely the bank or incognito.
			i := p.rng.IntN(len(tabs))
			if (tabs[i].incognito || tabs[i].url == tabs[7].url) && p.rng.IntN(3) > 0 {
				i = p.rng.IntN(4)
			}
			t = tabs[i]
			p.tabCount = max(1, min(30, p.tabCount+p.rng.IntN(3)-1))
		}
		title := t.title + " - Google Chrome"
		if t.incognito {
			title += " (Incognito)"
		}
		return activity{app: "Google-chrome", title: title, tab: &t}
	case n < 70:
		return activity{app: "Gnome-terminal", title: terminals[p.rng.IntN(len(terminals))]}
	case n < 82:
		return activity{app: "Slack", title: chats[p.rng.IntN(len(chats))]}
	case n < 86:
		return vaults[p.rng.IntN(len(vaults))]
	}
	return activity{away: true}
}

// segmentLength is how long an activity lasts: 3-10 s live, minutes in the
// history; breaks outlast the AFK watcher's 180 s timeout so they show.
func (p *person) segmentLength(a activity) int64 {
	switch {
	case a.away && p.history:
		return p.between(300, 900) * usPerSecond
	case a.away:
		return p.between(190, 260) * usPerSecond
	case p.history:
		return p.between(45, 420) * usPerSecond
	}
	return p.between(3, 10) * usPerSecond
}

func (p *person) begin(a activity, now int64) {
	p.cur = a
	p.segEnd = now + p.segmentLength(a)
	if !a.away {
		p.window = a
		if a.tab != nil {
			p.tab = *a.tab
		}
	}
}

// stepLocked advances the simulated desktop to now and sends the watchers'
// heartbeats. Caller holds s.mu.
func (s *Server) stepLocked(p *person, now int64, step time.Duration) {
	if p.started && now <= p.lastTick {
		return // the clock did not move
	}
	s.ensureBuckets(p, now)
	if !p.started {
		p.started = true
		p.begin(p.nextActivity(), now)
		for p.cur.away { // start at the desk
			p.begin(p.nextActivity(), now)
		}
		p.lastInput, p.nextAFK, p.nextWeb = now, now, now
	}
	if !p.history && p.liveFrom == 0 {
		p.liveFrom = now
	}
	if now-p.segEnd > 2*3600*usPerSecond {
		p.segEnd = now // a long pause of the clock: do not replay it
	}
	for now >= p.segEnd {
		a := p.nextActivity()
		// A switch goes somewhere else: not the window already focused.
		for i := 0; i < 3 && !a.away && a.app == p.window.app && a.title == p.window.title; i++ {
			a = p.nextActivity()
		}
		if p.breakAt != 0 && p.segEnd >= p.breakAt && !p.cur.away && !a.away {
			a, p.breakAt = activity{away: true}, 0
		}
		p.begin(a, p.segEnd)
	}
	p.lastTick = now
	if !p.cur.away {
		// Typing: the last input is a moment ago, never before the last one.
		jitter := min(p.rng.Int64N(800)*usPerMilli, step.Microseconds())
		p.lastInput = max(p.lastInput, now-jitter)
	}

	// aw-watcher-window
	winPulse := max(2.0, step.Seconds()+1)
	s.beat(p.win, now, 0, obj("app", p.window.app, "title", p.window.title), winPulse)

	// aw-watcher-afk
	if now >= p.nextAFK {
		p.nextAFK = now + max(afkPoll, step.Microseconds())
		pulse := max(afkPulsetime, 180+step.Seconds())
		since := now - p.lastInput
		status := func(afk bool) json.RawMessage {
			if afk {
				return obj("status", "afk")
			}
			return obj("status", "not-afk")
		}
		switch {
		case p.afk && since < afkTimeout:
			s.beat(p.afkB, p.lastInput, 0, status(true), pulse)
			p.afk = false
			s.beat(p.afkB, p.lastInput+usPerMilli, 0, status(false), pulse)
		case !p.afk && since >= afkTimeout:
			s.beat(p.afkB, p.lastInput, 0, status(false), pulse)
			p.afk = true
			s.beat(p.afkB, p.lastInput+usPerMilli, since, status(true), pulse)
		case p.afk:
			s.beat(p.afkB, p.lastInput+usPerMilli, since, status(true), pulse)
		default:
			s.beat(p.afkB, p.lastInput, 0, status(false), pulse)
		}
	}

	// aw-watcher-web-chrome
	if now >= p.nextWeb {
		p.nextWeb = now + max(webPoll, step.Microseconds())
		t := p.tab
		s.beat(p.web, now, 0, obj("url", t.url, "title", t.title, "audible", t.audible, "incognito", t.incognito, "tabCount", int64(p.tabCount)),
			max(webPulsetime, step.Seconds()+1))
	}
}

// beat sends one heartbeat into bucket id, as POST .../heartbeat would.
func (s *Server) beat(id string, ts, dur int64, data json.RawMessage, pulsetime float64) {
	if b := s.st.bucket(id); b != nil {
		_, _ = s.st.heartbeat(b, truncMS(ts), dur, data, int64(pulsetime*float64(usPerSecond)))
	}
}

// Seed pre-fills about an hour of plausible history ending at at (minutes-
// long activities, a break that the AFK watcher reports), so the first frame
// already has data. Call it before Run; it continues an existing script
// rather than rewriting the past. Safe for concurrent use.
func (s *Server) Seed(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.personLocked()
	end := at.UnixMicro()
	t := end - 3600*usPerSecond
	if p.started {
		t = p.lastTick + usPerSecond
	}
	p.history = true
	if end-t > 30*60*usPerSecond {
		// One coffee break somewhere in the hour, so the history shows
		// how the AFK watcher reports (and backdates) it.
		p.breakAt = end - p.between(20*60, 45*60)*usPerSecond
	}
	for ; t <= end; t += usPerSecond {
		s.stepLocked(p, t, time.Second)
	}
	p.history, p.breakAt = false, 0
	// Live segments from here on: switch soon (back to the desk after a
	// break), so a demo shows movement at once.
	p.segEnd = min(p.segEnd, end+p.between(2, 6)*usPerSecond)
	p.liveFrom = end
}

// errRunning is returned by a second concurrent Run.
var errRunning = errors.New("awsim: Run is already running")

// Run plays the simulated person until ctx is done: every step (1 s in the
// demo) it reads the clock (Options.Now) and sends the watchers'
// heartbeats. It returns nil when ctx is done, leaving no goroutine behind,
// and an error for a non-positive step or when another Run is active. Safe
// for concurrent use with requests.
func (s *Server) Run(ctx context.Context, step time.Duration) error {
	if step <= 0 {
		return fmt.Errorf("awsim: run step must be positive, got %v", step)
	}
	if !s.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer s.running.Store(false)
	tick := time.NewTicker(step)
	defer tick.Stop()
	for ctx.Err() == nil {
		s.step(step)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	return nil
}

func (s *Server) step(step time.Duration) {
	now := s.opts.Now().UnixMicro()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stepLocked(s.personLocked(), now, step)
}
