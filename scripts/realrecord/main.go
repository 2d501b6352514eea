// Command realrecord records a real ActivityWatch server's answers to its
// web UI's canonical desktop query, and the raw events they come from, as
// testdata: the oracle of awbridge's activity tests, which must not be
// awbridge's own transforms (aw/transform) nor its simulator (aw/awsim).
//
// It needs a running aw-server (../shared/tools/realaw/start.sh runs the
// real Python one) holding one host's window, AFK, browser (and editor) buckets, and
// writes into -out events.json.gz (the host's buckets with every event, in
// aw-server's export shape, which POST /api/0/import reads back) and
// answers.json (realaw.Recording: per period, what the query answered).
// The query is realaw.DesktopQuery; titles beyond -titles, when given, are
// summed.
//
// Record a week filled by week.py, days counted in its zone:
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5632 -tz Etc/GMT+10 -out testdata/realaw/week \
//	    -period day=2026-11-24T04:00/2026-11-25T04:00 \
//	    -period afternoon=2026-11-25T13:00/2026-11-25T17:30 \
//	    -period week=2026-11-21T04:00/2026-11-28T04:00 \
//	    -period last_7d=2026-11-20T12:00/2026-11-27T12:00
//
// and a day with a daylight-saving change (Europe/Berlin, 25 October 2026,
// when clocks went back from 03:00 to 02:00: sessions around the change, a
// night through both 02:00-03:00 hours), its events loaded from the
// recording into an empty server first (-import):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5633 -import testdata/realaw/dst/events.json.gz \
//	    -tz Europe/Berlin -out testdata/realaw/dst \
//	    -period day=2026-10-24T04:00/2026-10-25T04:00 \
//	    -period calendar_day=2026-10-25T00:00/2026-10-26T00:00 \
//	    -period next_day=2026-10-25T04:00/2026-10-26T04:00 \
//	    -period night=2026-10-25T01:30:00+02:00/2026-10-25T02:30:00+01:00 \
//	    -period two_days=2026-10-24T04:00/2026-10-26T04:00
//
// (the week was filled by week.py --events 8000 --seed 1 into a fresh
// server on port 5632).
//
// Periods of a day between clock times, asked a day later as
// "yesterday 14:00-16:00" (week.py --events 8000 --seed 1, port 5665):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5665 -tz Etc/GMT-9 -out testdata/realaw/localtime \
//	    -period slot=2026-11-27T14:00/2026-11-27T16:00 \
//	    -period evening=2026-11-26T22:00/2026-11-27T01:30 \
//	    -period morning=2026-11-27T09:05/2026-11-27T12:30
//
// The person's privacy filters: a week filled the same way (port 5641),
// privacy_filters.json stored as the server's setting and its drop rules
// expressed in the query (see withPrivacy):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5641 -tz Etc/GMT-9 -out testdata/realaw/privacy \
//	    -privacy testdata/realaw/privacy/privacy_filters.json \
//	    -period day=2026-11-24T04:00/2026-11-25T04:00 -period week=2026-11-21T04:00/2026-11-28T04:00
//
// The categories are what the web UI derives from the server's settings
// (realaw.WebUIClasses). catsets holds the week's events categorized by
// the web UI's category sets alone: into a fresh server, POST
// /api/0/settings/category_sets and .../active_set_ids (the recorded
// "settings" hold them), then
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5642 -import testdata/realaw/week/events.json.gz \
//	    -tz Etc/GMT+10 -out testdata/realaw/catsets -titles 100 \
//	    -period day=2026-11-24T04:00/2026-11-25T04:00 -period week=2026-11-21T04:00/2026-11-28T04:00
//
// The periods compare "previous" sets side by side (each kind of period
// and the one before it, at Thursday 26 November 12:00), from the week's
// events in a fresh server (port 5663):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5663 -import testdata/realaw/week/events.json.gz \
//	    -tz Etc/GMT+10 -out testdata/realaw/compare -titles 100 \
//	    -period today=2026-11-26T04:00/2026-11-26T12:00 -period yesterday=2026-11-25T04:00/2026-11-26T04:00 \
//	    -period day_before=2026-11-24T04:00/2026-11-25T04:00 \
//	    -period this_week=2026-11-23T04:00/2026-11-26T12:00 -period last_week=2026-11-16T04:00/2026-11-23T04:00 \
//	    -period last_2d=2026-11-24T12:00/2026-11-26T12:00 -period last_2d_before=2026-11-22T12:00/2026-11-24T12:00 \
//	    -period last_3h=2026-11-26T09:00/2026-11-26T12:00 -period last_3h_before=2026-11-26T06:00/2026-11-26T09:00 \
//	    -period afternoon=2026-11-25T13:00/2026-11-25T17:30 -period afternoon_before=2026-11-25T08:30/2026-11-25T13:00
//
// Every day of that week alone, for activity_summary split by day (the
// week's events loaded into a fresh server on port 5662):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5662 -import testdata/realaw/week/events.json.gz \
//	    -tz Etc/GMT+10 -out testdata/realaw/split -titles 100 \
//	    -period sat=2026-11-21T04:00/2026-11-22T04:00 -period sun=2026-11-22T04:00/2026-11-23T04:00 \
//	    -period mon=2026-11-23T04:00/2026-11-24T04:00 -period tue=2026-11-24T04:00/2026-11-25T04:00 \
//	    -period wed=2026-11-25T04:00/2026-11-26T04:00 -period thu=2026-11-26T04:00/2026-11-27T04:00 \
//	    -period fri=2026-11-27T04:00/2026-11-28T04:00 -period week=2026-11-21T04:00/2026-11-28T04:00 \
//	    -period last_7d_first=2026-11-20T12:00/2026-11-21T04:00 -period last_7d_last=2026-11-27T04:00/2026-11-27T12:00 \
//	    -period last_7d=2026-11-20T12:00/2026-11-27T12:00
//
// Where the host has editor buckets (app.editor.activity), it records the
// web UI's editor query too (realaw.EditorQuery). The editor recording
// (week.py --editor on port 5643, and a second editor written by hand:
// testdata/realaw/README.md):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5643 -tz Etc/GMT-9 -out testdata/realaw/editor \
//	    -period day=2026-11-25T04:00/2026-11-26T04:00 \
//	    -period afternoon=2026-11-25T13:00/2026-11-25T17:30 \
//	    -period week=2026-11-22T04:00/2026-11-29T04:00
//
// Four devices (-hosts: the other hosts in the multi-device order
// after -host; each period is answered for each host, for "all" by the web
// UI's multi-device query, and for "all:covered" by realaw.CoveredQuery,
// the parts of each later host's events the earlier hosts cover): a week
// filled by week.py --events 8000 --seed 1 --second-host laptop-2 (port
// 5644), then the "work-laptop" and Android "phone" of
// testdata/realaw/hosts/README.md:
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5644 -tz Etc/GMT-9 -host vm \
//	    -hosts laptop-2,work-laptop,phone -out testdata/realaw/hosts -titles 100 \
//	    -period day=2026-11-26T04:00/2026-11-27T04:00 -period midday=2026-11-26T11:00/2026-11-26T17:00 \
//	    -period evening=2026-11-26T19:00/2026-11-26T22:00 -period week=2026-11-21T04:00/2026-11-28T04:00
//
// A local start or end ("2026-10-25T02:30") is read in -tz; an RFC 3339
// one ("2026-10-25T02:30:00+01:00") names an instant on either side of a
// change.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/realaw"
)

func main() {
	var periods []string
	base := flag.String("url", "", "the ActivityWatch server (http://127.0.0.1:5632)")
	out := flag.String("out", "", "the folder to write events.json.gz and answers.json into")
	tz := flag.String("tz", "", "the IANA time zone local times and days are in")
	host := flag.String("host", "", "whose buckets (default: the server's hostname)")
	titles := flag.Int("titles", 0, "how many titles to keep per period, longest first, the rest summed (0: all)")
	imp := flag.String("import", "", "first load this events.json.gz into the (empty) server")
	privacy := flag.String("privacy", "", "a privacy_filters setting (JSON file) to store, its drop rules expressed in the query")
	devices := flag.String("hosts", "", "also the other hosts, comma-separated, in the multi-device order after -host: "+
		"each period is answered for each of them and for all combined (MultiDeviceQuery)")
	flag.Func("period", "name=start/end, repeatable", func(s string) error { periods = append(periods, s); return nil })
	var searches []string
	flag.Func("search", "words a search must all find in titles, repeatable: records search.json only (see search.go)",
		func(s string) error { searches = append(searches, s); return nil })
	flag.Parse()
	if *base == "" || *out == "" || *tz == "" || len(periods) == 0 {
		fmt.Fprintln(os.Stderr, "realrecord: -url, -out, -tz and at least one -period are needed")
		os.Exit(2)
	}
	r := &recorder{base: strings.TrimRight(*base, "/"), http: &http.Client{Timeout: 10 * time.Minute}, searches: searches}
	var others []string
	if *devices != "" {
		others = strings.Split(*devices, ",")
	}
	if err := r.run(*out, *tz, *host, others, *titles, *imp, *privacy, periods); err != nil {
		fmt.Fprintln(os.Stderr, "realrecord: "+err.Error())
		os.Exit(1)
	}
}

type recorder struct {
	base     string
	http     *http.Client
	searches []string // -search
}

func (r *recorder) run(out, tz, host string, others []string, titles int, imp, privacy string, periods []string) error {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return err
	}
	var info struct {
		Hostname string `json:"hostname"`
	}
	rawInfo, err := r.get("/api/0/info", &info)
	if err != nil {
		return err
	}
	if host == "" {
		host = info.Hostname
	}
	if imp != "" {
		if err := r.load(imp); err != nil {
			return err
		}
	}
	rec := realaw.Recording{
		Comment:    "answers of a real aw-server to the web UI's canonical desktop query (scripts/realrecord); the oracle of the activity tests",
		RecordedAt: time.Now().UTC().Truncate(time.Second),
		Server:     rawInfo,
		Timezone:   tz,
		Host:       host,
	}
	if rec.Settings, err = r.get("/api/0/settings", nil); err != nil {
		return err
	}
	var buckets map[string]struct {
		Type     string `json:"type"`
		Hostname string `json:"hostname"`
	}
	if _, err := r.get("/api/0/buckets/", &buckets); err != nil {
		return err
	}
	var ids []string
	of := func(host string) (realaw.Buckets, error) {
		var hb realaw.Buckets
		for id, b := range buckets {
			if b.Hostname != host {
				continue
			}
			ids = append(ids, id)
			switch b.Type {
			case "currentwindow":
				hb.Window = id
			case "afkstatus":
				hb.AFK = id
			case "web.tab.current":
				hb.Web = append(hb.Web, id)
			case "app.editor.activity":
				hb.Editor = append(hb.Editor, id)
			}
		}
		sort.Strings(hb.Web)
		sort.Strings(hb.Editor)
		if hb.Window == "" {
			return hb, fmt.Errorf("host %q has no window bucket", host)
		}
		return hb, nil
	}
	if rec.Buckets, err = of(host); err != nil {
		return err
	}
	if rec.Classes, err = realaw.WebUIClasses(rec.Settings); err != nil {
		return err
	}
	rec.Query = realaw.DesktopQuery(rec.Buckets, rec.Classes)
	if len(r.searches) > 0 {
		return r.recordSearches(out, loc, &rec, periods)
	}
	if privacy != "" {
		if rec.Query, err = r.withPrivacy(privacy, ids, rec.Query); err != nil {
			return err
		}
		if rec.Settings, err = r.get("/api/0/settings", nil); err != nil {
			return err
		}
	}
	if len(rec.Buckets.Editor) > 0 {
		rec.EditorQuery = realaw.EditorQuery(rec.Buckets.Editor)
	}
	type hostQuery struct {
		host  string
		query []string
	}
	queries := []hostQuery{{"", rec.Query}}
	if len(others) > 0 {
		all := []realaw.Buckets{rec.Buckets}
		rec.Hosts, rec.Queries = append([]string{host}, others...), map[string][]string{}
		for _, h := range others {
			hb, err := of(h)
			if err != nil {
				return err
			}
			all = append(all, hb)
			rec.Queries[h] = realaw.DesktopQuery(hb, rec.Classes)
			queries = append(queries, hostQuery{h, rec.Queries[h]})
		}
		rec.Queries[realaw.AllHosts] = realaw.MultiDeviceQuery(all, rec.Classes)
		rec.Queries[realaw.CoveredHosts] = realaw.CoveredQuery(all, rec.Classes)
		queries = append(queries, hostQuery{realaw.AllHosts, rec.Queries[realaw.AllHosts]},
			hostQuery{realaw.CoveredHosts, rec.Queries[realaw.CoveredHosts]})
	}
	sort.Strings(ids)
	for _, p := range periods {
		for _, q := range queries {
			a, err := r.answer(p, loc, q.query, titles)
			if err != nil {
				return err
			}
			a.Host = q.host
			if q.host == "" && rec.EditorQuery != nil {
				if a.Editor, err = r.editor(a, rec.EditorQuery); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "%s: editor %.1f s, %d projects, %d languages, %d files\n",
					a.Name, a.Editor.Duration, len(a.Editor.Projects), len(a.Editor.Languages), len(a.Editor.Files))
			}
			fmt.Fprintf(os.Stderr, "%s (host %q): %s .. %s: active %.1f s, afk %.1f s, %d apps, %d titles, %d categories, %d domains (%d ms)\n",
				a.Name, q.host, a.Start, a.End, a.Active, a.AFK, len(a.Apps), len(a.Titles), len(a.Categories), len(a.Domains), a.QueryMS)
			rec.Periods = append(rec.Periods, a)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	events, err := r.export(ids)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // no name, no time: the same bytes each run
	if _, err := zw.Write(events); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "events.json.gz"), gz.Bytes(), 0o644); err != nil {
		return err
	}
	answers, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "answers.json"), append(answers, '\n'), 0o644)
}

// parsePeriod reads name=start/end.
func parsePeriod(s string, loc *time.Location) (name string, start, end time.Time, err error) {
	name, span, ok := strings.Cut(s, "=")
	a, b, ok2 := strings.Cut(span, "/")
	if !ok || !ok2 || name == "" {
		return "", start, end, fmt.Errorf("period %q: want name=start/end", s)
	}
	if start, err = parseTime(a, loc); err != nil {
		return
	}
	if end, err = parseTime(b, loc); err != nil {
		return
	}
	if !end.After(start) {
		err = fmt.Errorf("period %q ends before it starts", s)
	}
	return
}

func parseTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.In(loc), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want 2006-01-02T15:04 (local) or RFC 3339", s)
}

func (r *recorder) answer(p string, loc *time.Location, query []string, titles int) (realaw.Answer, error) {
	name, start, end, err := parsePeriod(p, loc)
	if err != nil {
		return realaw.Answer{}, err
	}
	body, err := realaw.QueryBody(query, start, end)
	if err != nil {
		return realaw.Answer{}, err
	}
	t0 := time.Now()
	var raw json.RawMessage
	if err := r.do(http.MethodPost, "/api/0/query/", body, &raw); err != nil {
		return realaw.Answer{}, fmt.Errorf("period %s: %w", name, err)
	}
	a, err := realaw.DecodeAnswer(raw, titles)
	if err != nil {
		return realaw.Answer{}, fmt.Errorf("period %s: %w", name, err)
	}
	a.Name, a.Start, a.End, a.QueryMS = name, start, end, time.Since(t0).Milliseconds()
	return a, nil
}

// editor runs the editor query over a's period.
func (r *recorder) editor(a realaw.Answer, query []string) (*realaw.EditorAnswer, error) {
	body, err := realaw.QueryBody(query, a.Start, a.End)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := r.do(http.MethodPost, "/api/0/query/", body, &raw); err != nil {
		return nil, fmt.Errorf("period %s: editor: %w", a.Name, err)
	}
	return realaw.DecodeEditor(raw)
}

// export is the buckets with all their events (ids dropped), in
// aw-server's export shape: {"buckets": {"<id>": {..., "events": [...]}}}.
func (r *recorder) export(ids []string) ([]byte, error) {
	type event struct {
		Timestamp json.RawMessage `json:"timestamp"`
		Duration  json.RawMessage `json:"duration"`
		Data      json.RawMessage `json:"data"`
	}
	buckets := map[string]map[string]json.RawMessage{}
	for _, id := range ids {
		var meta map[string]json.RawMessage
		if _, err := r.get("/api/0/buckets/"+url.PathEscape(id), &meta); err != nil {
			return nil, err
		}
		evs := []event{}
		if _, err := r.get("/api/0/buckets/"+url.PathEscape(id)+"/events?limit=-1", &evs); err != nil {
			return nil, err
		}
		var err error
		if meta["events"], err = realaw.Marshal(evs); err != nil {
			return nil, err
		}
		buckets[id] = meta
		fmt.Fprintf(os.Stderr, "%s: %d events\n", id, len(evs))
	}
	return realaw.Marshal(map[string]any{"buckets": buckets})
}

// load POSTs an earlier recording's events.json.gz to /api/0/import of an
// empty server.
func (r *recorder) load(path string) error {
	var existing map[string]any
	if _, err := r.get("/api/0/buckets/", &existing); err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("the server already holds %d buckets: -import wants an empty one", len(existing))
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	return r.do(http.MethodPost, "/api/0/import", body, nil)
}

func (r *recorder) get(path string, v any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := r.do(http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
	}
	return raw, nil
}

func (r *recorder) do(method, path string, body []byte, v any) error {
	req, err := http.NewRequest(method, r.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data[:min(len(data), 500)]))
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}
