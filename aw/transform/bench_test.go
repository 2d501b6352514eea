package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
)

// week is a generated week of one desktop's raw events, as the client
// returns them (newest first).
type week struct {
	window, afk, web []aw.Event
}

// genWeek plays a deterministic person through seven days: at the desk
// 09:00-19:00 with breaks, switching windows every few seconds (nwin
// window events in all), a Chrome tab event under every Chrome window and
// now and then a background one, the AFK watcher's not-afk and afk
// periods. About 2,000 distinct titles over a dozen apps.
func genWeek(nwin int) week {
	rng := rand.New(rand.NewPCG(2026, 11))
	apps := []string{"Code", "Google-chrome", "Gnome-terminal", "Slack", "Spotify", "Thunderbird", "obsidian", "zoom", "GIMP", "1Password", "Nautilus", "libreoffice-writer"}
	weights := []int{30, 25, 12, 10, 3, 4, 5, 3, 2, 1, 3, 2}
	titles := make([][]string, len(apps))
	for i, a := range apps {
		n := 20 + rng.IntN(300)
		for j := range n {
			titles[i] = append(titles[i], fmt.Sprintf("%s document %d — project %d — %s", []string{"●", "", ""}[j%3], j, j%7, a))
		}
	}
	pick := func() int {
		n := rng.IntN(100)
		for i, w := range weights {
			if n < w {
				return i
			}
			n -= w
		}
		return 0
	}
	var w week
	id := int64(0)
	mk := func(at time.Time, dur time.Duration, data any) aw.Event {
		id++
		b, _ := json.Marshal(data)
		i := id
		return aw.Event{ID: &i, Timestamp: at.UTC().Truncate(time.Millisecond), Duration: dur.Seconds(), Data: b}
	}
	type win struct {
		App   string `json:"app"`
		Title string `json:"title"`
	}
	type tab struct {
		URL       string `json:"url"`
		Title     string `json:"title"`
		Audible   bool   `json:"audible"`
		Incognito bool   `json:"incognito"`
		TabCount  int    `json:"tabCount"`
	}
	perDay := (nwin + 6) / 7
	start := time.Date(2026, 11, 16, 9, 0, 0, 0, time.UTC)
	for day := range 7 {
		t := start.AddDate(0, 0, day)
		active := t
		for n := 0; n < perDay && len(w.window) < nwin; {
			// an active stretch, then a break
			stretch := time.Duration(20+rng.IntN(70)) * time.Minute
			end := t.Add(stretch)
			for ; t.Before(end) && n < perDay && len(w.window) < nwin; n++ {
				a := pick()
				d := time.Duration(1000+rng.IntN(8000)) * time.Millisecond
				title := titles[a][rng.IntN(len(titles[a]))]
				w.window = append(w.window, mk(t, d, win{apps[a], title}))
				if apps[a] == "Google-chrome" {
					site := rng.IntN(60)
					w.web = append(w.web, mk(t.Add(-time.Duration(rng.IntN(3000))*time.Millisecond), d+time.Duration(rng.IntN(4000))*time.Millisecond,
						tab{fmt.Sprintf("https://www.site%d.example/page/%d?q=%d", site, rng.IntN(40), rng.IntN(5)), title, site == 7, false, 5 + rng.IntN(20)}))
				}
				t = t.Add(d + time.Duration(rng.IntN(1200))*time.Millisecond)
			}
			w.afk = append(w.afk, mk(active, t.Sub(active)+time.Second, map[string]string{"status": "not-afk"}))
			away := time.Duration(4+rng.IntN(25)) * time.Minute
			w.afk = append(w.afk, mk(t.Add(time.Second+time.Millisecond), away, map[string]string{"status": "afk"}))
			t = t.Add(away + 2*time.Second)
			active = t
		}
	}
	for _, l := range [][]aw.Event{w.window, w.afk, w.web} { // newest first, as aw-server sends them
		slices.SortStableFunc(l, func(a, b aw.Event) int { return b.Timestamp.Compare(a.Timestamp) })
	}
	return w
}

func decodeWeek(w week) transform.Input {
	var d transform.Decoder
	events := func(evs []aw.Event) []transform.Event {
		out := make([]transform.Event, len(evs))
		for i, e := range evs {
			out[i] = d.Event(e)
		}
		return out
	}
	return transform.Input{Window: events(w.window), AFK: events(w.afk),
		Browsers: []transform.Browser{{Name: "chrome", Events: events(w.web)}}}
}

// canonical is the canonical query and its time per app.
func canonical(in transform.Input) (transform.Result, map[string]int64) {
	r, _ := transform.CanonicalContext(context.Background(), in, transform.Options{})
	apps := map[string]int64{}
	for _, e := range r.Events {
		app, _ := e.Data.Str("app")
		apps[app] += e.Duration
	}
	return r, apps
}

func TestGenWeek(t *testing.T) {
	w := genWeek(50_000)
	if len(w.window) != 50_000 {
		t.Errorf("%d window events", len(w.window))
	}
	got, apps := canonical(decodeWeek(w))
	if len(apps) != 12 || len(got.Browser) < 5_000 || len(got.NotAFK) < 50 {
		t.Errorf("%d apps, %d tab events, %d active periods", len(apps), len(got.Browser), len(got.NotAFK))
	}
	t.Logf("%d window, %d afk, %d web events; %d canonical, %d browser", len(w.window), len(w.afk), len(w.web), len(got.Events), len(got.Browser))
}

// BenchmarkDecodeWeek converts a week of client events (50,000 window
// events plus AFK and web) into transform events.
func BenchmarkDecodeWeek(b *testing.B) {
	w := genWeek(50_000)
	b.ReportAllocs()
	for b.Loop() {
		decodeWeek(w)
	}
}

// BenchmarkCanonicalWeek runs the canonical query and the top apps over a
// decoded week.
func BenchmarkCanonicalWeek(b *testing.B) {
	in := decodeWeek(genWeek(50_000))
	b.ReportAllocs()
	for b.Loop() {
		canonical(in)
	}
}

// BenchmarkWeekFromClient is both: from the client's events to the top
// apps.
func BenchmarkWeekFromClient(b *testing.B) {
	w := genWeek(50_000)
	b.ReportAllocs()
	for b.Loop() {
		canonical(decodeWeek(w))
	}
}
