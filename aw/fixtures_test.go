package aw

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixture is one recorded exchange with a real aw-server
// (/work/shared/fixtures/aw, see its README).
type fixture struct {
	name        string
	Description string `json:"description"`
	Request     struct {
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	BodyRaw string            `json:"body_raw"`
}

// fixtureDir is the repository's copy of the recorded exchanges
// (testdata/awfixtures, recorded from a real aw-server).
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "awfixtures"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadFixture(t testing.TB, name string) fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir(t), name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	f.name = name
	return f
}

// seenRequest is what the fixture server received.
type seenRequest struct {
	Method     string
	RequestURI string // raw path and query as sent
	Host       string
	Header     http.Header
	Served     string // fixture name, "" if none matched
}

// fixtureServer replays fixtures on a real HTTP server. A request is served
// the first fixture whose method and raw path+query match exactly; failing
// that, one whose path matches and whose query is equivalent (start/end
// compared as instants, so "Z", "+02:00" and naive UTC forms match what the
// client sends). Like aw-server, it answers a Host other than localhost or
// 127.0.0.1 with 400 unless the fixture recorded that Host. Unmatched
// requests fail the test.
type fixtureServer struct {
	*httptest.Server
	t        testing.TB
	fixtures []fixture
	mu       sync.Mutex
	seen     []seenRequest
}

func newFixtureServer(t testing.TB, fixtures ...fixture) *fixtureServer {
	t.Helper()
	fs := &fixtureServer{t: t, fixtures: fixtures}
	fs.Server = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fixtureServer) requests() []seenRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]seenRequest(nil), fs.seen...)
}

func (fs *fixtureServer) serve(w http.ResponseWriter, r *http.Request) {
	seen := seenRequest{Method: r.Method, RequestURI: r.RequestURI, Host: r.Host, Header: r.Header.Clone()}
	f, ok := fs.match(r)
	if ok {
		seen.Served = f.name
	}
	fs.mu.Lock()
	fs.seen = append(fs.seen, seen)
	fs.mu.Unlock()
	if !ok {
		fs.t.Errorf("fixture server: unexpected request %s %s (Host %s)", r.Method, r.RequestURI, r.Host)
		http.Error(w, "no fixture", http.StatusTeapot)
		return
	}
	for _, h := range []string{"Content-Type", "Location"} {
		if v, ok := f.Headers[h]; ok {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(f.BodyRaw))
}

func (fs *fixtureServer) match(r *http.Request) (fixture, bool) {
	host := hostOnly(r.Host)
	var candidates []fixture
	for _, f := range fs.fixtures {
		if f.Request.Method != r.Method {
			continue
		}
		if want, ok := f.Request.Headers["Host"]; ok {
			if hostOnly(want) != host {
				continue
			}
		} else if host != "localhost" && host != "127.0.0.1" {
			continue
		}
		candidates = append(candidates, f)
	}
	for _, f := range candidates {
		if f.Request.Path == r.RequestURI {
			return f, true
		}
	}
	for _, f := range candidates {
		if equivalentURI(f.Request.Path, r.RequestURI) {
			return f, true
		}
	}
	// aw-server's host check, for a Host no fixture recorded.
	if host != "localhost" && host != "127.0.0.1" && strings.HasPrefix(r.URL.Path, "/api/") {
		return fixture{
			name:    "host-check",
			Status:  http.StatusBadRequest,
			Headers: map[string]string{"Content-Type": "application/json"},
			BodyRaw: `{"message":"host header is invalid (was ` + r.Host + `)"}` + "\n",
		}, true
	}
	return fixture{}, false
}

func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// equivalentURI reports whether two request URIs have the same path and the
// same query, with start and end compared as instants.
func equivalentURI(a, b string) bool {
	ua, err1 := url.ParseRequestURI(a)
	ub, err2 := url.ParseRequestURI(b)
	if err1 != nil || err2 != nil || ua.EscapedPath() != ub.EscapedPath() {
		return false
	}
	qa, qb := ua.Query(), ub.Query()
	if len(qa) != len(qb) {
		return false
	}
	for k, va := range qa {
		vb := qb[k]
		if len(va) != 1 || len(vb) != 1 {
			return false
		}
		if k == "start" || k == "end" {
			ta, oka := parseLooseTime(va[0])
			tb, okb := parseLooseTime(vb[0])
			if !oka || !okb || !ta.Equal(tb) {
				return false
			}
			continue
		}
		if va[0] != vb[0] {
			return false
		}
	}
	return true
}

// parseLooseTime parses ISO 8601 as aw-server does: with an offset, "Z", or
// naive (UTC).
func parseLooseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// fixtureClient returns a client for fs with fast retries.
func fixtureClient(t testing.TB, fs *fixtureServer, opts Options) *Client {
	t.Helper()
	if opts.BaseURL == "" {
		opts.BaseURL = fs.URL
	}
	if opts.BackoffMin == 0 {
		opts.BackoffMin, opts.BackoffMax = time.Millisecond, 5*time.Millisecond
	}
	if opts.AttemptTimeout == 0 {
		opts.AttemptTimeout = 10 * time.Second
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}
