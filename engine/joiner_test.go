package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// TestFrameTitleJoiners: a window title with a zero-width joiner between
// two letters (as the real aw-server hands it on: "zero\u200dwidth") and
// a tab title with an emoji ZWJ sequence and a Persian word, POSTed to
// the simulator, reach the frame (nowframe_build, both modes) and the
// timeline with the joiner between letters gone and the emoji sequence
// and the non-joiner of the Persian word whole.
func TestFrameTitleJoiners(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	sim := awsim.New(awsim.Options{Hostname: "h", Now: func() time.Time { return now }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	for id, typ := range map[string]string{"aw-watcher-window_h": aw.TypeWindow, "aw-watcher-afk_h": aw.TypeAFK, "aw-watcher-web-chrome_h": aw.TypeWeb} {
		poster(t, srv.URL)("/api/0/buckets/"+id, fmt.Sprintf(`{"client":"test","type":%q,"hostname":"h"}`, typ))
	}
	ev := func(data string) string {
		return fmt.Sprintf(`[{"timestamp":%q,"duration":599,"data":%s}]`, now.Add(-10*time.Minute).Format(time.RFC3339), data)
	}
	const (
		window  = "zero\u200dwidth notes - Google Chrome"
		tab     = "Pair 👩\u200d💻 with 👨\u200d👩\u200d👧 می\u200cخواهم"
		wantWin = "zerowidth notes - Google Chrome"
	)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	poster(t, srv.URL)("/api/0/buckets/aw-watcher-afk_h/events", ev(`{"status":"not-afk"}`))
	poster(t, srv.URL)("/api/0/buckets/aw-watcher-window_h/events", ev(`{"app":"Google-chrome","title":`+js(window)+`}`))
	poster(t, srv.URL)("/api/0/buckets/aw-watcher-web-chrome_h/events", ev(`{"url":"https://notes.example/","title":`+js(tab)+`,"audible":false,"incognito":false}`))

	c := config.Defaults()
	c.AW.URL, c.AW.Timeout = srv.URL, 5*time.Second
	c.Activity.Timezone = "UTC"
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)

	for _, args := range []string{`{}`, `{"response_mode":"compact"}`} {
		out := e.Call(context.Background(), toolbus.Request{Name: "nowframe_build", Args: json.RawMessage(args)})
		if out.Err != nil {
			t.Fatalf("%s: %+v", args, out.Err)
		}
		var env struct {
			Result struct {
				Now struct {
					Window  struct{ Title string } `json:"window"`
					Browser struct{ Title string } `json:"browser"`
				} `json:"now"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out.Body, &env); err != nil {
			t.Fatal(err)
		}
		if got := env.Result.Now.Window.Title; got != wantWin {
			t.Errorf("%s: window title %+q, want %+q", args, got, wantWin)
		}
		if got := env.Result.Now.Browser.Title; got != tab {
			t.Errorf("%s: tab title %+q, want it whole: %+q", args, got, tab)
		}
		noJoinerBetweenLetters(t, args, out.Body)
	}
	out := e.Call(context.Background(), toolbus.Request{Name: "activity_timeline", Args: json.RawMessage(`{"period":"today","min_block_s":0}`)})
	if out.Err != nil {
		t.Fatalf("timeline: %+v", out.Err)
	}
	if !strings.Contains(string(out.Body), wantWin) {
		t.Errorf("timeline lacks %q: %s", wantWin, out.Body)
	}
	noJoinerBetweenLetters(t, "timeline", out.Body)
}

// noJoinerBetweenLetters fails when a decoded string of the answer has a
// zero-width joiner or a non-joiner between two Latin letters.
func noJoinerBetweenLetters(t *testing.T, what string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	walkStrings("", v, func(path, s string) {
		rs := []rune(s)
		for i := 1; i+1 < len(rs); i++ {
			if (rs[i] == '\u200d' || rs[i] == '\u200c') && unicode.Is(unicode.Latin, rs[i-1]) && unicode.Is(unicode.Latin, rs[i+1]) {
				t.Errorf("%s: a joiner between letters at %s: %+q", what, path, s)
			}
		}
	})
}
