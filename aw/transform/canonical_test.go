package transform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/aw/transform"
)

const host = "testhost"

// day0 is the start of the simulated day.
var day0 = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// simDay is a simulator holding a day of the generator's activity.
func simDay(t *testing.T) *httptest.Server {
	t.Helper()
	sim := awsim.New(awsim.Options{Hostname: host, Seed: 11, Now: func() time.Time { return day0.Add(24 * time.Hour) }})
	for h := 1; h <= 24; h++ {
		sim.Seed(day0.Add(time.Duration(h) * time.Hour))
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv
}

// webUIQuery is the query text ActivityWatch's web UI sends for a desktop
// (aw-webui src/queries.ts: canonicalEvents with browserEvents), returning
// its events, not_afk and browser_events.
func webUIQuery(opt transform.Options, browsers []transform.BrowserBucket, stopwatch string) string {
	q := []string{`events = flood(query_bucket("aw-watcher-window_` + host + `"));`,
		`not_afk = flood(query_bucket("aw-watcher-afk_` + host + `"));`,
		`not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);`}
	if p := opt.AlwaysActivePattern; p != "" {
		q = append(q, `not_treat_as_afk = filter_keyvals_regex(events, "app", "`+p+`");`,
			`not_afk = period_union(not_afk, not_treat_as_afk);`,
			`not_treat_as_afk = filter_keyvals_regex(events, "title", "`+p+`");`,
			`not_afk = period_union(not_afk, not_treat_as_afk);`)
	}
	q = append(q, `browser_events = [];`)
	for _, b := range browsers {
		names, pattern, _ := transform.BrowserApps(b.Browser)
		nj, _ := json.Marshal(names)
		pj := `"` + strings.ReplaceAll(pattern, `"`, `\"`) + `"` // what reaches aw-core
		q = append(q, fmt.Sprintf(`events_%[1]s = flood(query_bucket("%[2]s"));
			window_%[1]s = filter_keyvals(events, "app", %[3]s);
			window_%[1]s_re = filter_keyvals_regex(events, "app", %[4]s);
			window_%[1]s = sort_by_timestamp(concat(window_%[1]s, window_%[1]s_re));
			events_%[1]s = filter_period_intersect(events_%[1]s, window_%[1]s);
			events_%[1]s = split_url_events(events_%[1]s);
			browser_events = concat(browser_events, events_%[1]s);
			browser_events = sort_by_timestamp(browser_events);`, b.Browser, b.BucketID, nj, pj))
	}
	if !opt.IgnoreAudible {
		q = append(q, `audible_events = filter_keyvals(browser_events, "audible", [true]);`, `not_afk = period_union(not_afk, audible_events);`)
	}
	if !opt.KeepAFK {
		q = append(q, `events = filter_period_intersect(events, not_afk);`)
	}
	if stopwatch != "" {
		q = append(q, `stopwatch_events = query_bucket("`+stopwatch+`");`, `events = union_no_overlap(stopwatch_events, events);`)
	} else {
		q = append(q, `stopwatch_events = [];`)
	}
	q = append(q, `events = categorize(events, `+categoriesJSON(opt.Classes)+`);`,
		`browser_events = split_url_events(browser_events);`,
		`title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));`,
		`app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));`,
		`cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));`,
		`browser_domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));`,
		`browser_titles = sort_by_duration(merge_events_by_keys(browser_events, ["title"]));`,
		`RETURN = {"events": events, "not_afk": not_afk, "browser_events": browser_events, "title_events": title_events,
			"app_events": app_events, "cat_events": cat_events, "browser_domains": browser_domains, "browser_titles": browser_titles};`)
	return strings.Join(q, "\n")
}

// categoriesJSON is the web UI's classes_for_query as it writes them into
// the query.
func categoriesJSON(cs transform.Classes) string {
	if cs == nil {
		cs = transform.DefaultClasses()
	}
	var out []any
	for _, c := range cs {
		rule := map[string]any{"type": "none"}
		if c.Rule.Regex != "" {
			rule = map[string]any{"type": "regex", "regex": c.Rule.Regex}
			if c.Rule.IgnoreCase {
				rule["ignore_case"] = true
			}
		}
		out = append(out, []any{c.Name, rule})
	}
	b, _ := json.Marshal(out)
	return strings.ReplaceAll(string(b), `\\`, `\`)
}

type jsonEvent struct {
	ID        *int64         `json:"id"`
	Timestamp time.Time      `json:"timestamp"`
	Duration  float64        `json:"duration"`
	Data      map[string]any `json:"data"`
}

func runQuery(t *testing.T, base, query string, start, end time.Time) map[string][]jsonEvent {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": []string{query}, "timeperiods": []string{start.Format(time.RFC3339) + "/" + end.Format(time.RFC3339)}})
	resp, err := http.Post(base+"/api/0/query/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string][]jsonEvent
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out) != 1 {
		t.Fatalf("query: %d, %v", resp.StatusCode, err)
	}
	return out[0]
}

// fetch reads a bucket's raw events as the bridge does.
func fetch(t *testing.T, c *aw.Client, d *transform.Decoder, id string, start, end time.Time) []transform.Event[transform.Fields] {
	t.Helper()
	evs, err := c.Events(context.Background(), id, aw.EventQuery{Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	return d.Events(evs)
}

// same compares Canonical's events with the query's: period, id and data
// (the category by its label).
func same(t *testing.T, what string, got []transform.Event[transform.Fields], cs transform.Classes, want []jsonEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events, the query has %d", what, len(got), len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		wid := int64(0)
		if w.ID != nil {
			wid = *w.ID
		}
		if g.ID != wid || g.Start != w.Timestamp.UnixMicro() || g.Duration != transform.Micros(w.Duration) {
			t.Errorf("%s[%d]: id %d %d µs from %d, the query's id %d %d µs from %d", what, i, g.ID, g.Duration, g.Start, wid, transform.Micros(w.Duration), w.Timestamp.UnixMicro())
			return
		}
		n := 0
		for k, v := range w.Data {
			if k == "$category" {
				var name []string
				for _, x := range v.([]any) {
					name = append(name, x.(string))
				}
				if label := cs.Label(g.Data.Class()); label != transform.CategoryName(name) {
					t.Errorf("%s[%d]: category %q, the query's %q", what, i, label, transform.CategoryName(name))
				}
				continue
			}
			n++
			f, ok := g.Data.Get(k)
			want, _ := json.Marshal(v)
			if s, isStr := v.(string); isStr {
				want = []byte(s)
			}
			if !ok || f.Value != string(want) {
				t.Errorf("%s[%d]: %s = %q, the query's %q", what, i, k, f.Value, want)
			}
		}
		if g.Data.Len() != n {
			t.Errorf("%s[%d]: %d keys, the query's %d", what, i, g.Data.Len(), n)
		}
	}
}

// TestCanonicalMatchesQuery runs the web UI's canonical query through the
// simulator's query endpoint and Canonical on the raw events of the same
// day, and compares every event.
func TestCanonicalMatchesQuery(t *testing.T) {
	srv := simDay(t)
	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	buckets, err := c.Buckets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var web []string
	for id, b := range buckets {
		if b.Type == aw.TypeWeb {
			web = append(web, id)
		}
	}
	browsers := transform.BrowserBuckets(web)
	if len(browsers) != 1 {
		t.Fatalf("browser buckets %v", browsers)
	}
	custom, err := transform.ParseClasses([]byte(`[{"name":["Dev"],"rule":{"type":"regex","regex":"\\.go\\b|Code"}},
		{"name":["Dev","Terminal"],"rule":{"type":"regex","regex":"(?i)GNOME-terminal","ignore_case":true}},
		{"name":["Web"],"rule":{"type":"regex","regex":"google"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		name string
		opt  transform.Options
	}{
		{"web UI defaults", transform.Options{}},
		{"AFK kept", transform.Options{KeepAFK: true}},
		{"audible ignored", transform.Options{IgnoreAudible: true}},
		{"always active", transform.Options{AlwaysActivePattern: "Slack|KeePass"}},
		{"own classes", transform.Options{Classes: custom}},
	} {
		t.Run(c2.name, func(t *testing.T) {
			for _, span := range [][2]time.Time{{day0, day0.Add(24 * time.Hour)}, {day0.Add(9*time.Hour + 17*time.Minute), day0.Add(13 * time.Hour)}} {
				got, want := both(t, srv.URL, c, c2.opt, browsers, "", span[0], span[1])
				if len(want["events"]) < 40 || len(want["browser_events"]) < 20 || len(want["not_afk"]) < 5 {
					t.Errorf("a thin period: %d events, %d browser events, %d active", len(want["events"]), len(want["browser_events"]), len(want["not_afk"]))
				}
				compare(t, got, want)
			}
		})
	}
}

// both runs the web UI's query on the simulator and Canonical on the raw
// events of the same period.
func both(t *testing.T, base string, c *aw.Client, opt transform.Options, browsers []transform.BrowserBucket, stopwatch string, start, end time.Time) (transform.Result, map[string][]jsonEvent) {
	t.Helper()
	want := runQuery(t, base, webUIQuery(opt, browsers, stopwatch), start, end)
	var d transform.Decoder
	in := transform.Input{
		Window: fetch(t, c, &d, "aw-watcher-window_"+host, start, end),
		AFK:    fetch(t, c, &d, "aw-watcher-afk_"+host, start, end),
	}
	for _, b := range browsers {
		in.Browsers = append(in.Browsers, transform.Browser{Name: b.Browser, Events: fetch(t, c, &d, b.BucketID, start, end)})
	}
	if stopwatch != "" {
		in.Stopwatch = fetch(t, c, &d, stopwatch, start, end)
	}
	return transform.Canonical(in, opt), want
}

func compare(t *testing.T, got transform.Result, want map[string][]jsonEvent) {
	t.Helper()
	same(t, "events", got.Events, got.Classes, want["events"])
	same(t, "not_afk", got.NotAFK, got.Classes, want["not_afk"])
	same(t, "browser_events", got.Browser, got.Classes, want["browser_events"])
	titles := transform.Totals(got.Events, "app", "title")
	same(t, "title_events", titles, got.Classes, want["title_events"])
	same(t, "app_events", transform.Totals(titles, "app"), got.Classes, want["app_events"])
	same(t, "cat_events", transform.Totals(got.Events, transform.CategoryKey), got.Classes, want["cat_events"])
	same(t, "browser_domains", transform.Totals(got.Browser, "$domain"), got.Classes, want["browser_domains"])
	same(t, "browser_titles", transform.Totals(got.Browser, "title"), got.Classes, want["browser_titles"])
}

// TestCanonicalQuirks plants the cases where the web UI's query does
// surprising things and checks that Canonical does the same: a window
// matched by a browser's app names and by its pattern (its tabs count
// twice), an audible tab and an always-active window that period_union
// takes over on their own (their data is cleared), and stopwatch events
// (newest first, as the query gets them) over window events.
func TestCanonicalQuirks(t *testing.T) {
	sim := awsim.New(awsim.Options{Hostname: host, Now: func() time.Time { return day0.Add(time.Hour) }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string, body any) {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(b))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	ev := func(min, dur float64, data map[string]any) map[string]any {
		return map[string]any{"timestamp": day0.Add(time.Duration(min * float64(time.Minute))).Format(time.RFC3339Nano), "duration": dur * 60, "data": data}
	}
	buckets := map[string]string{"aw-watcher-window_" + host: "currentwindow", "aw-watcher-afk_" + host: "afkstatus",
		"aw-watcher-web-chrome_" + host: "web.tab.current", "aw-watcher-web-firefox_" + host: "web.tab.current", "aw-stopwatch_" + host: "general.stopwatch"}
	for id, typ := range buckets {
		post("/api/0/buckets/"+id, map[string]string{"client": "test", "type": typ, "hostname": host})
	}
	win := func(app, title string) map[string]any { return map[string]any{"app": app, "title": title} }
	tab := func(url string, audible bool) map[string]any {
		return map[string]any{"url": url, "title": url, "audible": audible, "incognito": false, "tabCount": 3}
	}
	post("/api/0/buckets/aw-watcher-window_"+host+"/events", []any{
		ev(0, 5, win("Code", "main.go")), ev(5, 5, win("Google-chrome", "GitHub - Google Chrome")),
		ev(15, 5, win("Google-chrome", "YouTube - Google Chrome")), ev(22, 3, win("Slack", "#dev")),
		ev(30, 4, win("org.mozilla.firefox", "docs - Firefox")), ev(34, 6, win("Code", "aw-server")),
		ev(40.05, 2, win("Code", "aw-server")), ev(50, 1, win("Code", "x")),
	})
	post("/api/0/buckets/aw-watcher-afk_"+host+"/events", []any{
		ev(0, 10, map[string]any{"status": "not-afk"}), ev(10, 20, map[string]any{"status": "afk"}), ev(30, 12, map[string]any{"status": "not-afk"}),
	})
	post("/api/0/buckets/aw-watcher-web-chrome_"+host+"/events", []any{
		ev(5, 5, tab("https://github.com/", false)), ev(15, 5, tab("https://www.youtube.com/watch?v=1", true)),
	})
	post("/api/0/buckets/aw-watcher-web-firefox_"+host+"/events", []any{ev(28, 8, tab("file:///home/a/docs.html", false))})
	post("/api/0/buckets/aw-stopwatch_"+host+"/events", []any{
		ev(35, 2, map[string]any{"label": "review", "running": false}), ev(48, 4, map[string]any{"label": "call", "running": false}),
	})
	browsers := transform.BrowserBuckets([]string{"aw-watcher-web-firefox_" + host, "aw-watcher-web-chrome_" + host})
	for _, opt := range []transform.Options{{}, {AlwaysActivePattern: "Slack"}, {KeepAFK: true}} {
		got, want := both(t, srv.URL, c, opt, browsers, "aw-stopwatch_"+host, day0, day0.Add(time.Hour))
		compare(t, got, want)
		cleared := 0
		for _, list := range [][]transform.Event[transform.Fields]{got.Events, got.Browser} {
			for _, e := range list {
				if e.Data.Len() == 0 {
					cleared++
				}
			}
		}
		if cleared == 0 {
			t.Errorf("%+v: no event lost its data", opt)
		}
		twice := 0
		for _, e := range got.Browser {
			if d, _ := e.Data.Str("$domain"); d == "file" {
				twice++
			}
		}
		if twice != 2 {
			t.Errorf("%+v: the Firefox tab counts %d times, want 2", opt, twice)
		}
	}
}
