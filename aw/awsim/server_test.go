package awsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// base is the fixed clock of these tests.
var base = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func at(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }

func (h *harness) get(path string) answer { h.t.Helper(); return h.do("GET", path, nil, nil) }

func (h *harness) postRaw(path, body string) answer {
	h.t.Helper()
	return h.do("POST", path, []byte(body), map[string]string{"Content-Type": "application/json"})
}

// events returns a bucket's events as JSON objects, newest first.
func (h *harness) events(bucket, query string) []map[string]any {
	h.t.Helper()
	a := h.get("/api/0/buckets/" + bucket + "/events" + query)
	if a.status != 200 {
		h.t.Fatalf("events: %d %s", a.status, a.body)
	}
	var out []map[string]any
	if err := json.Unmarshal(a.body, &out); err != nil {
		h.t.Fatal(err)
	}
	return out
}

func newBucket(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, base)
	h.createBuckets(bScrtch)
	return h
}

func ev(ts string, dur float64, data map[string]any) map[string]any {
	return map[string]any{"timestamp": ts, "duration": dur, "data": data}
}

func TestHeartbeatMerge(t *testing.T) {
	A := map[string]any{"app": "Code", "title": "main.go"}
	B := map[string]any{"app": "Slack", "title": "#dev"}
	type want struct {
		count     int     // events in the bucket afterwards
		id        float64 // id answered
		timestamp string  // timestamp answered
		duration  float64 // duration answered
	}
	for _, c := range []struct {
		name      string
		existing  []map[string]any
		hb        map[string]any
		pulsetime string
		want      want
	}{
		{"empty bucket: inserted", nil, ev(at(0), 0, A), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 0}},
		{"same data within pulsetime: merged", []map[string]any{ev(at(0), 10, A)}, ev(at(11*time.Second), 0, A), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 11}},
		{"gap exactly pulsetime: merged", []map[string]any{ev(at(0), 10, A)}, ev(at(12*time.Second), 0, A), "2.0", want{1, 1, "2026-11-22T10:00:00+00:00", 12}},
		{"gap beyond pulsetime: new event", []map[string]any{ev(at(0), 10, A)}, ev(at(12001*time.Millisecond), 0, A), "2", want{2, 2, "2026-11-22T10:00:12.001000+00:00", 0}},
		{"different data: new event", []map[string]any{ev(at(0), 10, A)}, ev(at(5*time.Second), 0, B), "2", want{2, 2, "2026-11-22T10:00:05+00:00", 0}},
		{"heartbeat older than the event: new event", []map[string]any{ev(at(0), 10, A)}, ev(at(-time.Second), 0, A), "2", want{2, 2, "2026-11-22T09:59:59+00:00", 0}},
		{"heartbeat inside the event does not shorten it", []map[string]any{ev(at(0), 10, A)}, ev(at(3*time.Second), 0, A), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 10}},
		{"heartbeat duration extends the event", []map[string]any{ev(at(0), 0, A)}, ev(at(time.Second), 5, A), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 6}},
		{"data equality is Python's (1 == 1.0, any key order)", []map[string]any{ev(at(0), 10, map[string]any{"n": 1, "t": "x"})}, ev(at(10*time.Second), 0, map[string]any{"t": "x", "n": 1.0}), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 10}},
		{"merges into the newest event by timestamp, not by id", []map[string]any{ev(at(100*time.Second), 0, A), ev(at(0), 10, A)}, ev(at(101*time.Second), 0, A), "2", want{2, 1, "2026-11-22T10:01:40+00:00", 1}},
		{"pulsetime 185 like aw-watcher-afk", []map[string]any{ev(at(0), 10, A)}, ev(at(195*time.Second), 0, A), "185.0", want{1, 1, "2026-11-22T10:00:00+00:00", 195}},
		{"timestamp truncated to ms", nil, ev("2026-11-22T10:00:00.123456Z", 0, A), "2", want{1, 1, "2026-11-22T10:00:00.123000+00:00", 0}},
		{"offset normalised to UTC", nil, ev("2026-11-22T12:00:00+02:00", 0, A), "2", want{1, 1, "2026-11-22T10:00:00+00:00", 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newBucket(t)
			if len(c.existing) > 0 {
				for _, e := range c.existing {
					h.mustPost("/api/0/buckets/"+bScrtch+"/events", e)
				}
			}
			a := h.post("/api/0/buckets/"+bScrtch+"/heartbeat?pulsetime="+c.pulsetime, c.hb)
			if a.status != 200 {
				t.Fatalf("heartbeat: %d %s", a.status, a.body)
			}
			var got map[string]any
			if err := json.Unmarshal(a.body, &got); err != nil {
				t.Fatal(err)
			}
			if got["id"] != c.want.id || got["timestamp"] != c.want.timestamp || got["duration"] != c.want.duration {
				t.Errorf("answered %s, want id %v %s duration %v", a.body, c.want.id, c.want.timestamp, c.want.duration)
			}
			if n := len(h.events(bScrtch, "")); n != c.want.count {
				t.Errorf("%d events in the bucket, want %d", n, c.want.count)
			}
		})
	}
}

// message is an answer's error message.
func (a answer) message() string {
	var m struct{ Message string }
	_ = json.Unmarshal(a.body, &m)
	return m.Message
}

func TestHeartbeatErrors(t *testing.T) {
	h := newBucket(t)
	h.mustPost("/api/0/buckets/"+bScrtch+"/events", ev(at(0), 10, map[string]any{"a": 1}))
	hb := ev(at(5*time.Second), 0, map[string]any{"a": 1})
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"no pulsetime", "/heartbeat", mustJSON(hb), 400, "Missing required parameter pulsetime"},
		{"pulsetime not a number", "/heartbeat?pulsetime=soon", mustJSON(hb), 500, "Internal Server Error"},
		{"no timestamp", "/heartbeat?pulsetime=1", `{"data": {}}`, 400, "Input payload validation failed"},
		{"wrong types", "/heartbeat?pulsetime=1", `{"data": [], "duration": "1", "timestamp": 5}`, 400, "Input payload validation failed"},
		{"unparseable timestamp", "/heartbeat?pulsetime=1", `{"timestamp": "yesterday"}`, 500, "Internal Server Error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := h.postRaw("/api/0/buckets/"+bScrtch+c.path, c.body)
			if a.status != c.status || a.message() != c.want {
				t.Errorf("%d %s, want %d %s", a.status, a.body, c.status, c.want)
			}
		})
	}
	if a := h.postRaw("/api/0/buckets/nosuch/heartbeat?pulsetime=1", mustJSON(hb)); a.status != 404 || a.message() != "There's no bucket named nosuch" {
		t.Errorf("unknown bucket: %d %s", a.status, a.body)
	}
	if n := len(h.events(bScrtch, "")); n != 1 {
		t.Errorf("failed heartbeats changed the bucket: %d events", n)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestRangeClipping(t *testing.T) {
	h := newBucket(t)
	for _, e := range []map[string]any{
		ev(at(-26*time.Hour), 30*3600, map[string]any{"n": "long"}), // starts more than 24 h before start
		ev(at(-30*time.Minute), 20*60, map[string]any{"n": "E1"}),   // ends at -10 min
		ev(at(-10*time.Minute), 5*60, map[string]any{"n": "E2"}),    // inside
		ev(at(-2*time.Minute), 4*60, map[string]any{"n": "E3"}),     // ends at +2 min
	} {
		h.mustPost("/api/0/buckets/"+bScrtch+"/events", e)
	}
	type got struct {
		N   string
		TS  string
		Dur float64
	}
	q := func(start, end string, extra string) string {
		v := url.Values{}
		if start != "" {
			v.Set("start", start)
		}
		if end != "" {
			v.Set("end", end)
		}
		return "?" + v.Encode() + extra
	}
	for _, c := range []struct {
		name  string
		query string
		want  []got
		count int
	}{
		{"clipped both ends, end rounded up by 1 ms, the >24h event left out",
			q(at(-15*time.Minute), at(time.Minute), ""),
			[]got{{"E3", "2026-11-22T09:58:00+00:00", 180.001}, {"E2", "2026-11-22T09:50:00+00:00", 300}, {"E1", "2026-11-22T09:45:00+00:00", 300}}, 3},
		{"start with microseconds floors to ms",
			q("2026-11-22T09:45:00.000999Z", at(time.Minute), ""),
			[]got{{"E3", "2026-11-22T09:58:00+00:00", 180.001}, {"E2", "2026-11-22T09:50:00+00:00", 300}, {"E1", "2026-11-22T09:45:00+00:00", 300}}, 3},
		{"an event ending exactly at start is included, with duration 0",
			q(at(-10*time.Minute), at(-9*time.Minute), ""),
			[]got{{"E2", "2026-11-22T09:50:00+00:00", 60.001}, {"E1", "2026-11-22T09:50:00+00:00", 0}}, 2},
		{"an event starting exactly at end is included, 1 ms long",
			q(at(-3*time.Minute), at(-2*time.Minute), ""),
			[]got{{"E3", "2026-11-22T09:58:00+00:00", 0.001}}, 1},
		{"offsets and naive times are the same instants",
			q("2026-11-22T11:45:00+02:00", "2026-11-22T10:01:00", ""),
			[]got{{"E3", "2026-11-22T09:58:00+00:00", 180.001}, {"E2", "2026-11-22T09:50:00+00:00", 300}, {"E1", "2026-11-22T09:45:00+00:00", 300}}, 3},
		{"limit applies after the range", q(at(-15*time.Minute), at(time.Minute), "&limit=1"),
			[]got{{"E3", "2026-11-22T09:58:00+00:00", 180.001}}, 3},
		{"start only", q(at(time.Minute), "", ""), []got{{"E3", "2026-11-22T10:01:00+00:00", 60}}, 1},
		{"end only keeps the long event", q("", at(-29*time.Minute), ""),
			[]got{{"E1", "2026-11-22T09:30:00+00:00", 60.001}, {"long", "2026-11-21T08:00:00+00:00", 91860.001}}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gotEvs []got
			for _, e := range h.events(bScrtch, c.query) {
				gotEvs = append(gotEvs, got{e["data"].(map[string]any)["n"].(string), e["timestamp"].(string), e["duration"].(float64)})
			}
			if fmt.Sprint(gotEvs) != fmt.Sprint(c.want) {
				t.Errorf("events %v\nwant %v", gotEvs, c.want)
			}
			cq := strings.Replace(c.query, "&limit=1", "", 1)
			a := h.get("/api/0/buckets/" + bScrtch + "/events/count" + cq)
			if strings.TrimSpace(string(a.body)) != fmt.Sprint(c.count) {
				t.Errorf("count %s, want %d (overlapping events, unclipped)", a.body, c.count)
			}
		})
	}
}

func TestLimit(t *testing.T) {
	h := newBucket(t)
	for i := range 5 {
		h.mustPost("/api/0/buckets/"+bScrtch+"/events", ev(at(time.Duration(i)*time.Minute), 60, map[string]any{"i": i}))
	}
	for _, c := range []struct {
		limit  string
		status int
		n      int
	}{
		{"", 500, 0}, // int("") fails
		{"-1", 200, 5},
		{"-7", 200, 5}, // any negative LIMIT is no limit in SQLite
		{"0", 200, 0},
		{"2", 200, 2},
		{"abc", 500, 0},
		{"2.0", 500, 0},
		{"99999999999999999999", 500, 0},
	} {
		a := h.get("/api/0/buckets/" + bScrtch + "/events?limit=" + c.limit)
		if a.status != c.status {
			t.Errorf("limit=%s: %d %s, want %d", c.limit, a.status, a.body, c.status)
			continue
		}
		if c.status != 200 {
			if a.message() != "Internal Server Error" {
				t.Errorf("limit=%s: %s", c.limit, a.body)
			}
			continue
		}
		var evs []map[string]any
		_ = json.Unmarshal(a.body, &evs)
		if len(evs) != c.n {
			t.Errorf("limit=%s: %d events, want %d", c.limit, len(evs), c.n)
		}
		for i, e := range evs { // newest first
			if want := float64(4 - i); e["data"].(map[string]any)["i"] != want {
				t.Errorf("limit=%s: event %d is %v, want i=%v", c.limit, i, e["data"], want)
			}
		}
	}
}

func TestBucketLifecycle(t *testing.T) {
	h := newHarness(t, base)
	p := "/api/0/buckets/" + bScrtch
	if a := h.post(p, map[string]string{"client": "c", "type": "t", "hostname": "h"}); a.status != 200 || string(a.body) != "{}\n" {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	if a := h.post(p, map[string]string{"client": "c", "type": "t", "hostname": "h"}); a.status != 304 || len(a.body) != 0 || a.header.Get("Content-Type") != "" {
		t.Errorf("create again: %d %q %v", a.status, a.body, a.header)
	}
	if a := h.get("/api/0/buckets/"); strings.Contains(string(a.body), "last_updated") {
		t.Errorf("an empty bucket has no last_updated: %s", a.body)
	}
	h.mustPost(p+"/events", ev(at(0), 1.5, map[string]any{"x": 1}))
	if a := h.get("/api/0/buckets/"); !strings.Contains(string(a.body), `"last_updated":"2026-11-22T10:00:01.500000+00:00"`) {
		t.Errorf("last_updated is the newest event's end: %s", a.body)
	}
	if a := h.get(p); string(a.body) != `{"id":"`+bScrtch+`","created":"2026-11-22T10:00:00+00:00","name":null,"type":"t","client":"c","hostname":"h","data":{}}`+"\n" {
		t.Errorf("metadata: %s", a.body)
	}
	for _, body := range []string{`{"client": "c", "type": "t"}`, `{"client": "c", "type": "t", "hostname": null}`} {
		if a := h.postRaw("/api/0/buckets/other", body); a.status != 500 {
			t.Errorf("create %s: %d %s, want 500", body, a.status, a.body)
		}
	}
	for _, q := range []string{"", "?force=true", "?force=0"} {
		if a := h.do("DELETE", p+q, nil, nil); a.status != 401 {
			t.Errorf("delete%s: %d", q, a.status)
		}
	}
	if a := h.do("DELETE", p+"?force=1", nil, nil); a.status != 200 || string(a.body) != "{}\n" {
		t.Errorf("delete: %d %s", a.status, a.body)
	}
	if a := h.get(p); a.status != 404 || a.message() != "There's no bucket named "+bScrtch {
		t.Errorf("after delete: %d %s", a.status, a.body)
	}
	if a := h.do("DELETE", p+"?force=1", nil, nil); a.status != 404 {
		t.Errorf("delete again: %d", a.status)
	}
}

func TestEventsPost(t *testing.T) {
	h := newBucket(t)
	p := "/api/0/buckets/" + bScrtch + "/events"
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"timestamp": "2026-11-22T10:00:00Z", "duration": 1, "data": {"a": 1}}`, 200},
		{`[{"timestamp": "2026-11-22T10:01:00Z"}, {"timestamp": "2026-11-22T10:02:00Z", "data": null}]`, 200},
		{`5`, 400},
		{`{"timestamp": 1700000000}`, 400},
		{`{"timestamp": "yesterday"}`, 500},
		{`{"duration": 2}`, 200}, // no timestamp: now
	} {
		if a := h.postRaw(p, c.body); a.status != c.status {
			t.Errorf("POST %s: %d %s, want %d", c.body, a.status, a.body, c.status)
		}
	}
	evs := h.events(bScrtch, "")
	if len(evs) != 4 || evs[0]["timestamp"] != "2026-11-22T10:02:00+00:00" || evs[3]["timestamp"] != "2026-11-22T10:00:00+00:00" {
		t.Fatalf("events: %v", evs)
	}
	if evs[1]["timestamp"] != "2026-11-22T10:01:00+00:00" || evs[0]["duration"] != 0.0 || fmt.Sprint(evs[0]["data"]) != "map[]" {
		t.Errorf("defaults: %v", evs)
	}
	if a := h.postRaw("/api/0/buckets/nosuch/events", `[]`); a.status != 404 {
		t.Errorf("unknown bucket: %d %s", a.status, a.body)
	}
}

func TestSettings(t *testing.T) {
	h := newHarness(t, base)
	if a := h.get("/api/0/settings"); string(a.body) != "{}\n" {
		t.Errorf("settings: %s", a.body)
	}
	if a := h.postRaw("/api/0/settings/classes", `[{"name": ["Work"], "rule": {"type": "regex"}}]`); a.status != 200 || string(a.body) != `[{"name":["Work"],"rule":{"type":"regex"}}]`+"\n" {
		t.Errorf("set: %d %s", a.status, a.body)
	}
	if a := h.get("/api/0/settings/classes"); string(a.body) != `[{"name":["Work"],"rule":{"type":"regex"}}]`+"\n" {
		t.Errorf("get: %s", a.body)
	}
	if a := h.get("/api/0/settings/unset"); string(a.body) != "null\n" {
		t.Errorf("unset: %s", a.body)
	}
	h.postRaw("/api/0/settings/alpha", `{"z": 1, "a": 2}`)
	if a := h.get("/api/0/settings"); string(a.body) != `{"alpha":{"z":1,"a":2},"classes":[{"name":["Work"],"rule":{"type":"regex"}}]}`+"\n" {
		t.Errorf("all: %s", a.body)
	}
}

func TestProbe(t *testing.T) {
	sim := New(Options{Probe: true, Now: func() time.Time { return base }})
	srv := newTestServer(t, sim)
	for _, p := range []string{"/probe", "/probe/"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			OK          bool            `json:"ok"`
			PreflightOK bool            `json:"preflight_ok"`
			Source      string          `json:"source"`
			Checks      map[string]any  `json:"checks"`
			TS          string          `json:"ts"`
			Raw         json.RawMessage `json:"-"`
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !v.OK || !v.PreflightOK || v.Source != "awsim" || len(v.Checks) == 0 || v.TS != "2026-11-22T10:00:00Z" {
			t.Errorf("%s: %d %+v %v", p, resp.StatusCode, v, err)
		}
	}
}
