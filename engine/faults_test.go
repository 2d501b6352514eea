package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
)

// TestActivityWatchFaults: for each way ActivityWatch can fail, the frame
// still answers with aw fields null and the reason, aw_get_state is a
// retryable AwUnavailable (or, when ActivityWatch refused us, an AuthError
// naming the setting to fix, which never opens the circuit), health is
// degraded, and the engine keeps serving.
func TestActivityWatchFaults(t *testing.T) {
	faults := []struct {
		name string
		h    http.HandlerFunc
		want string // in the error message
		// timeout is the source's deadline: short where the fault is
		// slowness, generous where a slow machine must not turn another
		// fault into a timeout.
		timeout time.Duration
		// refused is the AuthError code when ActivityWatch refused us,
		// and setting the setting its hint names.
		refused, setting string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			w.Write([]byte(`{"message": "Internal Server Error"}`))
		}, "500", 5 * time.Second, "", ""},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><title>not ActivityWatch</title>"))
		}, "JSON", 5 * time.Second, "", ""},
		{"invalid json", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"hostname": "vm", "version": `))
		}, "JSON", 5 * time.Second, "", ""},
		{"huge body", func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte(" "), 64<<10)
			w.Write([]byte(`{"hostname":"`))
			for range 200 { // 12.5 MiB, past the 8 MiB bound
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "too large", 10 * time.Second, "", ""},
		{"502 from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<html><h1>502 Bad Gateway</h1></html>"))
		}, "http status 502", 5 * time.Second, "", ""},
		{"503", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(503)
		}, "http status 503", 5 * time.Second, "", ""},
		{"308 loop", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://"+r.Host+r.URL.RequestURI())
			w.WriteHeader(308)
		}, "redirect loop", 5 * time.Second, "", ""},
		{"connection cut mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(`{"hostname": "vm", "vers`))
			w.(http.Flusher).Flush()
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}, "unexpected EOF", 5 * time.Second, "", ""},
		{"host check", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"message":"host header is invalid (was ` + r.Host + `)"}`))
		}, "host header rejected", 5 * time.Second, toolbus.CodeAwHostRejected, "activitywatch.host_header"},
		{"403", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			w.Write([]byte(`{"message": "Forbidden"}`))
		}, "unauthorized", 5 * time.Second, toolbus.CodeAwAuthFailed, "activitywatch.api_key"},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			w.Write([]byte(`{"message":"Missing or invalid API key. Set 'Authorization: Bearer <key>' header."}`))
		}, "unauthorized", 5 * time.Second, toolbus.CodeAwAuthFailed, "AWBRIDGE_AW_API_KEY"},
		{"slower than its deadline", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "deadline", 300 * time.Millisecond, "", ""},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(f.h)
			defer srv.Close()
			c := config.Defaults()
			c.AW.URL = srv.URL
			c.AW.Timeout = f.timeout
			e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()

			out := e.Call(ctx, toolbus.Request{Name: "aw_get_state"})
			if out.Err == nil {
				t.Fatalf("aw_get_state succeeded: %s", out.Body)
			}
			if !strings.Contains(strings.ToLower(out.Err.Error()), strings.ToLower(f.want)) {
				t.Fatalf("message %q does not say %q", out.Err.Message, f.want)
			}
			if f.refused == "" {
				if out.Err == nil || out.Err.Kind != toolbus.ExecutionError || out.Err.Code != toolbus.CodeAwUnavailable ||
					!out.Err.Retryable || out.Stage != toolbus.StageExecute {
					t.Fatalf("aw_get_state: %+v", out.Err)
				}
				if !bytes.Contains(out.Body, []byte(`"status":"Retryable"`)) || !bytes.Contains(out.Body, []byte(`"success":false`)) {
					t.Fatalf("envelope: %s", out.Body)
				}
			} else {
				// A configuration problem: retrying cannot help, the hint
				// names the setting, and however often it happens the
				// circuit stays closed (each call asks ActivityWatch again).
				for i := range 5 {
					if out.Err == nil || out.Err.Kind != toolbus.AuthError || out.Err.Code != f.refused || out.Err.Retryable ||
						out.Err.RetryAfterMs != nil || !strings.Contains(out.Err.Hint, f.setting) || out.Stage != toolbus.StageExecute {
						t.Fatalf("aw_get_state %d: %+v", i+1, out.Err)
					}
					if !bytes.Contains(out.Body, []byte(`"status":"Error"`)) || !bytes.Contains(out.Body, []byte(`"success":false`)) {
						t.Fatalf("envelope: %s", out.Body)
					}
					out = e.Call(ctx, toolbus.Request{Name: "aw_get_state"})
				}
				if st := e.awSrc.Status(); st.Circuit != "closed" || st.Code != f.refused || !st.Misconfigured {
					t.Fatalf("after six refusals: %+v", st)
				}
			}

			out = e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
			var fr struct {
				AWInfo json.RawMessage `json:"aw_info"`
				Now    struct {
					Summary string `json:"summary"`
				} `json:"now"`
				Sources map[string]struct {
					OK    bool    `json:"ok"`
					Error *string `json:"error"`
				} `json:"sources"`
			}
			if out.Err != nil || json.Unmarshal(out.Body, &fr) != nil || string(fr.AWInfo) != "null" ||
				fr.Sources["activitywatch"].OK || fr.Sources["activitywatch"].Error == nil {
				t.Fatalf("frame: %s (%v)", out.Body, out.Err)
			}
			summary := "Unknown: ActivityWatch did not answer"
			if f.refused != "" {
				summary = "Unknown: ActivityWatch refused awbridge's requests"
			}
			if !strings.HasPrefix(fr.Now.Summary, summary) {
				t.Fatalf("frame summary %q, want %q", fr.Now.Summary, summary)
			}

			out = e.Call(ctx, toolbus.Request{Direct: true, Name: "system.health"})
			if !bytes.Contains(out.Body, []byte(`"aw_ok":false`)) || !bytes.Contains(out.Body, []byte(`"status":"degraded"`)) {
				t.Fatalf("health: %s", out.Body)
			}
			if f.refused != "" && !bytes.Contains(out.Body, []byte(`"code":"`+f.refused+`"`)) {
				t.Fatalf("health does not name %s: %s", f.refused, out.Body)
			}
			// Still serving: help answers.
			if out := e.Call(ctx, toolbus.Request{Name: "help"}); out.Err != nil {
				t.Fatalf("help after the fault: %v", out.Err)
			}
		})
	}
}

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// switchable serves the recorded aw-server, or fails with 503 while down
// is set; it counts the requests it gets.
type switchable struct {
	down atomic.Bool
	hits atomic.Int64
	next http.Handler
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	if s.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	s.next.ServeHTTP(w, r)
}

// A session without the poller (stdio in-process) recovers from an
// outage once the circuit's cool-down has passed: until then calls are
// refused without reaching ActivityWatch; then one half-open probe closes
// the circuit (or, if it fails, opens it for another cool-down), and
// health follows.
func TestRecoveryAfterTheCoolDown(t *testing.T) {
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	sw := &switchable{next: awfixture.NewServer(xs)}
	srv := httptest.NewServer(sw)
	defer srv.Close()
	clock := &fakeClock{t: awfixture.T.Add(time.Second)}
	c := config.Defaults()
	c.AW.URL = srv.URL
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	getState := func() toolbus.Response { return e.Call(ctx, toolbus.Request{Name: "aw_get_state"}) }

	sw.down.Store(true)
	for i := range 3 {
		if out := getState(); out.Err == nil || out.Err.Code != toolbus.CodeAwUnavailable {
			t.Fatalf("failure %d: %+v", i+1, out.Err)
		}
	}
	if st := e.awSrc.Status(); st.Circuit != "open" || st.ConsecutiveFailures != 3 {
		t.Fatalf("after three failures: %+v", st)
	}

	// ActivityWatch is back, but the cool-down has not passed.
	sw.down.Store(false)
	clock.Add(9 * time.Second)
	before := sw.hits.Load()
	out := getState()
	if out.Err == nil || out.Err.Code != toolbus.CodeCircuitOpen || *out.Err.RetryAfterMs != 1000 || sw.hits.Load() != before {
		t.Fatalf("during the cool-down: %+v (%d requests)", out.Err, sw.hits.Load()-before)
	}

	// The cool-down passed but ActivityWatch failed again: the probe
	// re-opens the circuit for a full cool-down.
	sw.down.Store(true)
	clock.Add(time.Second)
	if out := getState(); out.Err == nil || out.Err.Code != toolbus.CodeAwUnavailable {
		t.Fatalf("the half-open probe: %+v", out.Err)
	}
	if out := getState(); out.Err == nil || out.Err.Code != toolbus.CodeCircuitOpen || *out.Err.RetryAfterMs != 10_000 {
		t.Fatalf("after a failed probe: %+v", out.Err)
	}

	// Back for good: after the next cool-down one probe closes the circuit.
	sw.down.Store(false)
	clock.Add(10 * time.Second)
	if out := getState(); out.Err != nil || !bytes.Contains(out.Body, []byte(`"circuit":"closed"`)) {
		t.Fatalf("after recovery: %+v %s", out.Err, out.Body)
	}
	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
	if out.Err != nil || !bytes.Contains(out.Body, []byte(`"app":"Google-chrome"`)) || bytes.Contains(out.Body, []byte(`"aw_info":null`)) {
		t.Fatalf("frame after recovery: %s", out.Body)
	}
	// Health refreshes (in the background, at most once a second) and
	// says so.
	clock.Add(2 * time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		h := e.health.Report(ctx)
		if h.AWOK && h.Status == "healthy" && h.Sources.ActivityWatch.Circuit == "closed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health after recovery: %+v", h)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A caller whose own deadline (timeout_ms) is shorter than the source's
// gets a retryable Timeout, and the source is not blamed for it: the
// circuit stays closed however often it happens.
func TestCallerDeadlineIsNotTheSourcesFault(t *testing.T) {
	hang := hangingServer(t)
	c := config.Defaults()
	c.AW.URL = hang.URL
	c.AW.Timeout = time.Minute
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range 5 {
		out := e.Call(context.Background(), toolbus.Request{Name: "aw_get_state", Args: json.RawMessage(`{"timeout_ms":100}`)})
		if out.Err == nil || out.Err.Code != toolbus.CodeTimeout || !out.Err.Retryable ||
			!bytes.Contains(out.Body, []byte(`"status":"Retryable"`)) {
			t.Fatalf("aw_get_state with timeout_ms 100 and a hanging ActivityWatch: %+v %s", out.Err, out.Body)
		}
	}
	if st := e.awSrc.Status(); st.Circuit != "closed" || st.ConsecutiveFailures != 0 || st.Checked {
		t.Fatalf("the source was blamed for the callers' deadlines: %+v", st)
	}
}

// Events from the future (the watcher's clock runs ahead of this
// machine's): an event that starts ahead is never now; one that ends
// ahead is clamped to as_of and flagged with the skew; notes say both;
// ActivityWatch counts as working.
func TestEventsFromTheFuture(t *testing.T) {
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awfixture.NewServer(xs))
	defer srv.Close()
	c := config.Defaults()
	c.AW.URL = srv.URL
	// Two minutes before the capture: the newest window event (T-89 s to
	// T-1 s) lies 31 to 119 s ahead; the one before it (T-180 s to T-90 s)
	// ends 30 s ahead.
	now := awfixture.T.Add(-2 * time.Minute)
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build"})
	var f struct {
		Now struct {
			AsOf   time.Time `json:"as_of"`
			Window struct {
				App        string    `json:"app"`
				Since      time.Time `json:"since"`
				LastSeen   time.Time `json:"last_seen"`
				Age        float64   `json:"age_seconds"`
				Clamped    bool      `json:"future_clamped"`
				Skew       float64   `json:"future_skew_seconds"`
				StaleAfter float64   `json:"stale_after_seconds"`
			} `json:"window"`
			Notes []string `json:"notes"`
		} `json:"now"`
		Sources map[string]struct {
			OK bool `json:"ok"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out.Body, &f); err != nil {
		t.Fatal(err)
	}
	w := f.Now.Window
	if !f.Sources["activitywatch"].OK || w.App != "Code" || !w.Clamped || w.Skew != 30 ||
		!w.LastSeen.Equal(f.Now.AsOf) || !w.Since.Equal(awfixture.T.Add(-3*time.Minute)) || w.Age != 0 {
		t.Fatalf("frame with events ahead of the clock: %s", out.Body)
	}
	for _, note := range []string{"clamped to as_of", "never shown as now"} {
		if !strings.Contains(strings.Join(f.Now.Notes, "\n"), note) {
			t.Fatalf("no note says %q: %q", note, f.Now.Notes)
		}
	}
}

// Every way the sidecar fails leaves the frame's omni_probe null with the
// reason, ActivityWatch's part whole, and health degraded with
// sidecar_probe_status false (run under -race, this covers the sidecar's
// failure paths in the engine).
func TestSidecarFaults(t *testing.T) {
	faults := []struct {
		name, body, want string
		status           int
	}{
		{"an array", `[1,2]`, "not a JSON object", 200},
		{"a string", `"x"`, "not a JSON object", 200},
		{"null", `null`, "not a JSON object", 200},
		{"HTML", `<!doctype html><h1>It works!</h1>`, "not valid JSON", 200},
		{"truncated", `{"ok": tr`, "not valid JSON", 200},
		{"502", `bad gateway`, "HTTP 502", 502},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			sc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(f.status)
				w.Write([]byte(f.body))
			}))
			defer sc.Close()
			e, _ := fixtureEngine(t, func(c *config.Config) { c.Sidecar.URL = sc.URL })
			out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build"})
			var fr struct {
				AWInfo  json.RawMessage `json:"aw_info"`
				Omni    json.RawMessage `json:"omni_probe"`
				Sources map[string]struct {
					OK    bool    `json:"ok"`
					Error *string `json:"error"`
				} `json:"sources"`
			}
			if err := json.Unmarshal(out.Body, &fr); err != nil || string(fr.Omni) != "null" || string(fr.AWInfo) == "null" ||
				fr.Sources["sidecar"].OK || fr.Sources["sidecar"].Error == nil || !strings.Contains(*fr.Sources["sidecar"].Error, f.want) {
				t.Fatalf("frame: %s", out.Body)
			}
			h := e.health.Report(context.Background())
			if h.Status != "degraded" || !h.AWOK || h.SidecarProbeStatus == nil || *h.SidecarProbeStatus || string(h.OmniProbe) != "null" {
				t.Fatalf("health: %+v", h)
			}
		})
	}
}
