package activity

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/nowframe"
)

// privateDesktop is an hour of a desktop with everything the privacy
// settings hide: an excluded app, a password manager, a private browser
// window and tab, a password vault in a normal window, a URL with a token,
// and a title a rule rewrites.
func privateDesktop(t *testing.T) (*simEnv, *clock) {
	t.Helper()
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := desktopEnv(t, at, [2]string{"aw-watcher-window_testhost", aw.TypeWindow}, [2]string{"aw-watcher-afk_testhost", aw.TypeAFK},
		[2]string{"aw-watcher-web-chrome_testhost", aw.TypeWeb})
	m := func(min int) time.Time { return at.Add(time.Duration(min) * time.Minute) }
	insert(t, env, "aw-watcher-afk_testhost", ev1(m(0), 3600, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(m(0), 600, `{"app":"Code","title":"main.go — awbridge"}`),
		ev1(m(10), 600, `{"app":"Secret App","title":"plans for the merger"}`),
		ev1(m(20), 600, `{"app":"Google-chrome","title":"Bank - Google Chrome (Incognito)"}`),
		ev1(m(30), 600, `{"app":"Google-chrome","title":"Mail - Google Chrome"}`),
		ev1(m(40), 300, `{"app":"KeePassXC","title":"db.kdbx - KeePassXC"}`),
		ev1(m(45), 300, `{"app":"Google-chrome","title":"My vault - Google Chrome"}`),
		ev1(m(50), 600, `{"app":"Code","title":"customer-acme.go — awbridge"}`))
	insert(t, env, "aw-watcher-web-chrome_testhost",
		ev1(m(20), 600, `{"url":"https://bank.example/account","title":"Bank","incognito":true,"audible":false}`),
		ev1(m(30), 600, `{"url":"https://mail.example.com/inbox?token=abc123","title":"Mail","incognito":false,"audible":false}`),
		ev1(m(45), 300, `{"url":"https://vault.bitwarden.com/#/vault","title":"My vault","incognito":false,"audible":false}`))
	return env, clk
}

// desktopEnv is a simulator of host "testhost" holding these buckets (id,
// type), empty, its clock an hour after at, with a client.
func desktopEnv(t *testing.T, at time.Time, buckets ...[2]string) (*simEnv, *clock) {
	t.Helper()
	clk := &clock{t: at.Add(time.Hour)}
	sim := awsim.New(awsim.Options{Hostname: "testhost", Now: clk.now})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	env := &simEnv{srv: srv, sim: sim, src: testSource()}
	for _, b := range buckets {
		createBucket(t, env, b[0], b[1])
	}
	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	env.client = c
	return env, clk
}

// createBucket creates a bucket of the host "testhost" as a watcher does.
func createBucket(t *testing.T, env *simEnv, id, typ string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"client": "test", "type": typ, "hostname": "testhost"})
	resp, err := http.Post(env.srv.URL+"/api/0/buckets/"+id, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create %s: %s", id, resp.Status)
	}
}

func privacySettings(t *testing.T) nowframe.Privacy {
	t.Helper()
	rule := func(pattern, repl string) config.Rule {
		return config.Rule{Pattern: regexp.MustCompile(pattern), Replacement: repl}
	}
	return nowframe.Privacy{ExcludeApps: []string{"secret app"},
		TitleRules: []config.Rule{rule(`acme`, "[client]")},
		URLRules:   []config.Rule{rule(`mail\.example\.com`, "mail.example.org")}}
}

// TestPrivateByDefault checks every string of every tool's answer over
// the private desktop: excluded apps and password managers are one
// "excluded" entry with their time only, private tabs and vaults never
// appear, titles under them are withheld, URLs are reduced to domains
// (their queries gone), and the title and URL rules apply.
func TestPrivateByDefault(t *testing.T) {
	env, clk := privateDesktop(t)
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc, Privacy: privacySettings(t)})
	ctx := context.Background()
	var all []string
	collect := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, string(b))
	}
	sums := map[string]*Summary{}
	for _, g := range []string{GroupByApp, GroupByTitle, GroupByDomain, GroupByCategory} {
		sum, err := s.Summary(ctx, SummaryQuery{Period: "last_2h", GroupBy: g, Limit: 20, IncludeAFK: true})
		if err != nil {
			t.Fatal(err)
		}
		sums[g] = sum
		collect(sum)
	}
	zero := 0
	tl, err := s.Timeline(ctx, TimelineQuery{Period: "last_2h", MinBlockS: &zero})
	if err != nil {
		t.Fatal(err)
	}
	collect(tl)
	h, err := s.History(ctx, HistoryQuery{Minutes: 120})
	if err != nil {
		t.Fatal(err)
	}
	collect(h)
	text := strings.Join(all, "\n")
	for _, secret := range []string{"Secret App", "merger", "Bank", "bank.example", "token", "abc123", "KeePassXC", "kdbx",
		"vault.bitwarden", "My vault", "acme", "mail.example.com"} {
		if strings.Contains(text, secret) {
			t.Errorf("%q appears in an answer", secret)
		}
	}
	apps := got(sums[GroupByApp].Top, false)
	if apps[KeyExcluded] != 900 || apps["Google-chrome"] != 1500 || apps["Code"] != 1200 {
		t.Errorf("apps: %v, want excluded 900 s (an excluded app and a password manager)", apps)
	}
	titles := got(sums[GroupByTitle].Top, true)
	if titles["Google-chrome | "+KeyWithheld] != 900 || titles[KeyExcluded+" | "] != 900 || titles["Code | customer-[client].go — awbridge"] != 600 {
		t.Errorf("titles: %v", titles)
	}
	if d := got(sums[GroupByDomain].Top, false); len(d) != 1 || d["mail.example.org"] != 600 {
		t.Errorf("domains: %v, want the rewritten mail domain only", d)
	}
	// Paths only where titles were asked for.
	if u := got(sums[GroupByTitle].TopURLs, false); len(u) != 1 || u["https://mail.example.org/inbox"] != 600 {
		t.Errorf("urls: %v", u)
	}
	for i, a := range all {
		if strings.Contains(a, "/inbox") && i != 1 {
			t.Errorf("a URL path outside group_by title: %s", a)
		}
	}
	if c := got(sums[GroupByCategory].Top, false); c[KeyExcluded] != 900 {
		t.Errorf("categories: %v, want the excluded apps' time as excluded", c)
	}
	for _, b := range tl.Blocks {
		if b.App == "Google-chrome" && b.Title == "" && !b.Withheld {
			t.Errorf("a browser block without a title that is not marked withheld: %+v", b)
		}
	}
	var tabs int
	for _, sw := range h.Switches {
		if sw.Tab != nil {
			tabs++
			if sw.Tab.Domain != "mail.example.org" {
				t.Errorf("a switch shows the tab %+v", sw.Tab)
			}
		}
	}
	if tabs != 1 {
		t.Errorf("%d switches show a tab, want the one normal tab", tabs)
	}
}

// TestAFKEntryByTitle: with include_afk, the AFK entry of a summary by
// title names no app.
func TestAFKEntryByTitle(t *testing.T) {
	if e := entries([]ranked{{gkey{a: afkKey}, 2e6}}, 4e6, true)[0]; e != (Entry{Key: KeyAFK, AFK: true, DurationS: 2, Share: 0.5}) {
		t.Errorf("AFK entry %+v", e)
	}
}

// TestWithheldWindowsCategorizedByApp: a private window's title and a
// title under a private tab or a vault never show, nor does the category
// their title matched: the summary's categories and a category drill
// named "Finance > Banking" for the private window's "Bank" (and
// "Secrets" for the vault's title). A withheld window is categorized by
// its app alone.
func TestWithheldWindowsCategorizedByApp(t *testing.T) {
	env, clk := privateDesktop(t)
	classes := `[{"name":["Finance","Banking"],"rule":{"type":"regex","regex":"Bank"}},` +
		`{"name":["Secrets"],"rule":{"type":"regex","regex":"My vault"}},` +
		`{"name":["Browsing"],"rule":{"type":"regex","regex":"Google-chrome"}}]`
	resp, err := http.Post(env.srv.URL+"/api/0/settings/classes", "application/json", strings.NewReader(classes))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s := NewService(ServiceOptions{AW: env.client, Source: env.src, Now: clk.now, Zone: utc, Privacy: privacySettings(t)})
	sum, err := s.Summary(t.Context(), SummaryQuery{Period: "last_2h", GroupBy: GroupByCategory, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	cats := got(sum.Top, false)
	if cats["Finance > Banking"] != 0 || cats["Secrets"] != 0 || cats["Browsing"] != 1500 {
		t.Errorf("categories %v: want Browsing 1500 s (the withheld windows by their app), no Finance > Banking nor Secrets", cats)
	}
	for _, c := range []string{"Finance > Banking", "Secrets"} {
		d, err := s.Summary(t.Context(), SummaryQuery{Period: "last_2h", GroupBy: GroupByTitle, Category: c, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if d.ActiveS != 0 {
			t.Errorf("category %s holds %.0f s of withheld windows: %v", c, d.ActiveS, got(d.Top, true))
		}
	}
}
