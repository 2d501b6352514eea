package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/awbridge/awbridge/internal/realaw"
)

// dstSessions are the times someone sat at the computer around the change
// of 25 October 2026 in Europe/Berlin (03:00 CEST became 02:00 CET): one
// across the 04:00 day start, a working day, a night that runs through
// both 02:00-03:00 hours, a morning after, and an evening across midnight.
var dstSessions = [][2]string{
	{"2026-10-24T03:10:00+02:00", "2026-10-24T05:20:00+02:00"},
	{"2026-10-24T09:00:00+02:00", "2026-10-24T12:40:00+02:00"},
	{"2026-10-24T13:30:00+02:00", "2026-10-24T18:15:00+02:00"},
	{"2026-10-24T22:00:00+02:00", "2026-10-25T03:40:00+01:00"},
	{"2026-10-25T10:00:00+01:00", "2026-10-25T12:00:00+01:00"},
	{"2026-10-25T22:30:00+01:00", "2026-10-26T01:30:00+01:00"},
}

type dstEvent struct {
	Timestamp string         `json:"timestamp"`
	Duration  float64        `json:"duration"`
	Data      map[string]any `json:"data"`
}

func dstEv(start time.Time, d time.Duration, data map[string]any) dstEvent {
	return dstEvent{start.UTC().Format("2006-01-02T15:04:05.000Z07:00"), d.Seconds(), data}
}

var dstPages = []struct{ title, url string }{
	{"Pull request #4711 · acme/awbridge", "https://github.com/acme/awbridge/pull/4711"},
	{"go - How to use context in Go? - Stack Overflow", "https://stackoverflow.com/questions/123/how-to-use-context-in-go"},
	{"time package - Go Packages", "https://pkg.go.dev/time"},
	{"Inbox (3) - me@example.com - Gmail", "https://mail.google.com/mail/u/0/#inbox"},
	{"Daylight saving time explained - YouTube", "https://www.youtube.com/watch?v=dst42"},
	{"r/golang - Time zones", "https://www.reddit.com/r/golang/comments/42/tz/"},
	{"ActivityWatch documentation", "https://docs.activitywatch.net/en/latest/"},
	{"Hacker News", "https://news.ycombinator.com/"},
}

var dstApps = []struct {
	app    string
	titles []string
}{
	{"Code", []string{"main.go - awbridge - Visual Studio Code", "period.go - awbridge - Visual Studio Code", "aw-server.py - aw-server - Visual Studio Code"}},
	{"Google-chrome", nil},
	{"Gnome-terminal", []string{"me@vm: ~/src/awbridge", "vim calendar.go", "me@vm: ~/src/awbridge — go test ./..."}},
	{"Slack", []string{"Slack | #dev | Acme", "Slack | #random | Acme"}},
	{"Thunderbird", []string{"Re: clocks go back - Inbox - Mozilla Thunderbird"}},
	{"Spotify", []string{"Spotify Premium"}},
}

// dstWeek is the events of dstSessions: window events back to back with
// gaps flood() closes and a few it does not, the AFK watcher's not-afk
// stretches with breaks (one break with an audible YouTube tab in focus),
// and the focused Chrome tab, its events a little off the windows'.
func dstWeek() (window, afk, web []dstEvent) {
	rng := rand.New(rand.NewPCG(2026, 1025))
	for si, s := range dstSessions {
		start, _ := time.Parse(time.RFC3339, s[0])
		end, _ := time.Parse(time.RFC3339, s[1])
		// AFK: not-afk 10-50 min, then afk 3-15 min, ... ending not-afk.
		var breaks [][2]time.Time
		for t := start; t.Before(end); {
			on := time.Duration(10+rng.IntN(40)) * time.Minute
			stop := earlier(t.Add(on), end)
			afk = append(afk, dstEv(t, stop.Sub(t), map[string]any{"status": "not-afk"}))
			t = stop
			if !t.Before(end) {
				break
			}
			off := time.Duration(3+rng.IntN(12))*time.Minute + time.Duration(rng.IntN(60))*time.Second
			stop = earlier(t.Add(off), end)
			afk = append(afk, dstEv(t, stop.Sub(t), map[string]any{"status": "afk"}))
			breaks = append(breaks, [2]time.Time{t, stop})
			t = stop
		}
		for t := start; t.Before(end); {
			d := time.Duration(3000+rng.IntN(240000)) * time.Millisecond
			a := dstApps[rng.IntN(len(dstApps))]
			// The first break of the afternoon: a video plays in Chrome.
			if si == 2 && len(breaks) > 0 && !t.Before(breaks[0][0].Add(-time.Minute)) && t.Before(breaks[0][1]) {
				d = breaks[0][1].Sub(t) + 30*time.Second
				p := dstPages[4]
				window = append(window, dstEv(t, d, map[string]any{"app": "Google-chrome", "title": p.title + " - Google Chrome"}))
				web = append(web, dstEv(t.Add(-2*time.Second), d+time.Second, map[string]any{"url": p.url, "title": p.title, "audible": true, "incognito": false, "tabCount": 7}))
				t = t.Add(d)
				continue
			}
			d = min(d, end.Sub(t))
			if a.app == "Google-chrome" {
				p := dstPages[rng.IntN(len(dstPages))]
				window = append(window, dstEv(t, d, map[string]any{"app": a.app, "title": p.title + " - Google Chrome"}))
				// The tab: from a little before or after the window's focus
				// to a little before or after its end; sometimes two tabs.
				ts := t.Add(time.Duration(rng.IntN(4000)-2000) * time.Millisecond)
				te := t.Add(d).Add(time.Duration(rng.IntN(4000)-2000) * time.Millisecond)
				if rng.IntN(4) == 0 && te.Sub(ts) > 20*time.Second {
					mid := ts.Add(te.Sub(ts) / 2)
					q := dstPages[rng.IntN(len(dstPages))]
					web = append(web, dstEv(ts, mid.Sub(ts), map[string]any{"url": p.url, "title": p.title, "audible": false, "incognito": false, "tabCount": 5}))
					ts, p = mid, q
				}
				web = append(web, dstEv(ts, te.Sub(ts), map[string]any{"url": p.url, "title": p.title, "audible": p.url == dstPages[4].url, "incognito": false, "tabCount": 5}))
			} else {
				window = append(window, dstEv(t, d, map[string]any{"app": a.app, "title": a.titles[rng.IntN(len(a.titles))]}))
			}
			gap := time.Duration(rng.IntN(1500)) * time.Millisecond // flood closes these
			if rng.IntN(15) == 0 {
				gap = time.Duration(6+rng.IntN(60)) * time.Second // and not these
			}
			t = t.Add(d + gap)
		}
	}
	return window, afk, web
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// insertDST writes dstWeek into host's buckets of an empty server.
func (r *recorder) insertDST(host string) error {
	var existing map[string]any
	if _, err := r.get("/api/0/buckets/", &existing); err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("the server already holds %d buckets: -insert-dst wants an empty one", len(existing))
	}
	window, afk, web := dstWeek()
	for _, b := range []struct {
		id, client, typ string
		events          []dstEvent
	}{
		{"aw-watcher-window_" + host, "aw-watcher-window", "currentwindow", window},
		{"aw-watcher-afk_" + host, "aw-watcher-afk", "afkstatus", afk},
		{"aw-watcher-web-chrome_" + host, "aw-client-web", "web.tab.current", web},
	} {
		path := "/api/0/buckets/" + url.PathEscape(b.id)
		meta, _ := realaw.Marshal(map[string]string{"client": b.client, "type": b.typ, "hostname": host})
		if err := r.do("POST", path, meta, nil); err != nil {
			return err
		}
		body, err := realaw.Marshal(b.events)
		if err != nil {
			return err
		}
		if err := r.do("POST", path+"/events", body, nil); err != nil {
			return err
		}
	}
	return nil
}
