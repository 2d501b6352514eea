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
		{"NaN pulsetime is harmless when data differs", []map[string]any{ev(at(0), 10, A)}, ev(at(20*time.Second), 0, B), "nan", want{2, 2, "2026-11-22T10:00:20+00:00", 0}},
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

func TestHeartbeatErrors(t *testing.T) {
	h := newBucket(t)
	h.mustPost("/api/0/buckets/"+bScrtch+"/events", ev(at(0), 10, map[string]any{"a": 1}))
	hb := ev(at(5*time.Second), 0, map[string]any{"a": 1})
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"no pulsetime", "/heartbeat", mustJSON(hb), 400, `{"message": "Missing required parameter pulsetime"}`},
		{"pulsetime not a number", "/heartbeat?pulsetime=soon", mustJSON(hb), 500, `{"message": "Internal Server Error"}`},
		{"NaN pulsetime with a merge to decide", "/heartbeat?pulsetime=nan", mustJSON(hb), 500, `{"message": "Internal Server Error"}`},
		{"schema: wrong types, in schema order", "/heartbeat?pulsetime=1", `{"data": [], "duration": "1", "timestamp": 5}`, 400,
			`{"errors": {"timestamp": "5 is not of type 'string'", "duration": "'1' is not of type 'number'", "data": "[] is not of type 'object'"}, "message": "Input payload validation failed"}`},
		{"schema: not an object", "/heartbeat?pulsetime=1", `[1]`, 400, `{"errors": {"": "[1] is not of type 'object'"}, "message": "Input payload validation failed"}`},
		{"a key Event() does not take", "/heartbeat?pulsetime=1", `{"timestamp": "2026-11-22T10:00:00Z", "extra": 1}`, 500, `{"message": "Internal Server Error"}`},
		{"unparseable timestamp", "/heartbeat?pulsetime=1", `{"timestamp": "yesterday"}`, 500, `{"message": "Internal Server Error"}`},
		{"not JSON", "/heartbeat?pulsetime=1", `{`, 400, `{"message": "The browser (or proxy) sent a request that this server could not understand."}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := h.postRaw("/api/0/buckets/"+bScrtch+c.path, c.body)
			if a.status != c.status || strings.TrimSpace(string(a.body)) != c.want {
				t.Errorf("%d %s, want %d %s", a.status, a.body, c.status, c.want)
			}
		})
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
		{"+3", 200, 3},
		{"%201%20", 200, 1}, // " 1 "
		{"1_0", 200, 5},
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
			if string(a.body) != "{\"message\": \"Internal Server Error\"}\n" {
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
	if a := h.get("/api/0/buckets/nosuch/events?limit=abc"); a.status != 500 {
		t.Errorf("bad limit on an unknown bucket: %d (aw-server parses arguments first: 500)", a.status)
	}
}

func TestHostCheck(t *testing.T) {
	for _, c := range []struct {
		listen, host, path string
		status             int
		body               string
	}{
		{"", "127.0.0.1:5600", "/api/0/info", 200, ""},
		{"", "localhost", "/api/0/info", 200, ""},
		{"", "localhost:1", "/api/0/info", 200, ""},
		{"", "127.0.0.1", "/api/0/buckets/", 200, ""},
		{"", "evil.example.com", "/api/0/info", 400, `{"message":"host header is invalid (was evil.example.com)"}`},
		{"", "127.0.0.1.evil.com:80", "/api/0/info", 400, `{"message":"host header is invalid (was 127.0.0.1.evil.com:80)"}`},
		{"", "LOCALHOST", "/api/0/info", 400, `{"message":"host header is invalid (was LOCALHOST)"}`},
		{"", "[::1]:5600", "/api/0/info", 400, `{"message":"host header is invalid (was [::1]:5600)"}`},
		{"", "evil.example.com", "/api/swagger.json", 400, `{"message":"host header is invalid (was evil.example.com)"}`},
		{"box.lan", "box.lan:5600", "/api/0/info", 200, ""},
		{"box.lan", "other.lan", "/api/0/info", 400, `{"message":"host header is invalid (was other.lan)"}`},
		{"0.0.0.0", "evil.example.com", "/api/0/info", 200, ""}, // aw-server disables the check
		// Only API resources are checked: routing answers come first.
		{"", "evil.example.com", "/nosuchpage", 404, html404},
		{"", "evil.example.com", "/api/0/nosuchendpoint", 404, html404},
		{"", "evil.example.com", "/api/", 200, docHTML},
	} {
		t.Run(c.listen+"/"+c.host+c.path, func(t *testing.T) {
			sim := New(Options{ListenHost: c.listen, Now: func() time.Time { return base }})
			h := &harness{t: t, sim: sim, srv: newTestServer(t, sim), cli: &http.Client{}}
			a := h.do("GET", c.path, nil, map[string]string{"Host": c.host})
			if a.status != c.status {
				t.Errorf("status %d, want %d (%s)", a.status, c.status, a.body)
			}
			if c.body != "" && strings.TrimSuffix(string(a.body), "\n") != strings.TrimSuffix(c.body, "\n") {
				t.Errorf("body %s, want %s", a.body, c.body)
			}
		})
	}
	h := newHarness(t, base)
	if a := h.doRaw("GET /api/0/info HTTP/1.0\r\n\r\n"); a.status != 400 || string(a.body) != "{\"message\":\"host header is missing\"}\n" {
		t.Errorf("no Host: %d %s", a.status, a.body)
	}
	if a := h.do("OPTIONS", "/api/0/info", nil, map[string]string{"Host": "evil"}); a.status != 200 {
		t.Errorf("OPTIONS is answered by routing, before the check: %d", a.status)
	}
	if a := h.do("GET", "/api/0/buckets?x=1", nil, map[string]string{"Host": "evil:1"}); a.status != 308 || a.header.Get("Location") != "http://evil:1/api/0/buckets/?x=1" {
		t.Errorf("redirect: %d %s", a.status, a.header.Get("Location"))
	}
}

func TestCORS(t *testing.T) {
	h := newHarness(t, base)
	a := h.do("GET", "/api/0/info", nil, map[string]string{"Origin": "moz-extension://abc"})
	if a.header.Get("Access-Control-Allow-Origin") != "moz-extension://abc" || a.header.Get("Vary") != "Origin" {
		t.Errorf("moz-extension origin: headers %v", a.header)
	}
	for _, o := range []string{"chrome-extension://abc", "http://evil.example.com", "null"} {
		a := h.do("GET", "/api/0/info", nil, map[string]string{"Origin": o})
		if a.status != 200 || a.header.Get("Access-Control-Allow-Origin") != "" || a.header.Get("Vary") != "" {
			t.Errorf("origin %s: %d, ACAO %q Vary %q", o, a.status, a.header.Get("Access-Control-Allow-Origin"), a.header.Get("Vary"))
		}
	}
	a = h.do("OPTIONS", "/api/0/buckets/x/heartbeat", nil, map[string]string{
		"Origin": "moz-extension://abc", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-b, Content-Type"})
	if a.status != 200 || a.header.Get("Access-Control-Allow-Headers") != "Content-Type, x-b" ||
		a.header.Get("Access-Control-Allow-Methods") != "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT" ||
		sortedList(a.header.Get("Allow")) != "GET, HEAD, OPTIONS, POST" {
		t.Errorf("preflight: %d %v", a.status, a.header)
	}
	if a := h.do("GET", "/nosuchpage", nil, map[string]string{"Origin": "moz-extension://abc"}); a.header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("CORS headers outside /api")
	}
}

func TestRouting(t *testing.T) {
	h := newHarness(t, base)
	h.createBuckets(bScrtch)
	for _, c := range []struct {
		method, path string
		status       int
		ctype, allow string
		location     string
	}{
		{"GET", "/api", 308, ctHTML, "", "http://127.0.0.1:5600/api/"},
		{"GET", "/api/0/buckets", 308, ctHTML, "", "http://127.0.0.1:5600/api/0/buckets/"},
		{"POST", "/api/0/query", 308, ctHTML, "", "http://127.0.0.1:5600/api/0/query/"},
		{"GET", "/api/0/query/", 404, ctHTML, "", ""},                  // Flask's static route takes GET
		{"PUT", "/api/0/info", 405, ctJSON, "GET, HEAD, OPTIONS", ""},  // an API rule: JSON
		{"POST", "/nosuchpage", 405, ctHTML, "GET, HEAD, OPTIONS", ""}, // the static rule: HTML
		{"DELETE", "/api/0/buckets/x/events/abc", 405, ctHTML, "GET, HEAD, OPTIONS", ""},
		{"GET", "/api/0/buckets/" + bScrtch + "/events/", 404, ctHTML, "", ""}, // trailing slash
		{"HEAD", "/api/0/info", 200, ctJSON, "", ""},
		{"GET", "/", 404, ctHTML, "", ""}, // no web UI
		{"OPTIONS", "/nosuchpage", 200, ctHTML, "GET, HEAD, OPTIONS", ""},
		{"GET", "/probe", 404, ctHTML, "", ""}, // Probe is off
	} {
		a := h.do(c.method, c.path, nil, nil)
		if a.status != c.status || a.header.Get("Content-Type") != c.ctype ||
			sortedList(a.header.Get("Allow")) != sortedList(c.allow) || a.header.Get("Location") != c.location {
			t.Errorf("%s %s: %d %q Allow %q Location %q; want %d %q %q %q", c.method, c.path, a.status,
				a.header.Get("Content-Type"), a.header.Get("Allow"), a.header.Get("Location"), c.status, c.ctype, c.allow, c.location)
		}
	}
	if a := h.do("HEAD", "/api/0/info", nil, nil); len(a.body) != 0 || a.header.Get("Content-Length") == "0" {
		t.Errorf("HEAD: body %q, Content-Length %q", a.body, a.header.Get("Content-Length"))
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
	if a := h.get("/api/0/buckets/"); !strings.Contains(string(a.body), `"data": {}}`) || strings.Contains(string(a.body), "last_updated") {
		t.Errorf("an empty bucket has no last_updated: %s", a.body)
	}
	h.mustPost(p+"/events", ev(at(0), 1.5, map[string]any{"x": 1}))
	if a := h.get("/api/0/buckets/"); !strings.Contains(string(a.body), `"last_updated": "2026-11-22T10:00:01.500000+00:00"`) {
		t.Errorf("last_updated is the newest event's end: %s", a.body)
	}
	if a := h.get(p); strings.Contains(string(a.body), "last_updated") || !strings.HasPrefix(string(a.body), `{"id": "`+bScrtch+`", "created": "2026-11-22T10:00:00+00:00", "name": null, "type": "t"`) {
		t.Errorf("metadata: %s", a.body)
	}
	for _, c := range []struct {
		body   string
		ctype  string
		status int
	}{
		{`{"client": "c", "type": "t"}`, "application/json", 500}, // KeyError
		{`[]`, "application/json", 500},
		{`{"client": "c", "type": "t", "hostname": null}`, "application/json", 500}, // NOT NULL
		{`{"client": "c", "type": "t", "hostname": "h"}`, "text/plain", 400},
		{`{"client": "c", "type": "t", "hostname": "h"}`, "application/vnd.aw+json", 200}, // Flask's is_json
	} {
		a := h.do("POST", "/api/0/buckets/other", []byte(c.body), map[string]string{"Content-Type": c.ctype})
		if a.status != c.status {
			t.Errorf("create %s (%s): %d %s, want %d", c.body, c.ctype, a.status, a.body, c.status)
		}
	}
	h.mustPost("/api/0/buckets/local", map[string]string{"client": "c", "type": "t", "hostname": "!local"})
	if a := h.get("/api/0/buckets/local"); !strings.Contains(string(a.body), `"hostname": "vm", "data": {"device_id": "`+h.sim.deviceID+`"}`) {
		t.Errorf("!local: %s", a.body)
	}
	if a := h.do("PUT", p, []byte(`{"client": "c2", "type": null, "hostname": "h2", "data": {"k": 1}}`), map[string]string{"Content-Type": "application/json"}); a.status != 200 {
		t.Errorf("update: %d %s", a.status, a.body)
	}
	if a := h.get(p); !strings.Contains(string(a.body), `"type": "t", "client": "c2", "hostname": "h2", "data": {"k": 1}}`) {
		t.Errorf("after update: %s", a.body)
	}
	a := h.get(p + "/export")
	if a.header.Get("Content-Type") != ctHTML || a.header.Get("Content-Disposition") != "attachment; filename=aw-bucket-export_"+bScrtch+".json" ||
		!strings.HasSuffix(string(a.body), `"events": [{"timestamp": "2026-11-22T10:00:00+00:00", "duration": 1.5, "data": {"x": 1}}]}}}`) {
		t.Errorf("export: %v %s", a.header, a.body)
	}
	for _, q := range []string{"", "?force=true", "?force=0"} {
		if a := h.do("DELETE", p+q, nil, nil); a.status != 401 {
			t.Errorf("delete%s: %d", q, a.status)
		}
	}
	if a := h.do("DELETE", p+"?force=1", nil, nil); a.status != 200 || string(a.body) != "{}\n" {
		t.Errorf("delete: %d %s", a.status, a.body)
	}
	if a := h.get(p); a.status != 404 || string(a.body) != `{"message": "There's no bucket named `+bScrtch+`"}`+"\n" {
		t.Errorf("after delete: %d %s", a.status, a.body)
	}
	if a := h.do("DELETE", p+"?force=1", nil, nil); a.status != 404 {
		t.Errorf("delete again: %d", a.status)
	}
}

func TestEventsPostAndByID(t *testing.T) {
	h := newBucket(t)
	p := "/api/0/buckets/" + bScrtch + "/events"
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"timestamp": "2026-11-22T10:00:00Z", "duration": 1, "data": {"a": 1}}`, 200, "null"},
		{`[{"timestamp": "2026-11-22T10:01:00Z"}, {"timestamp": "2026-11-22T10:02:00Z", "data": null}]`, 200, "null"},
		{`5`, 400, `{"message": ""}`},
		{`[5]`, 500, `{"message": "Internal Server Error"}`},
		{`{"timestamp": "2026-11-22T10:00:00Z", "colour": "red"}`, 500, `{"message": "Internal Server Error"}`},
		{`{"timestamp": 1700000000}`, 500, `{"message": "Internal Server Error"}`},
		{`{"timestamp": "2026-11-22T10:00:00Z", "duration": "1"}`, 500, `{"message": "Internal Server Error"}`},
		{`{"duration": 2}`, 200, "null"}, // no timestamp: now
	} {
		a := h.postRaw(p, c.body)
		if a.status != c.status || strings.TrimSpace(string(a.body)) != c.want {
			t.Errorf("POST %s: %d %s, want %d %s", c.body, a.status, a.body, c.status, c.want)
		}
	}
	evs := h.events(bScrtch, "")
	if len(evs) != 4 || evs[0]["timestamp"] != "2026-11-22T10:02:00+00:00" || evs[3]["timestamp"] != "2026-11-22T10:00:00+00:00" {
		t.Fatalf("events: %v", evs)
	}
	if evs[1]["timestamp"] != "2026-11-22T10:01:00+00:00" || evs[0]["duration"] != 0.0 {
		t.Errorf("defaults: %v", evs)
	}
	// An event posted with an existing id updates that row; an unknown id is dropped.
	if a := h.postRaw(p, `[{"id": 1.0, "timestamp": "2026-11-22T09:00:00Z", "duration": 5, "data": {"b": 2}}, {"id": 777, "timestamp": "2026-11-22T09:00:00Z"}, {"id": "x"}]`); a.status != 200 {
		t.Fatalf("update: %d %s", a.status, a.body)
	}
	if a := h.get(p + "/1"); string(a.body) != `{"id": 1, "timestamp": "2026-11-22T09:00:00+00:00", "duration": 5.0, "data": {"b": 2}}`+"\n" {
		t.Errorf("updated event: %s", a.body)
	}
	if n := len(h.events(bScrtch, "")); n != 4 {
		t.Errorf("%d events after the update, want 4", n)
	}
	if a := h.get(p + "/777"); a.status != 404 || string(a.body) != "null\n" {
		t.Errorf("missing event: %d %s", a.status, a.body)
	}
	if a := h.get(p + "/99999999999999999999"); a.status != 500 {
		t.Errorf("id beyond int64: %d", a.status)
	}
	if a := h.do("DELETE", p+"/1", nil, nil); string(a.body) != "{\"success\": 1}\n" {
		t.Errorf("delete: %s", a.body)
	}
	if a := h.do("DELETE", p+"/1", nil, nil); string(a.body) != "{\"success\": 0}\n" {
		t.Errorf("delete again: %s", a.body)
	}
	if a := h.get("/api/0/buckets/nosuch/events/1"); a.status != 404 || !strings.Contains(string(a.body), "There's no bucket named nosuch") {
		t.Errorf("unknown bucket: %d %s", a.status, a.body)
	}
}

func TestSettings(t *testing.T) {
	h := newHarness(t, base)
	if a := h.get("/api/0/settings"); string(a.body) != "{}\n" {
		t.Errorf("settings: %s", a.body)
	}
	if a := h.postRaw("/api/0/settings/classes", `[{"name": ["Work"], "rule": {"type": "regex"}}]`); a.status != 200 || string(a.body) != `[{"name": ["Work"], "rule": {"type": "regex"}}]`+"\n" {
		t.Errorf("set: %d %s", a.status, a.body)
	}
	if a := h.get("/api/0/settings/classes"); string(a.body) != `[{"name":["Work"],"rule":{"type":"regex"}}]`+"\n" {
		t.Errorf("get (jsonify: compact, sorted): %s", a.body)
	}
	h.postRaw("/api/0/settings/alpha", `{"z": 1, "a": 2}`)
	if a := h.get("/api/0/settings"); string(a.body) != `{"alpha":{"a":2,"z":1},"classes":[{"name":["Work"],"rule":{"type":"regex"}}]}`+"\n" {
		t.Errorf("all: %s", a.body)
	}
	if a := h.postRaw("/api/0/settings", `1`); a.status != 400 || string(a.body) != "{\"message\": \"Missing required parameter key\"}\n" {
		t.Errorf("no key: %d %s", a.status, a.body)
	}
}

func TestQueryLanguage(t *testing.T) {
	h := newHarness(t, base)
	h.createBuckets(bWindow)
	for i, app := range []string{"Code", "Slack", "Code"} {
		h.mustPost("/api/0/buckets/"+bWindow+"/events", ev(at(time.Duration(i)*time.Minute), 60, map[string]any{"app": app}))
	}
	period := "2026-11-22T10:00:00+02:00/2026-11-22T13:00:00+02:00"
	for _, c := range []struct {
		query  string
		status int
		want   string
	}{
		{`RETURN = {"x": [1, "two", true, {"y": false}]};`, 200, `[{"x":[1,"two",true,{"y":false}]}]`},
		{`a = 5; b = a; RETURN = b;`, 200, `[5]`},
		{`RETURN = STARTTIME;`, 200, `["2026-11-22T10:00:00+02:00"]`},
		{`RETURN = NAME;`, 200, `["q1"]`},
		{`RETURN = nop();`, 200, `[1]`},
		{`RETURN = sum_durations(query_bucket("` + bWindow + `"));`, 200, `[180.0]`},
		{`RETURN = limit_events(sort_by_duration(merge_events_by_keys(query_bucket(find_bucket("window")), ["app"])), 1);`, 200,
			`[[{"data":{"app":"Code"},"duration":120.0,"id":null,"timestamp":"2026-11-22T10:02:00+00:00"}]]`},
		{`e = query_bucket("` + bWindow + `"); RETURN = exclude_keyvals(e, "app", ["Code"]);`, 200,
			`[[{"data":{"app":"Slack"},"duration":60.0,"id":2,"timestamp":"2026-11-22T10:01:00+00:00"}]]`},
		{`RETURN = query_bucket_eventcount("` + bWindow + `");`, 200, `[3]`},
		{`RETURN = "a;b";`, 400, `{"type": "QueryParseException", "message": "Failed to parse string"}`},
		{`RETURN = b;`, 400, `{"type": "QueryInterpretException", "message": "Tried to reference variable 'b' which is not defined"}`},
		{`RETURN = nop(1);`, 400, `{"type": "QueryInterpretException", "message": "Tried to call function nop with invalid amount of arguments"}`},
		{`RETURN = query_bucket(5);`, 400, `{"type": "QueryFunctionException", "message": "Variable '5' passed to function call is of invalid type. Expected <class 'str'> but was <class 'int'>"}`},
		{`RETURN = find_bucket("window", "otherhost");`, 400, `{"type": "QueryFunctionException", "message": "Unable to find bucket matching 'window' (hostname filter set to 'otherhost')"}`},
		{`STARTTIME = "soon"; RETURN = query_bucket("` + bWindow + `");`, 400, `{"type": "QueryFunctionException", "message": "Unable to parse starttime/endtime for query_bucket"}`},
		{`x = ; RETURN = 1;`, 400, `{"type": "QueryParseException", "message": "Nothing to assign"}`},
		{`5 = 3;`, 400, `{"type": "QueryParseException", "message": "Cannot assign to a non-variable"}`},
		{`RETURN = 1 2;`, 400, `{"type": "QueryParseException", "message": "Invalid syntax for value to assign"}`},
		{`RETURN = [1, ];`, 400, `{"type": "QueryParseException", "message": "List expected a value, got nothing"}`},
		{`RETURN = {1: 2};`, 400, `{"type": "QueryParseException", "message": "Key in dict is not a str"}`},
		{`RETURN = {"a" 2};`, 400, `{"type": "QueryParseException", "message": "Key in dict is not followed by a :"}`},
		{`RETURN = sum_durations();`, 500, `{"message": "Internal Server Error"}`}, // IndexError in q2_typecheck
		{`RETURN = {"a": };`, 400, `{"type": "QueryParseException", "message": "Dict expected a value, got nothing"}`},
	} {
		body := mustJSON(map[string]any{"timeperiods": []string{period}, "query": []string{c.query}})
		a := h.postRaw("/api/0/query/?name=q1", body)
		if a.status != c.status || strings.TrimSpace(string(a.body)) != c.want {
			t.Errorf("%s\n got %d %s\nwant %d %s", c.query, a.status, a.body, c.status, c.want)
		}
	}
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"timeperiods": ["x"], "query": ["RETURN = 1;"]}`, 500, `{"message": "Internal Server Error"}`},
		{`{"timeperiods": [], "query": ["RETURN = 1;"]}`, 200, `[]`},
		{`{"timeperiods": [1], "query": [null]}`, 400, `{"errors": {"timeperiods.0": "1 is not of type 'string'", "query.0": "None is not of type 'string'"}, "message": "Input payload validation failed"}`},
		{`{}`, 400, `{"errors": {"query": "'query' is a required property", "timeperiods": "'timeperiods' is a required property"}, "message": "Input payload validation failed"}`},
		{`null`, 400, `{"errors": {"": "None is not of type 'object'"}, "message": "Input payload validation failed"}`},
	} {
		a := h.postRaw("/api/0/query/", c.body)
		if a.status != c.status || strings.TrimSpace(string(a.body)) != c.want {
			t.Errorf("%s\n got %d %s\nwant %d %s", c.body, a.status, a.body, c.status, c.want)
		}
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
