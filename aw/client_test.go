package aw

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// captureT is T in the fixtures' README: the capture time.
var captureT = time.Date(2026, 11, 22, 1, 35, 21, 0, time.UTC)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// asError returns err as *Error or fails the test.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *aw.Error", err, err)
	}
	return e
}

func TestInfoFixture(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "info"))
	c := fixtureClient(t, fs, Options{})
	info, err := c.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Hostname: "vm", Version: "v0.13.2", Testing: false, DeviceID: "87c46fe5-b7ef-451a-980a-65d2d44109ce"}
	if info != want {
		t.Errorf("Info = %+v, want %+v", info, want)
	}
	reqs := fs.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}
	if got := r.Header.Get("User-Agent"); got != DefaultUserAgent {
		t.Errorf("User-Agent = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization sent without an API key: %q", got)
	}
	if r.Host != fs.Listener.Addr().String() {
		t.Errorf("Host = %q, want the URL's host %q", r.Host, fs.Listener.Addr().String())
	}
}

func TestLocalhostHostHeaderFixture(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "localhost_host_header_200"))
	_, port, _ := net.SplitHostPort(fs.Listener.Addr().String())
	c := fixtureClient(t, fs, Options{BaseURL: "http://localhost:" + port})
	info, err := c.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Hostname != "vm" {
		t.Errorf("hostname = %q", info.Hostname)
	}
	if got := fs.requests()[0].Host; got != "localhost:"+port {
		t.Errorf("Host = %q, want localhost:%s", got, port)
	}
}

func TestBucketsFixture(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "buckets"), loadFixture(t, "buckets_no_trailing_slash_308"))
	c := fixtureClient(t, fs, Options{})
	buckets, err := c.Buckets(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Bucket{
		"aw-watcher-window_testhost": {
			ID: "aw-watcher-window_testhost", Type: TypeWindow, Client: "aw-watcher-window", Hostname: "testhost",
			Created:     time.Date(2026, 11, 22, 1, 35, 21, 801791000, time.UTC),
			LastUpdated: time.Date(2026, 11, 22, 1, 35, 20, 0, time.UTC),
			Data:        json.RawMessage(`{}`),
		},
		"aw-watcher-afk_testhost": {
			ID: "aw-watcher-afk_testhost", Type: TypeAFK, Client: "aw-watcher-afk", Hostname: "testhost",
			Created:     time.Date(2026, 11, 22, 1, 35, 21, 849887000, time.UTC),
			LastUpdated: time.Date(2026, 11, 22, 1, 35, 21, 0, time.UTC),
			Data:        json.RawMessage(`{}`),
		},
		"aw-watcher-web-chrome_testhost": {
			ID: "aw-watcher-web-chrome_testhost", Type: TypeWeb, Client: "aw-client-web", Hostname: "testhost",
			Created:     time.Date(2026, 11, 22, 1, 35, 21, 873004000, time.UTC),
			LastUpdated: time.Date(2026, 11, 22, 1, 35, 17, 0, time.UTC),
			Data:        json.RawMessage(`{}`),
		},
	}
	if !reflect.DeepEqual(buckets, want) {
		t.Errorf("Buckets =\n%+v\nwant\n%+v", buckets, want)
	}
	for _, r := range fs.requests() {
		if r.RequestURI != "/api/0/buckets/" {
			t.Errorf("client requested %q; the list endpoint needs its trailing slash (the slash-less path is a 308)", r.RequestURI)
		}
	}
}

// expectedEvent is the fixture's body decoded by encoding/json, an oracle
// independent of the gjson decoder.
type expectedEvent struct {
	ID        *int64          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Duration  float64         `json:"duration"`
	Data      json.RawMessage `json:"data"`
}

func checkEventsMatch(t *testing.T, got []Event, bodyRaw string) {
	t.Helper()
	var want []expectedEvent
	if err := json.Unmarshal([]byte(bodyRaw), &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		ts, err := time.Parse(time.RFC3339Nano, w.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Timestamp.Equal(ts) || g.Timestamp.Location() != time.UTC {
			t.Errorf("event %d: timestamp %v, want %v in UTC", i, g.Timestamp, ts)
		}
		if g.Duration != w.Duration {
			t.Errorf("event %d: duration %v, want %v", i, g.Duration, w.Duration)
		}
		if (g.ID == nil) != (w.ID == nil) || (g.ID != nil && *g.ID != *w.ID) {
			t.Errorf("event %d: id %v, want %v", i, g.ID, w.ID)
		}
		var gd, wd any
		if err := json.Unmarshal(g.Data, &gd); err != nil {
			t.Fatalf("event %d: data not JSON: %v", i, err)
		}
		_ = json.Unmarshal(w.Data, &wd)
		if !reflect.DeepEqual(gd, wd) {
			t.Errorf("event %d: data %s, want %s", i, g.Data, w.Data)
		}
		if i > 0 && got[i-1].Timestamp.Before(g.Timestamp) {
			t.Errorf("events not newest first at %d", i)
		}
	}
}

func TestEventsFixtures(t *testing.T) {
	plus2 := time.FixedZone("+02:00", 2*3600)
	window, afk := "aw-watcher-window_testhost", "aw-watcher-afk_testhost"
	tests := []struct {
		fixture string
		bucket  string
		q       EventQuery
		// wantURI is the exact request the client must send; "" means the
		// fixture's own path.
		wantURI string
	}{
		{fixture: "events_window_all", bucket: window},
		{fixture: "events_afk_all", bucket: afk},
		{fixture: "events_web_all", bucket: "aw-watcher-web-chrome_testhost"},
		{fixture: "events_window_limit1", bucket: window, q: EventQuery{Limit: 1}},
		{fixture: "events_window_limit10", bucket: window, q: EventQuery{Limit: 10}},
		{fixture: "events_window_start_end", bucket: window,
			q: EventQuery{Start: captureT.Add(-30 * time.Minute), End: captureT.Add(-10 * time.Minute)}},
		{fixture: "events_window_start_end_limit2", bucket: window,
			q: EventQuery{Start: captureT.Add(-30 * time.Minute), End: captureT.Add(-10 * time.Minute), Limit: 2}},
		// Same instants given in another zone: the client still sends UTC
		// with +00:00, the form of events_window_start_end.
		{fixture: "events_window_start_end_offset_plus2", bucket: window,
			q:       EventQuery{Start: captureT.Add(-30 * time.Minute).In(plus2), End: captureT.Add(-10 * time.Minute).In(plus2)},
			wantURI: "/api/0/buckets/aw-watcher-window_testhost/events?start=2026-11-22T01%3A05%3A21%2B00%3A00&end=2026-11-22T01%3A25%3A21%2B00%3A00"},
		{fixture: "events_window_start_end_naive", bucket: window,
			q:       EventQuery{Start: captureT.Add(-30 * time.Minute), End: captureT.Add(-10 * time.Minute)},
			wantURI: "/api/0/buckets/aw-watcher-window_testhost/events?start=2026-11-22T01%3A05%3A21%2B00%3A00&end=2026-11-22T01%3A25%3A21%2B00%3A00"},
		{fixture: "events_afk_start_end_zulu", bucket: afk,
			q:       EventQuery{Start: captureT.Add(-15 * time.Minute), End: captureT},
			wantURI: "/api/0/buckets/aw-watcher-afk_testhost/events?start=2026-11-22T01%3A20%3A21%2B00%3A00&end=2026-11-22T01%3A35%3A21%2B00%3A00"},
		{fixture: "events_fractional_timestamps", bucket: "aw-fixture-fraction_testhost"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			f := loadFixture(t, tt.fixture)
			fs := newFixtureServer(t, f)
			c := fixtureClient(t, fs, Options{})
			events, err := c.Events(testCtx(t), tt.bucket, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			checkEventsMatch(t, events, f.BodyRaw)
			reqs := fs.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			want := tt.wantURI
			if want == "" {
				want = f.Request.Path
			}
			if reqs[0].RequestURI != want {
				t.Errorf("request URI\n got %s\nwant %s", reqs[0].RequestURI, want)
			}
		})
	}
}

// TestEventCountFixtures: the count endpoint as the real aw-server answers
// it (a plain integer), with and without a range, sent in the fixtures'
// exact form.
func TestEventCountFixtures(t *testing.T) {
	window := "aw-watcher-window_testhost"
	for _, tt := range []struct {
		fixture    string
		start, end time.Time
		want       int64
	}{
		{fixture: "eventcount_window", want: 11},
		{fixture: "eventcount_window_start_end", start: captureT.Add(-30 * time.Minute), end: captureT.Add(-10 * time.Minute), want: 3},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			f := loadFixture(t, tt.fixture)
			fs := newFixtureServer(t, f)
			c := fixtureClient(t, fs, Options{})
			n, err := c.EventCount(testCtx(t), window, tt.start, tt.end)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("count %d, want %d", n, tt.want)
			}
			if reqs := fs.requests(); len(reqs) != 1 || reqs[0].RequestURI != f.Request.Path {
				t.Errorf("requests %+v, want exactly %s", reqs, f.Request.Path)
			}
		})
	}
	fs := newFixtureServer(t, loadFixture(t, "events_unknown_bucket_404"))
	fs.fixtures[0].Request.Path = "/api/0/buckets/aw-watcher-window_nosuchhost/events/count"
	c := fixtureClient(t, fs, Options{})
	if _, err := c.EventCount(testCtx(t), "aw-watcher-window_nosuchhost", time.Time{}, time.Time{}); KindOf(err) != NotFound {
		t.Errorf("unknown bucket: %v, want NotFound", err)
	}
}

func TestEventsFractionalTimestamps(t *testing.T) {
	f := loadFixture(t, "events_fractional_timestamps")
	fs := newFixtureServer(t, f)
	c := fixtureClient(t, fs, Options{})
	events, err := c.Events(testCtx(t), "aw-fixture-fraction_testhost", EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ts  time.Time
		dur float64
		end time.Time
	}{
		{time.Date(2026, 11, 22, 1, 0, 0, 500000000, time.UTC), 0.25, time.Date(2026, 11, 22, 1, 0, 0, 750000000, time.UTC)},
		{time.Date(2026, 11, 22, 1, 0, 0, 123000000, time.UTC), 1.5, time.Date(2026, 11, 22, 1, 0, 1, 623000000, time.UTC)},
	}
	if len(events) != len(want) {
		t.Fatalf("%d events", len(events))
	}
	for i, w := range want {
		if !events[i].Timestamp.Equal(w.ts) || events[i].Duration != w.dur || !events[i].End().Equal(w.end) {
			t.Errorf("event %d = %v + %v (end %v), want %v + %v (end %v)",
				i, events[i].Timestamp, events[i].Duration, events[i].End(), w.ts, w.dur, w.end)
		}
	}
}

func TestEventsLimitZeroMeansAll(t *testing.T) {
	// limit=0 makes aw-server answer [] (events_window_limit0): the client
	// must not send it for the zero EventQuery.
	all, zero := loadFixture(t, "events_window_all"), loadFixture(t, "events_window_limit0")
	fs := newFixtureServer(t, all, zero)
	c := fixtureClient(t, fs, Options{})
	for _, limit := range []int{0, -1} {
		events, err := c.Events(testCtx(t), "aw-watcher-window_testhost", EventQuery{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 11 {
			t.Errorf("Limit %d: %d events, want all 11", limit, len(events))
		}
	}
	for _, r := range fs.requests() {
		if r.Served != "events_window_all" {
			t.Errorf("request %s served %s", r.RequestURI, r.Served)
		}
	}
	// And the limit0 body itself decodes to an empty, non-nil list.
	events, err := decodeEventList([]byte(zero.BodyRaw), false)
	if err != nil || events == nil || len(events) != 0 {
		t.Errorf("decode limit0 body = %v, %v", events, err)
	}
}

func TestEventsTrailingSlashNeverSent(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "events_window_all"), loadFixture(t, "events_trailing_slash_404"))
	c := fixtureClient(t, fs, Options{})
	if _, err := c.Events(testCtx(t), "aw-watcher-window_testhost", EventQuery{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range fs.requests() {
		if r.Served != "events_window_all" {
			t.Errorf("request %s served %s", r.RequestURI, r.Served)
		}
	}
}

func TestEventsHTML404IsNotNotFound(t *testing.T) {
	// The HTML 404 of a route that does not exist (as after a wrong path
	// prefix) must not read as "the bucket vanished".
	f := loadFixture(t, "events_trailing_slash_404")
	f.Request.Path = "/api/0/buckets/aw-watcher-window_testhost/events"
	fs := newFixtureServer(t, f)
	c := fixtureClient(t, fs, Options{})
	_, err := c.Events(testCtx(t), "aw-watcher-window_testhost", EventQuery{})
	e := asError(t, err)
	if e.Kind != HTTPStatus || e.Status != 404 || !strings.Contains(e.Message, "no such route") {
		t.Errorf("HTML 404: %v (%+v)", err, e)
	}
	if strings.Contains(err.Error(), "<") {
		t.Errorf("error text holds HTML: %v", err)
	}
	if n := len(fs.requests()); n != 1 {
		t.Errorf("404 retried: %d requests", n)
	}
}

func TestEventsUnknownBucketFixture(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "events_unknown_bucket_404"))
	c := fixtureClient(t, fs, Options{})
	_, err := c.Events(testCtx(t), "aw-watcher-window_nosuchhost", EventQuery{Limit: 10})
	e := asError(t, err)
	if e.Kind != NotFound || e.Status != 404 || KindOf(err) != NotFound {
		t.Fatalf("err = %v, want NotFound 404", err)
	}
	if !strings.HasPrefix(e.Message, "There's no bucket named aw-watcher-window_nosuchhost") {
		t.Errorf("message = %q", e.Message)
	}
	if len(e.Message) > maxMessageBytes {
		t.Errorf("message not bounded: %d bytes", len(e.Message))
	}
	if n := len(fs.requests()); n != 1 {
		t.Errorf("404 retried: %d requests", n)
	}
}

func TestEvents500Fixtures(t *testing.T) {
	// The client cannot send start=yesterday or limit=abc (its query is
	// typed), so the recorded 500 answers are replayed on a request it does
	// send. A 500 is retried, then kept as HTTPStatus with its message.
	for _, name := range []string{"events_bad_start_500", "events_limit_not_int_500"} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			f.Request.Path = "/api/0/buckets/aw-watcher-window_testhost/events?limit=1"
			fs := newFixtureServer(t, f)
			c := fixtureClient(t, fs, Options{})
			_, err := c.Events(testCtx(t), "aw-watcher-window_testhost", EventQuery{Limit: 1})
			e := asError(t, err)
			if e.Kind != HTTPStatus || e.Status != 500 || e.Message != "Internal Server Error" {
				t.Errorf("err = %v", err)
			}
			if n := len(fs.requests()); n != DefaultRetryMax+1 {
				t.Errorf("%d requests, want %d (retried)", n, DefaultRetryMax+1)
			}
		})
	}
}

func TestWrongHostHeaderFixtures(t *testing.T) {
	tests := []struct {
		fixture, host string
		call          func(*Client, context.Context) error
	}{
		{"wrong_host_header_400", "evil.example.com", func(c *Client, ctx context.Context) error { _, err := c.Info(ctx); return err }},
		{"wrong_host_header_buckets_400", "attacker.test:5600", func(c *Client, ctx context.Context) error { _, err := c.Buckets(ctx); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			fs := newFixtureServer(t, loadFixture(t, tt.fixture))
			c := fixtureClient(t, fs, Options{HostHeader: tt.host})
			err := tt.call(c, testCtx(t))
			e := asError(t, err)
			if e.Kind != HTTPStatus || e.Status != 400 || !errors.Is(err, ErrHostRejected) {
				t.Fatalf("err = %v", err)
			}
			for _, want := range []string{"AWBRIDGE_AW_HOST_HEADER", "127.0.0.1", tt.host} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if n := len(fs.requests()); n != 1 {
				t.Errorf("400 retried: %d requests", n)
			}
		})
	}
}

// dialTo returns a transport that connects every request to addr, whatever
// its URL says (a container name, an IPv6 literal).
func dialTo(addr string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}}
}

func TestDefaultHostHeader(t *testing.T) {
	tests := []struct {
		baseURL, override, wantHost string
		wantOK                      bool
	}{
		{"http://aw-server:5600", "", "127.0.0.1:5600", true},
		{"http://activitywatch.internal", "", "127.0.0.1", true},
		{"http://127.0.0.1:5600", "", "127.0.0.1:5600", true},
		{"http://localhost:5600", "", "localhost:5600", true},
		{"http://[::1]:5600", "", "localhost:5600", true},
		{"http://0.0.0.0:5600", "", "127.0.0.1:5600", true},
		{"http://192.0.2.7:5600", "", "192.0.2.7:5600", false}, // as is: only a server started with --host 192.0.2.7 accepts it
		{"http://aw-server:5600", "localhost:5600", "localhost:5600", true},
		{"http://aw-server:5600", "evil.example.com", "evil.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.baseURL+"/"+tt.override, func(t *testing.T) {
			fs := newFixtureServer(t, loadFixture(t, "info"))
			c := fixtureClient(t, fs, Options{BaseURL: tt.baseURL, HostHeader: tt.override, Transport: dialTo(fs.Listener.Addr().String())})
			if c.hostHeader != tt.wantHost {
				t.Errorf("HostHeader() = %q, want %q", c.hostHeader, tt.wantHost)
			}
			_, err := c.Info(testCtx(t))
			if (err == nil) != tt.wantOK {
				t.Errorf("Info err = %v, want ok=%v", err, tt.wantOK)
			}
			if !tt.wantOK && !errors.Is(err, ErrHostRejected) {
				t.Errorf("err = %v, want ErrHostRejected", err)
			}
			if got := fs.requests()[0].Host; got != tt.wantHost {
				t.Errorf("server saw Host %q, want %q", got, tt.wantHost)
			}
		})
	}
}

func TestAPIKey(t *testing.T) {
	const key = "k3y-THAT-must-not-leak"
	var (
		mu      sync.Mutex
		gotAuth []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/api/0/info" {
			w.Write([]byte(`{"hostname":"h","version":"v0.13.1 (rust)","testing":false,"device_id":"d"}`))
			return
		}
		// aw-server-rust's answer with [auth] api_key set and a bad key.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"message":"Missing or invalid API key. Set 'Authorization: Bearer <key>' header."}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	if _, err := c.Info(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Buckets(testCtx(t))
	e := asError(t, err)
	if e.Kind != HTTPStatus || e.Status != 401 || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "API key") {
		t.Errorf("error %q does not hint at the API key", err)
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("error leaks the key: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gotAuth) != 2 {
		t.Fatalf("%d requests (a 401 must not be retried)", len(gotAuth))
	}
	for _, a := range gotAuth {
		if a != "Bearer "+key {
			t.Errorf("Authorization = %q", a)
		}
	}
}

func TestNewOptions(t *testing.T) {
	const key = "sekrit\nkey"
	bad := []Options{
		{BaseURL: "ftp://127.0.0.1:5600"},
		{BaseURL: "http://"},
		{BaseURL: "127.0.0.1:5600"},
		{BaseURL: "http://user:pw@127.0.0.1:5600"},
		{BaseURL: "http://127.0.0.1:5600/?x=1"},
		{BaseURL: "http://127.0.0.1:5600/?"},
		{BaseURL: "http://127.0.0.1:5600/#frag"},
		{BaseURL: "http://127.0.0.1:0"},
		{BaseURL: "http://127.0.0.1:99999"},
		{HostHeader: "a b"},
		{HostHeader: "a/b"},
		{HostHeader: "user@host"},
		{APIKey: key},
		{UserAgent: "x\r\ny"},
		{AttemptTimeout: -1},
		{MaxBodyBytes: -1},
		{BackoffMin: -1},
		{BackoffMin: time.Second, BackoffMax: time.Millisecond},
	}
	for _, o := range bad {
		c, err := New(o)
		if err == nil {
			t.Errorf("New(%+v) = %v, want an error", o, c.BaseURL())
			continue
		}
		if strings.Contains(err.Error(), "sekrit") {
			t.Errorf("error leaks the key: %v", err)
		}
	}
	good := []struct {
		opts     Options
		wantBase string
	}{
		{Options{}, "http://127.0.0.1:5600"},
		{Options{BaseURL: "http://127.0.0.1:5600/"}, "http://127.0.0.1:5600"},
		{Options{BaseURL: "https://aw.example.com/aw/"}, "https://aw.example.com/aw"},
		{Options{BaseURL: "http://[::1]:5600", RetryMax: -1, HostHeader: "localhost:5600"}, "http://[::1]:5600"},
	}
	for _, g := range good {
		c, err := New(g.opts)
		if err != nil {
			t.Errorf("New(%+v): %v", g.opts, err)
			continue
		}
		if c.BaseURL() != g.wantBase {
			t.Errorf("BaseURL() = %q, want %q", c.BaseURL(), g.wantBase)
		}
	}
}

func TestBucketIDValidation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request sent for an invalid bucket id: %s", r.RequestURI)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "a/b", ".", "..", strings.Repeat("a", maxBucketIDLen+1), "a\x00b", "a\nb", "\xff"} {
		_, err := c.Events(testCtx(t), id, EventQuery{})
		if KindOf(err) != InvalidArgument {
			t.Errorf("Events(%q) err = %v, want InvalidArgument", id, err)
		}
	}
	_, err = c.Events(testCtx(t), "ok", EventQuery{Start: captureT, End: captureT.Add(-time.Second)})
	if KindOf(err) != InvalidArgument {
		t.Errorf("end before start: err = %v", err)
	}
}

func TestBucketIDEscaped(t *testing.T) {
	const id = "my bucket?#%+é"
	var (
		mu              sync.Mutex
		gotURI, gotPath string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotURI, gotPath = r.RequestURI, r.URL.Path
		mu.Unlock()
		w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events(testCtx(t), id, EventQuery{Limit: 3}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotPath != "/api/0/buckets/"+id+"/events" {
		t.Errorf("server decoded path %q", gotPath)
	}
	if want := "/api/0/buckets/my%20bucket%3F%23%25+%C3%A9/events?limit=3"; gotURI != want {
		t.Errorf("request URI %q, want %q", gotURI, want)
	}
}

func TestEventQueryEncode(t *testing.T) {
	tests := []struct {
		name    string
		q       EventQuery
		want    string
		wantErr bool
	}{
		{"empty", EventQuery{}, "", false},
		{"limit", EventQuery{Limit: 3}, "limit=3", false},
		{"negative limit is unset", EventQuery{Limit: -1}, "", false},
		{"start only", EventQuery{Start: captureT}, "start=2026-11-22T01%3A35%3A21%2B00%3A00", false},
		{"end only", EventQuery{End: captureT}, "end=2026-11-22T01%3A35%3A21%2B00%3A00", false},
		{"microseconds", EventQuery{Start: captureT.Add(123456 * time.Microsecond)}, "start=2026-11-22T01%3A35%3A21.123456%2B00%3A00", false},
		{"nanoseconds truncated", EventQuery{Start: captureT.Add(500 * time.Millisecond).Add(789)}, "start=2026-11-22T01%3A35%3A21.500000%2B00%3A00", false},
		{"sub-microsecond only", EventQuery{Start: captureT.Add(999)}, "start=2026-11-22T01%3A35%3A21%2B00%3A00", false},
		{"zone converted", EventQuery{Start: captureT.In(time.FixedZone("x", -7*3600))}, "start=2026-11-22T01%3A35%3A21%2B00%3A00", false},
		{"order start end limit", EventQuery{Limit: 2, End: captureT, Start: captureT.Add(-time.Hour)},
			"start=2026-11-22T00%3A35%3A21%2B00%3A00&end=2026-11-22T01%3A35%3A21%2B00%3A00&limit=2", false},
		{"equal start end", EventQuery{Start: captureT, End: captureT}, "start=2026-11-22T01%3A35%3A21%2B00%3A00&end=2026-11-22T01%3A35%3A21%2B00%3A00", false},
		{"end before start", EventQuery{Start: captureT, End: captureT.Add(-1)}, "", true},
		{"year 10000", EventQuery{End: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.encode()
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("encode() = %q, %v; want %q, err=%v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "events", Kind: NotFound, Status: 404, Message: "There's no bucket named x"}, "aw events: not found 404: There's no bucket named x"},
		{&Error{Op: "info", Kind: Timeout, Err: context.DeadlineExceeded}, "aw info: timeout: context deadline exceeded"},
		{&Error{Op: "buckets", Kind: Malformed, Err: errors.New("bucket 0: missing type")}, "aw buckets: malformed response: bucket 0: missing type"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	wrapped := errors.Join(errors.New("outer"), &Error{Kind: Timeout, Err: context.DeadlineExceeded})
	if KindOf(wrapped) != Timeout || !errors.Is(wrapped, context.DeadlineExceeded) {
		t.Errorf("KindOf/Unwrap through a wrapper failed")
	}
	if KindOf(errors.New("x")) != "" {
		t.Errorf("KindOf(plain error) != \"\"")
	}
}
