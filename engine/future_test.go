package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// TestFutureEventDoesNotPinNow: any local program can POST an event dated
// 2099 to ActivityWatch, which then lists it as the newest event for
// ever. The frame must show the real window, tab and AFK state from the
// heartbeats that keep arriving, not stale, and flag the buckets holding
// the future events. One future event per bucket is read beside the real
// newest; three of them fill the read, so the current event is read up to
// now.
func TestFutureEventDoesNotPinNow(t *testing.T) {
	for _, planted := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d future events", planted), func(t *testing.T) {
			var (
				mu  sync.Mutex
				now = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
			)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			sim := awsim.New(awsim.Options{Hostname: "desk", Now: clock})
			srv := httptest.NewServer(sim)
			t.Cleanup(srv.Close)
			post := poster(t, srv.URL)
			const (
				win = "aw-watcher-window_desk"
				afk = "aw-watcher-afk_desk"
				web = "aw-watcher-web-chrome_desk"
			)
			for id, typ := range map[string]string{win: aw.TypeWindow, afk: aw.TypeAFK, web: aw.TypeWeb} {
				post("/api/0/buckets/"+id, fmt.Sprintf(`{"client":"test","type":%q,"hostname":"desk"}`, typ))
			}
			heartbeat := func(id, data string) {
				t.Helper()
				post("/api/0/buckets/"+id+"/heartbeat?pulsetime=10", fmt.Sprintf(`{"timestamp":%q,"duration":0,"data":%s}`,
					clock().Format(time.RFC3339Nano), data))
			}
			beat := func() {
				heartbeat(win, `{"app":"Google-chrome","title":"Real work - Google Chrome"}`)
				heartbeat(afk, `{"status":"not-afk"}`)
				heartbeat(web, `{"url":"https://real.example/page","title":"Real work","audible":false,"incognito":false}`)
			}
			advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
			for range 10 {
				beat()
				advance(time.Second)
			}
			// The attacker's events, dated 2099, hours apart.
			var winEvs, afkEvs, webEvs []string
			for i := range planted {
				ts := time.Date(2099, 1, 1, i, 0, 0, 0, time.UTC).Format(time.RFC3339)
				winEvs = append(winEvs, fmt.Sprintf(`{"timestamp":%q,"duration":60,"data":{"app":"Evil","title":"pinned"}}`, ts))
				afkEvs = append(afkEvs, fmt.Sprintf(`{"timestamp":%q,"duration":60,"data":{"status":"afk"}}`, ts))
				webEvs = append(webEvs, fmt.Sprintf(`{"timestamp":%q,"duration":60,"data":{"url":"https://evil.example/","title":"pinned"}}`, ts))
			}
			post("/api/0/buckets/"+win+"/events", "["+strings.Join(winEvs, ",")+"]")
			post("/api/0/buckets/"+afk+"/events", "["+strings.Join(afkEvs, ",")+"]")
			post("/api/0/buckets/"+web+"/events", "["+strings.Join(webEvs, ",")+"]")
			// Real heartbeats go on arriving.
			for range 5 {
				beat()
				advance(time.Second)
			}

			c := config.Defaults()
			c.AW.URL, c.AW.Timeout = srv.URL, 5*time.Second
			e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build"})
			if out.Err != nil {
				t.Fatalf("%+v", out.Err)
			}
			var f struct {
				Now struct {
					Stale  bool `json:"stale"`
					Window struct {
						App     string  `json:"app"`
						Title   string  `json:"title"`
						Age     float64 `json:"age_seconds"`
						Clamped bool    `json:"future_clamped"`
					} `json:"window"`
					Browser struct {
						URL string `json:"url"`
					} `json:"browser"`
					AFK struct {
						Status string `json:"status"`
					} `json:"afk"`
					FutureBuckets []string `json:"future_buckets"`
					Notes         []string `json:"notes"`
				} `json:"now"`
			}
			if err := json.Unmarshal(out.Body, &f); err != nil {
				t.Fatal(err)
			}
			n := f.Now
			if n.Stale || n.Window.App != "Google-chrome" || n.Window.Title != "Real work - Google Chrome" || n.Window.Clamped ||
				n.Window.Age > 2 || n.Browser.URL != "https://real.example/page" || n.AFK.Status != "not-afk" {
				t.Errorf("the frame does not show the real activity: %s", out.Body)
			}
			if want := []string{afk, web, win}; !slices.Equal(n.FutureBuckets, want) {
				t.Errorf("future_buckets = %q, want %q", n.FutureBuckets, want)
			}
			if !strings.Contains(strings.Join(n.Notes, "\n"), "start in the future") {
				t.Errorf("no note flags the future events: %q", n.Notes)
			}
			if strings.Contains(string(out.Body), "Evil") || strings.Contains(string(out.Body), "evil.example") {
				t.Errorf("the future events show: %s", out.Body)
			}
		})
	}
}
