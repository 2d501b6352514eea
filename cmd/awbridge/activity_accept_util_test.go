package main

// Helpers of the acceptance tests of issue 11 (activity_accept_test.go):
// histories placed relative to the real clock, a simulator holding them,
// ActivityWatch's web UI canonical query run through the simulator's
// query endpoint, an independent calendar to say which instants a period
// must cover, crafted time zones with a daylight-saving change on a chosen
// day, and a stdio session that tells "this tool does not exist" apart
// from every other failure.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/aw/transform"
)

// actHost is the hostname of every simulated machine and its buckets.
const actHost = "testhost"

// actSim is a simulator holding a history, with settings stored as the
// web UI stores them.
type actSim struct {
	srv *httptest.Server
	// web lists the host's browser buckets (web.tab.current).
	web []string
}

// newActSim serves h from a fresh simulator (no simulated watchers: only
// h's buckets) and stores settings through POST /api/0/settings/<key>.
func newActSim(t *testing.T, h *activitytest.History, settings map[string]any) *actSim {
	t.Helper()
	sim := awsim.New(awsim.Options{Hostname: actHost})
	ctx, cancel := context.WithTimeout(context.Background(), faultCeiling)
	defer cancel()
	if err := h.Load(ctx, sim); err != nil {
		t.Fatalf("loading the history into the simulator: %v", err)
	}
	s := &actSim{srv: httptest.NewServer(sim)}
	t.Cleanup(s.srv.Close)
	for _, b := range h.Buckets() {
		if b != nil && b.Type == aw.TypeWeb {
			s.web = append(s.web, b.ID)
		}
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		body, err := json.Marshal(settings[k])
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(s.srv.URL+"/api/0/settings/"+k, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/0/settings/%s: %d", k, resp.StatusCode)
		}
	}
	return s
}

// URL is the simulator's base URL.
func (s *actSim) URL() string { return s.srv.URL }

// actEvent builds an event [start, end) as aw-server stores it (ms).
func actEvent(start, end time.Time, data map[string]any) aw.Event {
	start = start.UTC().Truncate(time.Millisecond)
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err) // maps of strings and bools always marshal
	}
	d := end.Truncate(time.Millisecond).Sub(start)
	return aw.Event{Timestamp: start, Duration: float64(d.Milliseconds()) / 1000, Data: raw}
}

// actEmptyHistory is a history of the usual watchers' buckets, empty; a
// test appends events to them.
func actEmptyHistory() *activitytest.History {
	return &activitytest.History{
		Host:    actHost,
		Window:  &activitytest.Bucket{ID: "aw-watcher-window_" + actHost, Type: aw.TypeWindow, Client: "aw-watcher-window"},
		AFK:     &activitytest.Bucket{ID: "aw-watcher-afk_" + actHost, Type: aw.TypeAFK, Client: "aw-watcher-afk"},
		Chrome:  &activitytest.Bucket{ID: "aw-watcher-web-chrome_" + actHost, Type: aw.TypeWeb, Client: "aw-client-web"},
		Firefox: &activitytest.Bucket{ID: "aw-watcher-web-firefox_" + actHost, Type: aw.TypeWeb, Client: "aw-client-web"},
	}
}

// actDays generates days of a person's activity ending with the day of
// now in loc (activitytest's generator: sessions between about 07:30 and
// 21:30 local, AFK breaks, two browsers), cut at cutoff. With plain, what
// the privacy rules would hide is made ordinary (the password manager
// becomes a document viewer, private tabs and windows normal ones), so
// that every total can be compared with ActivityWatch's own exactly; the
// privacy test plants those itself.
func actDays(now time.Time, loc *time.Location, days int, cutoff time.Time, plain bool) *activitytest.History {
	y, m, d := now.In(loc).Date()
	h := activitytest.Week(activitytest.WeekOptions{
		Seed:         11,
		Start:        time.Date(y, m, d-(days-1), 0, 0, 0, 0, loc),
		Days:         days,
		WindowEvents: 700 * days,
		Host:         actHost,
	})
	for _, b := range h.Buckets() {
		b.Events = actCut(b.Events, cutoff)
		if !plain {
			continue
		}
		for i := range b.Events {
			var data map[string]any
			if err := json.Unmarshal(b.Events[i].Data, &data); err != nil {
				panic(err)
			}
			if data["app"] == "KeePassXC" {
				data["app"], data["title"] = "Evince", "manual.pdf — Document Viewer"
			}
			if title, ok := data["title"].(string); ok && b.Type == aw.TypeWindow {
				title = strings.Replace(title, " (Incognito)", " - Google Chrome", 1)
				data["title"] = strings.Replace(title, " — Private Browsing", " — Mozilla Firefox", 1)
			}
			if _, ok := data["incognito"]; ok {
				data["incognito"] = false
			}
			raw, err := json.Marshal(data)
			if err != nil {
				panic(err)
			}
			b.Events[i].Data = raw
		}
	}
	return h
}

// actCut drops the events that start at or after cutoff and shortens the
// ones that run past it: no event lies in the future.
func actCut(evs []aw.Event, cutoff time.Time) []aw.Event {
	out := evs[:0]
	for _, e := range evs {
		if !e.Timestamp.Before(cutoff) {
			continue
		}
		if end := e.End(); end.After(cutoff) {
			e.Duration = float64(cutoff.Sub(e.Timestamp).Milliseconds()) / 1000
		}
		out = append(out, e)
	}
	return out
}

// actLocalHourZone returns a fixed-offset IANA zone (Etc/GMT±N) in which
// the local time now is between hour:00 and hour:59.
func actLocalHourZone(t *testing.T, now time.Time, hour int) (string, *time.Location) {
	t.Helper()
	off := ((hour-now.UTC().Hour())%24 + 24) % 24
	if off > 14 {
		off -= 24
	}
	name := "Etc/GMT"
	if off != 0 {
		name = fmt.Sprintf("Etc/GMT%+d", -off) // the Etc names' signs are inverted
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %s: %v", name, err)
	}
	if got := now.In(loc).Hour(); got != hour {
		t.Fatalf("zone %s: local hour %d, want %d", name, got, hour)
	}
	return name, loc
}

// actCalendar is the test's own calendar: days start at dayStart (wall
// clock, hours and minutes) in loc, weeks on weekStart. It assumes, as
// the tests arrange, that the wall time of a day's start exists once on
// every date.
type actCalendar struct {
	loc       *time.Location
	dayStart  time.Duration
	weekStart time.Weekday
}

func (c actCalendar) startOn(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, int(c.dayStart/time.Hour), int(c.dayStart%time.Hour/time.Minute), 0, 0, c.loc)
}

// dayOf returns the start of the day containing t and the date it starts
// on.
func (c actCalendar) dayOf(t time.Time) (time.Time, [3]int) {
	lt := t.In(c.loc)
	y, m, d := lt.Date()
	if s := c.startOn(y, m, d); !s.After(t) {
		return s, [3]int{y, int(m), d}
	}
	p := time.Date(y, m, d-1, 12, 0, 0, 0, time.UTC)
	py, pm, pd := p.Date()
	return c.startOn(py, pm, pd), [3]int{py, int(pm), pd}
}

// expect returns the span a period label covers when asked at now.
func (c actCalendar) expect(label string, now time.Time) (start, end time.Time) {
	now = now.Truncate(time.Millisecond)
	today, date := c.dayOf(now)
	switch label {
	case activity.LabelToday:
		return today, now
	case activity.LabelYesterday:
		return c.startOn(date[0], time.Month(date[1]), date[2]-1), today
	case activity.LabelThisWeek:
		wd := time.Date(date[0], time.Month(date[1]), date[2], 12, 0, 0, 0, time.UTC).Weekday()
		back := (int(wd) - int(c.weekStart) + 7) % 7
		return c.startOn(date[0], time.Month(date[1]), date[2]-back), now
	}
	var n int
	var unit byte
	if _, err := fmt.Sscanf(label, "last_%d%c", &n, &unit); err == nil && unit == 'd' {
		return now.In(c.loc).AddDate(0, 0, -n), now
	} else if err == nil && unit == 'h' {
		return now.Add(-time.Duration(n) * time.Hour), now
	}
	panic("actCalendar: no expectation for " + label)
}

// checkPeriod checks a resolved period: its label, zone and day start,
// and that it covers exactly what the label means on cal when asked
// between before and after (the binary reads the real clock), its instants
// written with the zone's offset.
func checkPeriod(t *testing.T, p activity.Period, label, zone string, cal actCalendar, before, after time.Time) {
	t.Helper()
	if p.Label != label {
		t.Errorf("period label %q, want %q", p.Label, label)
	}
	if zone != "" && p.Timezone != zone {
		t.Errorf("%s: time zone %q, want %q", label, p.Timezone, zone)
	}
	wantDayStart := fmt.Sprintf("%02d:%02d", int(cal.dayStart/time.Hour), int(cal.dayStart%time.Hour/time.Minute))
	if p.DayStart != wantDayStart {
		t.Errorf("%s: day start %q, want %q", label, p.DayStart, wantDayStart)
	}
	// Relative periods end when the call read the clock (between before
	// and after); yesterday's end is a day start: either answer is right
	// when a day started during the call.
	var ws, we time.Time
	if label == activity.LabelYesterday {
		ws, we = cal.expect(label, before)
		if !p.Start.Equal(ws) || !p.End.Equal(we) {
			ws, we = cal.expect(label, after)
		}
	} else {
		if p.End.Before(before.Truncate(time.Millisecond)) || p.End.After(after) {
			t.Errorf("%s: period ends %s, not when the call was made (between %s and %s)", label,
				p.End.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
		}
		ws, we = cal.expect(label, p.End)
	}
	if !p.Start.Equal(ws) || !p.End.Equal(we) {
		t.Errorf("%s: period %s .. %s, want %s .. %s (%s, days from %s)", label,
			p.Start.Format(time.RFC3339Nano), p.End.Format(time.RFC3339Nano),
			ws.In(cal.loc).Format(time.RFC3339Nano), we.In(cal.loc).Format(time.RFC3339Nano), cal.loc, wantDayStart)
	}
	for _, x := range []struct {
		what string
		t    time.Time
	}{{"start", p.Start}, {"end", p.End}} {
		_, got := x.t.Zone()
		_, want := x.t.In(cal.loc).Zone()
		if got != want {
			t.Errorf("%s: period %s %s is not written with the zone's offset (%+d s)", label, x.what, x.t.Format(time.RFC3339), want)
		}
	}
	if math.Abs(p.DurationS-p.End.Sub(p.Start).Seconds()) > 0.01 {
		t.Errorf("%s: duration_s %.3f, but end - start is %.3f s", label, p.DurationS, p.End.Sub(p.Start).Seconds())
	}
}

// actCanon is what ActivityWatch's web UI shows for a period: the totals
// of its canonical desktop query, in seconds.
type actCanon struct {
	Apps, Titles, Categories, Domains map[string]float64
	// Active is the sum of the window events within active time (the
	// dashboard's total), AFK the time the AFK watcher said away.
	Active, AFK float64
	// Events are the window events within active time, NotAFK the active
	// time, oldest first.
	Events, NotAFK []actSpan
}

// actSpan is a stretch of time [Start, End), in an app for an event.
type actSpan struct {
	Start, End time.Time
	App        string
}

// covers reports whether one of spans holds t.
func covers(spans []actSpan, t time.Time) bool {
	for _, s := range spans {
		if !s.Start.After(t) && s.End.After(t) {
			return true
		}
	}
	return false
}

// actBrowsers is the web UI's table of the browsers the generated
// histories use: how their windows are recognised (aw-webui
// src/queries.ts, browser_appnames and browser_appname_regex).
var actBrowsers = []struct{ name, apps, regex string }{
	{"chrome", `["com.google.Chrome","com.google.ChromeDev","org.chromium.Chromium"]`, `(?i)^(google[-_ ]?chrome|chrome|chromium)`},
	{"firefox", `["org.mozilla.firefox","io.gitlab.librewolf-community","net.waterfox.waterfox"]`, `(?i)(firefox|librewolf|waterfox|nightly)`},
}

// actQuery is the query the web UI's Activity view sends for one desktop
// host (fullDesktopQuery with canonicalEvents: AFK filtered, audible tabs
// counted as active, categories), with the AFK time added. categories is
// the web UI's classes_for_query as it writes it into the query.
func actQuery(web []string, categories string) string {
	q := []string{
		`events = flood(query_bucket("aw-watcher-window_` + actHost + `"));`,
		`not_afk = flood(query_bucket("aw-watcher-afk_` + actHost + `"));`,
		`not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);`,
		`browser_events = [];`,
	}
	for _, b := range actBrowsers {
		id := ""
		for _, w := range web {
			if strings.Contains(w, b.name) {
				id = w
				break
			}
		}
		if id == "" {
			continue
		}
		q = append(q, fmt.Sprintf(`events_%[1]s = flood(query_bucket("%[2]s"));
			window_%[1]s = filter_keyvals(events, "app", %[3]s);
			window_%[1]s_re = filter_keyvals_regex(events, "app", "%[4]s");
			window_%[1]s = sort_by_timestamp(concat(window_%[1]s, window_%[1]s_re));
			events_%[1]s = filter_period_intersect(events_%[1]s, window_%[1]s);
			events_%[1]s = split_url_events(events_%[1]s);
			browser_events = concat(browser_events, events_%[1]s);
			browser_events = sort_by_timestamp(browser_events);`, b.name, id, b.apps, b.regex))
	}
	q = append(q,
		`audible_events = filter_keyvals(browser_events, "audible", [true]);`,
		`not_afk = period_union(not_afk, audible_events);`,
		`events = filter_period_intersect(events, not_afk);`,
		`stopwatch_events = [];`,
		`events = categorize(events, `+categories+`);`,
		`title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));`,
		`app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));`,
		`cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));`,
		`browser_events = split_url_events(browser_events);`,
		`browser_domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));`,
		`afk_events = flood(query_bucket("aw-watcher-afk_`+actHost+`"));`,
		`afk_events = filter_keyvals(afk_events, "status", ["afk"]);`,
		`RETURN = {"events": events, "not_afk": not_afk, "title_events": title_events, "app_events": app_events, "cat_events": cat_events, "browser_domains": browser_domains, "afk": afk_events};`)
	return strings.Join(q, "\n")
}

// actCategories writes classes as the web UI writes classes_for_query into
// its query: [[name, rule], ...], JSON with its doubled backslashes undone.
func actCategories(cs []actClass) string {
	var out []any
	for _, c := range cs {
		if c.Rule == nil {
			continue // the web UI's "no rule": not sent
		}
		out = append(out, []any{c.Name, c.Rule})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	return strings.ReplaceAll(strings.TrimSpace(b.String()), `\\`, `\`)
}

// actClass is one entry of ActivityWatch's classes setting.
type actClass struct {
	Name []string       `json:"name"`
	Rule map[string]any `json:"rule"`
}

// setting is the class as the web UI stores it (a null rule type for
// "no rule").
func (c actClass) setting() map[string]any {
	rule := c.Rule
	if rule == nil {
		rule = map[string]any{"type": nil}
	}
	return map[string]any{"name": c.Name, "rule": rule, "data": map[string]any{"color": "#abc"}}
}

// actDefaultClasses are ActivityWatch's default categories, which the web
// UI sends when the classes setting is unset.
func actDefaultClasses() []actClass {
	var out []actClass
	for _, c := range transform.DefaultClasses() {
		rule := map[string]any{"type": "none"}
		if c.Rule.Regex != "" {
			rule = map[string]any{"type": "regex", "regex": c.Rule.Regex}
			if c.Rule.IgnoreCase {
				rule["ignore_case"] = true
			}
		}
		out = append(out, actClass{Name: c.Name, Rule: rule})
	}
	return out
}

// canonical runs the web UI's query over [start, end) through the
// simulator's query endpoint and totals its results.
func (s *actSim) canonical(t *testing.T, classes []actClass, start, end time.Time) actCanon {
	t.Helper()
	const iso = "2006-01-02T15:04:05.000000-07:00"
	body, err := json.Marshal(map[string]any{
		"query":       []string{actQuery(s.web, actCategories(classes))},
		"timeperiods": []string{start.Format(iso) + "/" + end.Format(iso)},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.srv.URL+"/api/0/query/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string][]struct {
		Timestamp time.Time      `json:"timestamp"`
		Duration  float64        `json:"duration"`
		Data      map[string]any `json:"data"`
	}
	answer, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(answer, &out) != nil || len(out) != 1 {
		t.Fatalf("the canonical query through the simulator: %d, %v: %s", resp.StatusCode, err, clipLine(string(answer), 500))
	}
	r := out[0]
	c := actCanon{Apps: map[string]float64{}, Titles: map[string]float64{}, Categories: map[string]float64{}, Domains: map[string]float64{}}
	str := func(v any) string { s, _ := v.(string); return s }
	span := func(ts time.Time, d float64, app string) actSpan {
		return actSpan{ts, ts.Add(time.Duration(d * float64(time.Second))), app}
	}
	for _, e := range r["events"] {
		c.Active += e.Duration
		c.Events = append(c.Events, span(e.Timestamp, e.Duration, str(e.Data["app"])))
	}
	for _, e := range r["not_afk"] {
		c.NotAFK = append(c.NotAFK, span(e.Timestamp, e.Duration, ""))
	}
	for _, e := range r["afk"] {
		c.AFK += e.Duration
	}
	for _, e := range r["app_events"] {
		c.Apps[str(e.Data["app"])] += e.Duration
	}
	for _, e := range r["title_events"] {
		c.Titles[str(e.Data["app"])+" — "+str(e.Data["title"])] += e.Duration
	}
	for _, e := range r["cat_events"] {
		var name []string
		if l, ok := e.Data["$category"].([]any); ok {
			for _, x := range l {
				name = append(name, str(x))
			}
		}
		c.Categories[strings.Join(name, " > ")] += e.Duration
	}
	for _, e := range r["browser_domains"] {
		c.Domains[str(e.Data["$domain"])] += e.Duration
	}
	return c
}

// checkRanking compares a ranking of a result with ActivityWatch's totals:
// largest first; each entry's time equal to ActivityWatch's within one
// second (the excluded entry is skipped: the caller checks it); shares
// the entry's part of active time; every key ActivityWatch ranks above
// the smallest entry shown is shown; with complete, every key of a
// second or more is shown.
func checkRanking(t *testing.T, what string, got []activity.Entry, want map[string]float64, active float64, complete bool) {
	t.Helper()
	if len(got) == 0 && len(want) > 0 {
		t.Errorf("%s: empty, ActivityWatch's canonical query has %d entries: %v", what, len(want), want)
		return
	}
	shown := map[string]bool{}
	smallest := math.Inf(1)
	shares := 0.0
	for i, e := range got {
		if i > 0 && e.DurationS > got[i-1].DurationS {
			t.Errorf("%s: not largest first: %q (%.1f s) after %q (%.1f s)", what, e.Key, e.DurationS, got[i-1].Key, got[i-1].DurationS)
		}
		if shown[e.Key] {
			t.Errorf("%s: %q listed twice", what, e.Key)
		}
		shown[e.Key] = true
		smallest = math.Min(smallest, e.DurationS)
		shares += e.Share
		if active > 0 && math.Abs(e.Share-e.DurationS/active) > 0.0015 {
			t.Errorf("%s: %q has share %.3f, but %.1f s of %.1f s active is %.4f", what, e.Key, e.Share, e.DurationS, active, e.DurationS/active)
		}
		if e.Share < 0 || e.Share > 1 {
			t.Errorf("%s: %q has share %.3f, outside 0..1", what, e.Key, e.Share)
		}
		if e.Excluded {
			continue
		}
		w, ok := want[e.Key]
		if !ok {
			t.Errorf("%s: %q (%.1f s) is not in ActivityWatch's canonical query, whose keys are %v", what, e.Key, e.DurationS, keysOf(want))
			continue
		}
		if math.Abs(e.DurationS-w) > 1 {
			t.Errorf("%s: %q has %.1f s, ActivityWatch's canonical query %.3f s", what, e.Key, e.DurationS, w)
		}
	}
	if shares > 1+0.0005*float64(len(got)) {
		t.Errorf("%s: shares sum to %.4f, more than the whole", what, shares)
	}
	for k, w := range want {
		if shown[k] {
			continue
		}
		if w > smallest+1 || (complete && w >= 1) {
			t.Errorf("%s: %q (%.1f s in ActivityWatch's canonical query) is missing", what, k, w)
		}
	}
}

func keysOf(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// actSession is `awbridge stdio` in env with a 2025-11-25 session
// initialized (the version current clients negotiate).
func actSession(t *testing.T, env []string) *proc {
	t.Helper()
	b := start(t, env)
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	b.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "accept-test", "version": "0"}}, &init)
	if init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize negotiated %q", init.ProtocolVersion)
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return b
}

// actCall calls a tool and returns its envelope and isError. A refusal
// sent as a JSON-RPC error (invalid arguments in older protocol versions)
// comes back as an envelope holding the ToolError; a tool the binary does
// not have fails the test, saying so.
func actCall(b *proc, name string, args map[string]any) (faultEnvelope, bool) {
	b.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	line := b.request("tools/call", map[string]any{"name": name, "arguments": args})
	var r struct {
		Result *struct {
			Structured json.RawMessage `json:"structuredContent"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		b.t.Fatalf("%s: reply is not JSON-RPC: %v: %s", name, err, clipLine(line, 500))
	}
	var env faultEnvelope
	switch {
	case r.Error != nil:
		var te struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(r.Error.Data, &te)
		if te.Code == "UnknownTool" {
			b.t.Fatalf("the binary has no tool %s yet (UnknownTool): %s", name, clipLine(line, 300))
		}
		if len(r.Error.Data) == 0 {
			b.t.Fatalf("%s: JSON-RPC error without a ToolError: %s", name, clipLine(line, 500))
		}
		raw := []byte(`{"success":false,"tool":"` + name + `","status":"Error","error":` + string(r.Error.Data) + `}`)
		if err := json.Unmarshal(raw, &env); err != nil {
			b.t.Fatalf("%s: error data: %v: %s", name, err, clipLine(line, 500))
		}
		env.raw = raw
		return env, true
	case r.Result == nil:
		b.t.Fatalf("%s: neither result nor error: %s", name, clipLine(line, 500))
	}
	if err := json.Unmarshal(r.Result.Structured, &env); err != nil {
		b.t.Fatalf("%s: envelope: %v: %s", name, err, clipLine(string(r.Result.Structured), 500))
	}
	if len(r.Result.Content) != 1 || !json.Valid([]byte(r.Result.Content[0].Text)) {
		b.t.Fatalf("%s: the text content is not the envelope: %s", name, clipLine(line, 500))
	}
	env.raw = r.Result.Structured
	return env, r.Result.IsError
}

// actResult calls a tool that must succeed and decodes its result into v.
func actResult(b *proc, name string, args map[string]any, v any) faultEnvelope {
	b.t.Helper()
	env, isErr := actCall(b, name, args)
	if isErr || !env.Success || env.Error != nil {
		b.t.Fatalf("%s %v failed: %s", name, args, clipLine(string(env.raw), 800))
	}
	if err := json.Unmarshal(env.Result, v); err != nil {
		b.t.Fatalf("%s: result: %v: %s", name, err, clipLine(string(env.Result), 800))
	}
	return env
}

// actEnv is the environment of a bridge reading sim: no service, the
// engine in the process, private XDG folders, plus extra settings.
func actEnv(t *testing.T, awURL string, extra ...string) []string {
	t.Helper()
	env, _, _ := faultEnv(t, awURL, append([]string{"AWBRIDGE_RELAY=0"}, extra...)...)
	return env
}

// actUnsafeRune reports characters no string of a result may hold: C0 and
// C1 controls (terminal escapes, line breaks), bidi controls, zero-width
// and invisible formatting characters, line and paragraph separators,
// tag characters (the zero-width joiner, which emoji need, may stay).
func actUnsafeRune(r rune) bool {
	switch {
	case r == '\u200d':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == '\u2028', r == '\u2029':
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// actWalk calls f with the path and value of every key and string of v.
func actWalk(path string, v any, f func(path, s string)) {
	switch x := v.(type) {
	case string:
		f(path, x)
	case map[string]any:
		for k, c := range x {
			f(path+"{key}", k)
			actWalk(path+"."+k, c, f)
		}
	case []any:
		for i, c := range x {
			actWalk(fmt.Sprintf("%s[%d]", path, i), c, f)
		}
	}
}

// actTZif writes a time zone in the TZif format (version 1, as zic
// writes for the first block): before at, offset from UTC before (with
// DST flag dstBefore), from at on after.
func actTZif(at time.Time, before, after int, dstBefore bool) []byte {
	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.BigEndian, v); err != nil {
			panic(err)
		}
	}
	b.WriteString("TZif")
	b.WriteByte(0)
	b.Write(make([]byte, 15))
	abbr := []byte("TST\x00TDT\x00")
	// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
	for _, n := range []uint32{0, 0, 0, 2, 2, uint32(len(abbr))} {
		w(n)
	}
	// An early transition to the "before" type, so that it holds for
	// every time a test reads, then the change.
	w(int32(at.AddDate(-2, 0, 0).Unix()))
	w(int32(at.Unix()))
	b.Write([]byte{0, 1})
	idx := func(dst bool) uint8 {
		if dst {
			return 4
		}
		return 0
	}
	w(int32(before))
	b.WriteByte(map[bool]uint8{false: 0, true: 1}[dstBefore])
	b.WriteByte(idx(dstBefore))
	w(int32(after))
	b.WriteByte(map[bool]uint8{false: 0, true: 1}[!dstBefore])
	b.WriteByte(idx(!dstBefore))
	b.Write(abbr)
	return b.Bytes()
}

// actZoneDir writes a TZif zone under dir/zoneinfo/name and returns the
// zoneinfo folder (for ZONEINFO), the file's path (for TZ) and the zone.
func actZoneDir(t *testing.T, name string, data []byte) (zoneinfo, file string, loc *time.Location) {
	t.Helper()
	zoneinfo = filepath.Join(t.TempDir(), "zoneinfo")
	file = filepath.Join(zoneinfo, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		t.Fatalf("the crafted zone does not load: %v", err)
	}
	return zoneinfo, file, loc
}
