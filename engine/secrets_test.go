package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/redact"
)

// TestHiddenSecretsInTitlesAreMasked: a key in a window or tab title,
// glued to the word before it by a zero-width space or an escape sequence
// (which sanitizing removes), is masked in the frame; a URL's path
// parameters (;jsessionid=...) are dropped with its query.
func TestHiddenSecretsInTitlesAreMasked(t *testing.T) {
	const key = "sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0"
	body, w, b := buildFrame(t, `{"app":"Google-chrome","title":"key\u200b`+key+` - Google Chrome"}`,
		`{"url":"https://shop.example.com/cart;jsessionid=0A1B2C3D4E5F?x=1","title":"token\u001b[1m`+key+`","audible":false,"incognito":false,"tabCount":3}`)
	if strings.Contains(body, key[7:]) || strings.Contains(body, "jsessionid") || strings.Contains(body, "0A1B2C3D4E5F") {
		t.Fatalf("a secret reached the frame: %s", body)
	}
	if w.Title != "keysk-…[REDACTED] - Google Chrome" || b.Title != "tokensk-…[REDACTED]" || b.URL != "https://shop.example.com/cart" {
		t.Fatalf("window title %q, tab title %q, url %q", w.Title, b.Title, b.URL)
	}
}

// TestTitleSecretsBehindIgnorablesOrAtTheCapAreMasked: keys split by
// invisible characters outside Cc and Cf (a combining grapheme joiner, an
// emoji variation selector, a Hangul filler) are masked in the frame and
// the characters removed; a key that straddles the title's 300-rune cap
// shows none of its characters.
func TestTitleSecretsBehindIgnorablesOrAtTheCapAreMasked(t *testing.T) {
	const ghp = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	const ant = "sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGG"
	window := `ghp_abcdefghij\u034fklmnopqrstuvwxyz0123456789 AKIA\ufe0fIOSFODNN7EXAMPLE sk-ant-api03-AAAA\u3164BBBBCCCCDDDDEEEEFFFFGGGG`
	tab := strings.Repeat("x", 280) + " " + ghp
	body, w, b := buildFrame(t, `{"app":"Google-chrome","title":"`+window+`"}`,
		`{"url":"https://example.com/","title":"`+tab+`","audible":false,"incognito":false,"tabCount":1}`)
	for _, part := range []string{ghp[4:], ghp[4:15], "IOSFODNN7EXAMPLE", ant[len(ant)-16:], "klmnopqrstuvwxyz"} {
		if strings.Contains(body, part) {
			t.Errorf("%q reached the frame: %s", part, body)
		}
	}
	if w.Title != "ghp_…[REDACTED] AKIA…[REDACTED] sk-…[REDACTED]" {
		t.Errorf("window title %q", w.Title)
	}
	if !strings.HasPrefix(b.Title, strings.Repeat("x", 280)+" ghp_…[REDACTED]") {
		t.Errorf("tab title %q", b.Title)
	}
}

type frameTitles struct{ Title, URL string }

// buildFrame serves a window and a tab event with the given data over the
// recorded fixtures and returns the frame nowframe_build answers (cleaned
// as a client reads it), and its window and tab.
func buildFrame(t *testing.T, window, tab string) (string, frameTitles, frameTitles) {
	t.Helper()
	at := awfixture.T.Add(-500 * time.Millisecond).Format("2006-01-02T15:04:05.000000+00:00")
	events := func(data string) string {
		return fmt.Sprintf(`[{"id":9,"timestamp":%q,"duration":0.4,"data":%s}]`, at, data)
	}
	served := map[string]string{
		"/api/0/buckets/aw-watcher-window_testhost/events":     events(window),
		"/api/0/buckets/aw-watcher-web-chrome_testhost/events": events(tab),
	}
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	fs := awfixture.NewServer(xs)
	aw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := served[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
			return
		}
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(aw.Close)
	c := config.Defaults()
	c.AW.URL, c.AW.Timeout = aw.URL, 2*time.Second
	now := awfixture.T
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)

	out := e.Call(context.Background(), toolbus.Request{Name: "nowframe_build", Args: json.RawMessage(`{"max_age_ms":0}`)})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	var env struct {
		Result struct {
			Now struct {
				Window  frameTitles
				Browser frameTitles
			}
		}
	}
	if err := json.Unmarshal(out.Body, &env); err != nil {
		t.Fatal(err)
	}
	return redact.Clean(string(out.Body)), env.Result.Now.Window, env.Result.Now.Browser
}
