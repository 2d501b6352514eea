package awsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// The fixture replay holds the simulator to a real aw-server: every
// recorded exchange in testdata/awfixtures (recorded from a real aw-server)
// of an endpoint the simulator serves is replayed against a simulator
// loaded with the same state the recording had, and the answers are
// compared: status, content type and the body's JSON value, with the two
// volatile values masked (bucket "created" times and the "device_id") and
// an error message only as far as the simulator writes it (flask-restx
// appends "did you mean" help the simulator does not).

// fixtureDir is where the recordings live, relative to this package.
const fixtureDir = "../../testdata/awfixtures"

type fixture struct {
	name        string
	Description string `json:"description"`
	Request     struct {
		Method        string            `json:"method"`
		Path          string            `json:"path"`
		Body          json.RawMessage   `json:"body"`
		Headers       map[string]string `json:"headers"`
		BodyIsRawText bool              `json:"body_is_raw_text"`
		HTTPVersion   string            `json:"http_version"`
	} `json:"request"`
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	Body       json.RawMessage   `json:"body"`
	BodyIsJSON bool              `json:"body_is_json"`
	BodyRaw    string            `json:"body_raw"`
}

type fixtureMeta struct {
	T                 string `json:"T"`
	HostnameInBuckets string `json:"hostname_in_buckets"`
}

func loadFixtures(t *testing.T) (map[string]*fixture, time.Time) {
	t.Helper()
	dir, err := filepath.Abs(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (err %v): the replay needs the shared recordings", dir, err)
	}
	out := map[string]*fixture{}
	var meta fixtureMeta
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if name == "_meta" {
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fx := &fixture{name: name}
		if err := json.Unmarshal(b, fx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = fx
	}
	T, err := time.Parse(time.RFC3339, meta.T)
	if err != nil {
		t.Fatalf("_meta.json T: %v", err)
	}
	if meta.HostnameInBuckets != "testhost" {
		t.Fatalf("_meta.json: buckets say %q, the replay expects testhost", meta.HostnameInBuckets)
	}
	return out, T
}

// harness is a simulator behind a real HTTP server.
type harness struct {
	t   *testing.T
	sim *Server
	srv *httptest.Server
	cli *http.Client
}

func newHarness(t *testing.T, at time.Time) *harness {
	t.Helper()
	sim := New(Options{Hostname: "vm", Now: func() time.Time { return at }, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	cli := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &harness{t: t, sim: sim, srv: srv, cli: cli}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request; host "" means 127.0.0.1:5600 (as recorded).
func (h *harness) do(method, path string, body []byte, header map[string]string) answer {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Host = "127.0.0.1:5600"
	for k, v := range header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.cli.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

func (h *harness) post(path string, v any) answer {
	h.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.do("POST", path, b, map[string]string{"Content-Type": "application/json"})
}

func (h *harness) mustPost(path string, v any) {
	h.t.Helper()
	if a := h.post(path, v); a.status != 200 {
		h.t.Fatalf("setup POST %s: %d %s", path, a.status, a.body)
	}
}

const (
	bWindow = "aw-watcher-window_testhost"
	bAFK    = "aw-watcher-afk_testhost"
	bWeb    = "aw-watcher-web-chrome_testhost"
	bScrtch = "aw-fixture-scratch_testhost"
)

func (h *harness) createBuckets(ids ...string) {
	h.t.Helper()
	meta := map[string][2]string{
		bWindow:                        {"aw-watcher-window", "currentwindow"},
		bAFK:                           {"aw-watcher-afk", "afkstatus"},
		bWeb:                           {"aw-client-web", "web.tab.current"},
		bScrtch:                        {"aw-fixture", "currentwindow"},
		"aw-fixture-fraction_testhost": {"aw-fixture", "currentwindow"},
	}
	for _, id := range ids {
		m := meta[id]
		h.mustPost("/api/0/buckets/"+id, map[string]string{"client": m[0], "type": m[1], "hostname": "testhost"})
	}
}

// recordedEvent is one event of an events_*_all fixture body.
type recordedEvent struct {
	ID        int64           `json:"id"`
	Timestamp string          `json:"timestamp"`
	Duration  float64         `json:"duration"`
	Data      json.RawMessage `json:"data"`
	bucket    string
}

// recordedEvents returns the events the recordings ended with, in id order
// (the order the server assigned them).
func recordedEvents(t *testing.T, fx map[string]*fixture) []recordedEvent {
	t.Helper()
	var all []recordedEvent
	for name, b := range map[string]string{"events_window_all": bWindow, "events_afk_all": bAFK, "events_web_all": bWeb} {
		var evs []recordedEvent
		if err := json.Unmarshal(fx[name].Body, &evs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range evs {
			evs[i].bucket = b
		}
		all = append(all, evs...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// load inserts events through the REST API, one POST each, in the order
// the server assigned their ids. override changes a duration by id.
func (h *harness) load(evs []recordedEvent, upToID int64, override map[int64]float64) {
	h.t.Helper()
	for _, e := range evs {
		if e.ID > upToID {
			break
		}
		dur := e.Duration
		if d, ok := override[e.ID]; ok {
			dur = d
		}
		h.mustPost("/api/0/buckets/"+e.bucket+"/events", map[string]any{"timestamp": e.Timestamp, "duration": dur, "data": e.Data})
	}
}

// readState is the server after loading finished: 3 buckets, 18 events.
func readState(t *testing.T, fx map[string]*fixture, at time.Time) *harness {
	h := newHarness(t, at)
	h.createBuckets(bWindow, bAFK, bWeb)
	h.load(recordedEvents(t, fx), 1<<62, nil)
	return h
}

// stateSetups build the state a state-changing fixture was captured in
// (README: "captured during loading, at the step where they happened").
func stateSetups(fx map[string]*fixture, at time.Time) map[string]func(t *testing.T) *harness {
	// Before the heartbeats: the inserted not-afk event ran T-25..T-3.
	beforeHB := func(t *testing.T) *harness {
		evs := recordedEvents(t, fx)
		h := newHarness(t, at)
		h.createBuckets(bWindow, bAFK, bWeb)
		h.load(evs, 15, map[int64]float64{12: 1320})
		return h
	}
	replay := func(h *harness, name string) {
		f := fx[name]
		a := h.do(f.Request.Method, f.Request.Path, f.Request.Body, f.Request.Headers)
		if a.status != f.Status {
			h.t.Fatalf("setup replay of %s: %d %s", name, a.status, a.body)
		}
	}
	scratch := func(t *testing.T) *harness {
		h := readState(t, fx, at)
		h.createBuckets(bScrtch)
		return h
	}
	return map[string]func(t *testing.T) *harness{
		"create_bucket_200": func(t *testing.T) *harness { return newHarness(t, at) },
		"create_bucket_exists_304": func(t *testing.T) *harness {
			h := newHarness(t, at)
			h.createBuckets(bWindow)
			return h
		},
		"insert_single_event": func(t *testing.T) *harness {
			h := newHarness(t, at)
			h.createBuckets(bWindow, bAFK, bWeb)
			return h
		},
		"insert_events_list": func(t *testing.T) *harness {
			h := newHarness(t, at)
			h.createBuckets(bWindow, bAFK, bWeb)
			h.load(recordedEvents(t, fx), 1, nil)
			return h
		},
		"heartbeat_afk_merged":       beforeHB,
		"heartbeat_window_new_event": beforeHB,
		"heartbeat_window_merged": func(t *testing.T) *harness {
			h := beforeHB(t)
			replay(h, "heartbeat_window_new_event")
			return h
		},
		"heartbeat_window_data_changed": func(t *testing.T) *harness {
			h := beforeHB(t)
			replay(h, "heartbeat_window_new_event")
			// Code / main.go heartbeats ran every second until T-90s.
			for ts := at.Add(-179 * time.Second); !ts.After(at.Add(-90 * time.Second)); ts = ts.Add(time.Second) {
				h.mustPost("/api/0/buckets/"+bWindow+"/heartbeat?pulsetime=2.0", map[string]any{
					"timestamp": ts.Format(time.RFC3339), "duration": 0,
					"data": map[string]string{"app": "Code", "title": "main.go - aw-bridge - Visual Studio Code"}})
			}
			return h
		},
		"heartbeat_gap_beyond_pulsetime": func(t *testing.T) *harness {
			h := scratch(t)
			h.mustPost("/api/0/buckets/"+bScrtch+"/heartbeat?pulsetime=2.0", map[string]any{
				"timestamp": "2026-11-22T01:34:51+00:00", "duration": 0, "data": map[string]string{"app": "Code", "title": "x"}})
			return h
		},
		"heartbeat_invalid_body_400":      scratch,
		"heartbeat_missing_pulsetime_400": scratch,
		"heartbeat_unknown_bucket_404":    func(t *testing.T) *harness { return readState(t, fx, at) },
		"delete_bucket_without_force_401": scratch,
		"delete_bucket_force_200":         scratch,
		// Captured after the reads on its own scratch bucket: the two
		// events the description names, inserted as one array.
		"events_fractional_timestamps": func(t *testing.T) *harness {
			h := readState(t, fx, at)
			h.createBuckets("aw-fixture-fraction_testhost")
			h.mustPost("/api/0/buckets/aw-fixture-fraction_testhost/events", []map[string]any{
				{"timestamp": "2026-11-22T01:00:00.123456Z", "duration": 1.5, "data": map[string]string{"app": "a", "title": "b"}},
				{"timestamp": "2026-11-22T03:00:00.5+02:00", "duration": 0.25, "data": map[string]string{"app": "a", "title": "c"}},
			})
			return h
		},
	}
}

// simulated reports whether the simulator serves the endpoint of a recorded
// exchange: not the query language, Swagger, CORS, redirects, the web UI,
// single events by id, HTML error pages or the Host header check.
func simulated(f *fixture) bool {
	for k, v := range f.Request.Headers {
		if k != "Content-Type" && (k != "Host" || v != "localhost:5600") {
			return false
		}
	}
	if f.Request.HTTPVersion != "" {
		return false
	}
	path, _, _ := strings.Cut(f.Request.Path, "?")
	ok := path == "/api/0/info" || path == "/api/0/buckets/" || path == "/api/0/settings" ||
		strings.HasPrefix(path, "/api/0/settings/")
	if id, rest, found := strings.Cut(strings.TrimPrefix(path, "/api/0/buckets/"), "/"); strings.HasPrefix(path, "/api/0/buckets/") && id != "" {
		ok = ok || !found || rest == "events" || rest == "events/count" || rest == "heartbeat"
	}
	return ok
}

// mask hides the values that differ between any two servers.
func mask(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "created" || k == "device_id" {
				t[k] = "*"
			} else {
				t[k] = mask(x)
			}
		}
	case []any:
		for i := range t {
			t[i] = mask(t[i])
		}
	}
	return v
}

func TestFixtureReplay(t *testing.T) {
	fx, T := loadFixtures(t)
	setups := stateSetups(fx, T)
	shared := readState(t, fx, T)
	names := make([]string, 0, len(fx))
	for n := range fx {
		names = append(names, n)
	}
	sort.Strings(names)
	replayed := 0
	for _, name := range names {
		f := fx[name]
		if !simulated(f) {
			continue
		}
		replayed++
		t.Run(name, func(t *testing.T) {
			h := shared
			if setup, ok := setups[name]; ok {
				h = setup(t)
			}
			h.t = t
			defer func() { shared.t = nil }()
			var body []byte
			if len(f.Request.Body) > 0 && string(f.Request.Body) != "null" {
				body = f.Request.Body
				var text string
				if f.Request.BodyIsRawText && json.Unmarshal(f.Request.Body, &text) == nil {
					body = []byte(text)
				}
			}
			a := h.do(f.Request.Method, f.Request.Path, body, f.Request.Headers)
			if a.status != f.Status || a.header.Get("Content-Type") != f.Headers["Content-Type"] {
				t.Fatalf("%d %q, recorded %d %q (body %.300s)", a.status, a.header.Get("Content-Type"), f.Status, f.Headers["Content-Type"], a.body)
			}
			if !f.BodyIsJSON {
				return
			}
			var got, want any
			if err := json.Unmarshal(a.body, &got); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, a.body)
			}
			_ = json.Unmarshal(f.Body, &want)
			got, want = mask(got), mask(want)
			if g, ok := got.(map[string]any); ok && g["message"] != nil {
				w, _ := want.(map[string]any)
				wm, _ := w["message"].(string)
				if gm, _ := g["message"].(string); gm == "" || !strings.HasPrefix(wm, gm) {
					t.Errorf("message %q, recorded %q", gm, wm)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body differs\n got: %s\nwant: %s", a.body, f.BodyRaw)
			}
		})
	}
	if replayed < 40 {
		t.Errorf("%d exchanges replayed, want the 40 or so of the endpoints the simulator serves", replayed)
	}
	t.Logf("%d of %d recorded exchanges replayed", replayed, len(fx))
}
