// Package awfixture loads the recorded aw-server exchanges of
// testdata/awfixtures (recorded from a real aw-server) and serves them
// byte for byte, for tests that need a real HTTP ActivityWatch.
package awfixture

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// T is the capture instant of the fixtures (see _meta.json).
var T = time.Date(2026, 11, 22, 1, 35, 21, 0, time.UTC)

// Exchange is one recorded request and response.
type Exchange struct {
	Name    string
	Request struct {
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Body    json.RawMessage   `json:"body"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	BodyRaw string            `json:"body_raw"`
}

// Load reads every exchange of testdata/awfixtures, found from this
// file's place in the source tree, keyed by file name without .json.
func Load() (map[string]*Exchange, error) {
	_, file, _, _ := runtime.Caller(0)
	files, err := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "awfixtures", "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]*Exchange{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if strings.HasPrefix(name, "_") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var x Exchange
		if err := json.Unmarshal(b, &x); err != nil {
			return nil, fmt.Errorf("awfixture: %s: %w", name, err)
		}
		x.Name = name
		out[name] = &x
	}
	return out, nil
}

// Server serves recorded exchanges by method and path (with query). The
// bridge asks for limit=N of events; Server answers those from the
// "_all" recordings, cut to N, so the bytes stay the server's. Routes
// can be overridden per test. Safe for concurrent use.
type Server struct {
	mu     sync.Mutex
	routes map[string]func(w http.ResponseWriter, r *http.Request)
	// all are the "_all" recordings by path, for end=...&limit=N.
	all  map[string]*Exchange
	hits map[string]int // requests per path
}

// NewServer serves the GET exchanges of xs.
func NewServer(xs map[string]*Exchange) *Server {
	s := &Server{routes: map[string]func(http.ResponseWriter, *http.Request){}, hits: map[string]int{}, all: map[string]*Exchange{}}
	names := slices.Sorted(maps.Keys(xs))
	// Successful exchanges win a path; error recordings of the same path
	// (a missing Host header, say) only fill paths nothing else answers.
	for _, okOnly := range []bool{true, false} {
		for _, n := range names {
			x := xs[n]
			route := "GET " + x.Request.Path
			if x.Request.Method != http.MethodGet || len(x.Request.Headers) > 0 || (okOnly && x.Status != http.StatusOK) {
				continue
			}
			if _, taken := s.routes[route]; !taken {
				s.routes[route] = replay(x)
			}
		}
	}
	for _, n := range names {
		x := xs[n]
		if strings.HasPrefix(n, "events_") && strings.HasSuffix(n, "_all") {
			path := strings.SplitN(x.Request.Path, "?", 2)[0]
			for _, lim := range []int{1, 2, 3} {
				s.routes[fmt.Sprintf("GET %s?limit=%d", path, lim)] = ReplayEvents(x, lim)
			}
			s.all[path] = x
		}
	}
	return s
}

// Handle overrides the route "METHOD /path?query".
func (s *Server) Handle(route string, h func(w http.ResponseWriter, r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[route] = h
}

// Hits returns how many requests reached path (without query).
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.RequestURI()
	s.mu.Lock()
	h := s.routes[key]
	s.hits[r.URL.Path]++
	if x := s.all[r.URL.Path]; h == nil && x != nil {
		h = replayUntil(x, r.URL.Query())
	}
	s.mu.Unlock()
	if h == nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n")
		return
	}
	h(w, r)
}

// replay writes x's recorded status, content type and exact body.
func replay(x *Exchange) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for _, k := range []string{"Content-Type", "Location"} {
			if v := x.Headers[k]; v != "" {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(x.Status)
		fmt.Fprint(w, x.BodyRaw)
	}
}

// replayUntil answers "?end=...&limit=N" (the query the bridge sends
// when the newest events start in the future) from an "_all" recording as
// aw-server does: events that start after end (rounded down to the
// millisecond, plus 1 ms) are left out, those that end after it are
// clipped, newest first. It returns nil for any other query.
func replayUntil(x *Exchange, q url.Values) func(http.ResponseWriter, *http.Request) {
	n, err := strconv.Atoi(q.Get("limit"))
	end, terr := time.Parse(time.RFC3339Nano, q.Get("end"))
	if len(q) != 2 || err != nil || n <= 0 || terr != nil {
		return nil
	}
	end = end.Truncate(time.Millisecond).Add(time.Millisecond)
	var evs []struct {
		ID        int64           `json:"id"`
		Timestamp time.Time       `json:"timestamp"`
		Duration  float64         `json:"duration"`
		Data      json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(x.Body, &evs)
	var out []json.RawMessage
	for _, e := range evs {
		if len(out) == n || e.Timestamp.After(end) {
			continue
		}
		if e.Timestamp.Add(time.Duration(e.Duration * float64(time.Second))).After(end) {
			e.Duration = end.Sub(e.Timestamp).Seconds()
		}
		b, _ := json.Marshal(map[string]any{"id": e.ID, "timestamp": e.Timestamp.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00",
			"duration": e.Duration, "data": e.Data})
		out = append(out, b)
	}
	body, _ := json.Marshal(out)
	if out == nil {
		body = []byte("[]")
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
		w.Write([]byte("\n"))
	}
}

// ReplayEvents answers with the first n events of an "_all" recording,
// re-serialised in the server's own style.
func ReplayEvents(x *Exchange, n int) func(http.ResponseWriter, *http.Request) {
	var evs []json.RawMessage
	_ = json.Unmarshal(x.Body, &evs)
	if len(evs) > n {
		evs = evs[:n]
	}
	body, _ := json.Marshal(evs)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
		w.Write([]byte("\n"))
	}
}
