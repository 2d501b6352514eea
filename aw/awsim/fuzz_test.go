package awsim

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseISO: parse_date never panics, answers instants inside datetime's
// range, and what it accepts survives isoformat and a second parse.
func FuzzParseISO(f *testing.F) {
	for _, s := range []string{
		"2026-11-22T01:05:21+00:00", "2026-11-22T01:20:21Z", "2026-11-22T01:05:21", "2026-11-22T03:05:21+02:00",
		"yesterday", "2026", "202611", "20261122T013521Z", "2026-11-22 01:05:21.123456789+0530", "0001-01-01T00:00:00+01:00",
		"9999-12-31T23:59:59.9999999999999999999999999999-23:59", "2026-11-22T01:05:21Z\n", "2026-1-2T03", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseISO(s)
		if err != nil {
			return
		}
		if !inRange(p.us) || p.offMin <= -24*60 || p.offMin >= 24*60 {
			t.Fatalf("parseISO(%q) = %+v: out of range", s, p)
		}
		iso := isoformatOffset(p.us, p.offMin)
		q, err := parseISO(iso)
		if err != nil || q != p {
			t.Fatalf("parseISO(%q) = %+v, isoformat %q reparses to %+v, %v", s, p, iso, q, err)
		}
	})
}

// FuzzQueryArgs: werkzeug-style query strings never panic, decode to valid
// UTF-8, and the number parsers built on them stay total.
func FuzzQueryArgs(f *testing.F) {
	for _, s := range []string{
		"start=2026-11-22T01%3A05%3A21%2B00%3A00&end=2026-11-22T01%3A25%3A21%2B00%3A00&limit=2",
		"limit=abc", "limit=-1", "pulsetime=185.0", "force=1", "a+b=%zz&&=&x", "%", "%%%41", "%ff%fe=%c3", "limit=1_0",
		"pulsetime=nan", "pulsetime=1e309", "limit=%201%20",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := parseQueryArgs(raw)
		for _, p := range q {
			if !utf8.ValidString(p.k) || !utf8.ValidString(p.v) {
				t.Fatalf("invalid UTF-8 from %q: %q=%q", raw, p.k, p.v)
			}
			if v, ok := q.get(p.k); !ok || v != q[firstIndex(q, p.k)].v {
				t.Fatalf("get(%q) = %q, %v: want the first value", p.k, v, ok)
			}
			_, _ = pyInt(p.v)
			_, _ = pyFloat(p.v)
		}
		tr, err := rangeArgs(q)
		if err == nil {
			if r, err := roundRange(tr); err == nil && r.hasEnd && r.end <= tr.end-usPerMilli {
				t.Fatalf("end rounded down: %d -> %d", tr.end, r.end)
			}
		}
	})
}

func firstIndex(q queryArgs, k string) int {
	for i, p := range q {
		if p.k == k {
			return i
		}
	}
	return -1
}

// FuzzDecodeJSON: json.loads-compatible decoding never panics, and what it
// accepts re-encodes (both of Flask's styles) to something it decodes to
// the same encoding again.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": "2026-11-22T01:32:21+00:00", "duration": 0, "data": {"app": "Code"}}`,
		`[NaN, Infinity, -Infinity, 1e400, -0.0, 12345678901234567890]`, `"\ud800\udc00\ud800"`, `{"a": 1, "a": 2}`,
		`{"timeperiods": [`, "\xef\xbb\xbf{}", `[[[[[[]]]]]]`, `"\u00e9\u2014"`, `1.5e-7`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeJSON(b)
		if err != nil {
			return
		}
		for _, st := range []encStyle{styleRestx, styleJsonify} {
			enc := appendJSON(nil, v, st)
			w, err := decodeJSON(enc)
			if err != nil {
				t.Fatalf("%q re-encoded as %q, which does not decode: %v", b, enc, err)
			}
			if again := appendJSON(nil, w, st); !bytes.Equal(again, enc) {
				t.Fatalf("unstable encoding of %q: %q then %q", b, enc, again)
			}
		}
		_ = pyRepr(v)
	})
}

// FuzzQueryLanguage: the query2 port never panics and never runs away on
// any program; its results always serialise.
func FuzzQueryLanguage(f *testing.F) {
	for _, s := range []string{
		`RETURN = 1;`, `events = query_bucket(;RETURN = events;`, `RETURN = {"a": [1, "b", true], "c": {}};`,
		`e = flood(query_bucket(find_bucket("w"))); RETURN = sort_by_duration(merge_events_by_keys(e, ["app"]));`,
		`RETURN = categorize(query_bucket("w"), [[["Work"], {"type": "regex", "regex": "Code|x", "ignore_case": true}]]);`,
		`a = split_url_events(query_bucket("w")); RETURN = period_union(a, filter_period_intersect(a, a));`,
		`RETURN = chunk_events_by_key(query_bucket("w"), "app");`, `RETURN = union_no_overlap(query_bucket("w"), []);`,
		`RETURN = [ ];`, `RETURN = f(a b, c)x;`, `'`, `=`, `RETURN = "\"";`, `RETURN = ((((((1))))));`,
		`RETURN = simplify_window_titles(query_bucket("w"), "title");`, `RETURN = tag(query_bucket("w"), [["t", {"regex": "C"}]]);`,
	} {
		f.Add(s)
	}
	st := newStore()
	b := &bucket{id: "w", typ: "currentwindow", hostname: "h"}
	st.createBucket(b)
	for i, d := range []*object{
		obj("app", "Code", "title", "● main.go", "url", "https://www.example.com/a;p?q=1#f"),
		obj("app", "Slack", "title", "(2) FPS: 59.2 #dev"),
		obj("app", "Code", "title", "x"),
	} {
		_, _ = st.insert(b, base.UnixMicro()+int64(i)*60*usPerSecond, 60*usPerSecond+int64(i)*1000, d)
	}
	start, _ := parseISO("2026-11-22T09:00:00+00:00")
	end, _ := parseISO("2026-11-22T11:00:00+00:00")
	f.Fuzz(func(t *testing.T, text string) {
		res, err := runQuery(st, "fuzz", text, start, end)
		var qe *queryError
		if err != nil && !errors.As(err, &qe) && !errors.Is(err, errQueryCrash) && !errors.Is(err, errArity) {
			t.Fatalf("%q: unexpected error %v", text, err)
		}
		if err == nil {
			out, err := toJSON(res)
			if err != nil {
				t.Fatalf("%q: result does not convert: %v", text, err)
			}
			_ = appendJSON(nil, out, styleJsonify)
		}
	})
}

// FuzzServe: any request gets one of aw-server's statuses, never a panic.
func FuzzServe(f *testing.F) {
	for _, c := range []struct{ method, target, body string }{
		{"GET", "/api/0/buckets/aw-watcher-window_awsim/events?start=2026-11-22T09%3A00%3A00Z&limit=2", ""},
		{"POST", "/api/0/buckets/aw-watcher-window_awsim/heartbeat?pulsetime=2", `{"timestamp": "2026-11-22T10:00:00Z", "data": {"app": "x"}}`},
		{"POST", "/api/0/buckets/aw-watcher-window_awsim/events", `[{"id": 1, "timestamp": "2026-11-22T10:00:00Z"}]`},
		{"POST", "/api/0/query/", `{"timeperiods": ["2026-11-22T00:00:00Z/2026-11-23T00:00:00Z"], "query": ["RETURN = query_bucket(\"aw-watcher-window_awsim\");"]}`},
		{"PUT", "/api/0/buckets/aw-watcher-window_awsim", `{"type": 1, "client": [], "hostname": {}, "data": null}`},
		{"DELETE", "/api/0/buckets/aw-afk_awsim?force=1", ""},
		{"POST", "/api/0/import", `{"buckets": {"n": {"id": "n", "type": "t", "client": "c", "hostname": "h", "created": "2026-11-22T00:00:00Z", "events": [{"id": 3}]}}}`},
		{"OPTIONS", "/api/0/buckets", ""},
		{"GET", "/api/0/export", ""},
	} {
		f.Add(c.method, c.target, c.body)
	}
	now := base
	sim := New(Options{Probe: true, Now: func() time.Time { return now }})
	sim.Seed(base)
	statuses := map[int]bool{200: true, 304: true, 308: true, 400: true, 401: true, 404: true, 405: true, 413: true, 500: true}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:5600"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if !statuses[rec.Code] {
			t.Fatalf("%s %s: status %d", method, target, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); rec.Code != 304 && ct != ctJSON && ct != ctHTML {
			t.Fatalf("%s %s: Content-Type %q", method, target, ct)
		}
	})
}
