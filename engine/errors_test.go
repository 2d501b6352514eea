package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
)

// lockedBuffer is a log sink safe for the engine's goroutines and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// switchEngine is an engine on the recorded aw-server behind a switch
// (503 while down), with a fake clock and its log captured.
func switchEngine(t *testing.T, handler func(sw *switchable) http.Handler) (*Engine, *switchable, *fakeClock, *lockedBuffer) {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	sw := &switchable{next: awfixture.NewServer(xs)}
	var h http.Handler = sw
	if handler != nil {
		h = handler(sw)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	clock := &fakeClock{t: awfixture.T.Add(time.Second)}
	c := config.Defaults()
	c.AW.URL = srv.URL
	c.AW.Timeout = 5 * time.Second
	logs := &lockedBuffer{}
	// The first health call waits for its probe (never "checking" on a
	// slow machine).
	e, err := New(Deps{Config: c, Logger: zerolog.New(logs), Version: "test", Now: clock.Now, HealthFirstWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, sw, clock, logs
}

// An ActivityWatch that flaps (down for a call, up for the next, over and
// over) is logged once per real transition: "source down" once its
// circuit opens, "source up" once it has answered twice in a row since,
// never a line per flip.
func TestFlappingActivityWatchIsLoggedOncePerTransition(t *testing.T) {
	e, sw, clock, logs := switchEngine(t, nil)
	ctx := context.Background()
	// o: ActivityWatch answers, x: it fails (503). The clock passes the
	// cool-down before each call, so an open circuit lets it through.
	run := func(calls string) {
		t.Helper()
		for _, c := range calls {
			sw.down.Store(c == 'x')
			clock.Add(11 * time.Second)
			out := e.Call(ctx, toolbus.Request{Name: "aw_get_state"})
			if (out.Err == nil) != (c == 'o') {
				t.Fatalf("call %c: %+v", c, out.Err)
			}
		}
	}
	count := func() (up, down int) {
		l := logs.String()
		return strings.Count(l, `"message":"source up"`), strings.Count(l, `"message":"source down"`)
	}

	run("oxoxoxoxoxoxoxoxoxox") // flapping: never three failures in a row
	if up, down := count(); up != 1 || down != 0 {
		t.Fatalf("flapping: %d up and %d down lines, want the first up only:\n%s", up, down, logs)
	}
	run("xxx") // the circuit opens: a real outage
	if up, down := count(); up != 1 || down != 1 {
		t.Fatalf("an outage: %d up and %d down lines, want one down:\n%s", up, down, logs)
	}
	run("oxoxox") // it flaps while down: one answer at a time is no recovery
	if up, down := count(); up != 1 || down != 1 {
		t.Fatalf("flapping while down: %d up and %d down lines:\n%s", up, down, logs)
	}
	run("oo") // back for good
	if up, down := count(); up != 2 || down != 1 {
		t.Fatalf("the recovery: %d up and %d down lines, want one more up:\n%s", up, down, logs)
	}
}

// ActivityWatch answers /info and its bucket list but the event reads
// fail: the frame's parts say unreadable, and health (its check, after
// the frame) is degraded with aw_ok false and the code
// AwEventsUnreadable: health checks what a frame reads, not /info alone.
func TestHealthDegradedWhenEventReadsFail(t *testing.T) {
	e, _, _, _ := switchEngine(t, func(sw *switchable) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				w.Write([]byte(`{"message":"database is locked"}`))
				return
			}
			sw.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	out := e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
	var fr struct {
		AWInfo json.RawMessage `json:"aw_info"`
		Now    struct {
			Summary string `json:"summary"`
			Window  struct {
				Reason string `json:"reason"`
			} `json:"window"`
		} `json:"now"`
		Sources struct {
			ActivityWatch struct {
				OK bool `json:"ok"`
			} `json:"activitywatch"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out.Body, &fr); err != nil || fr.Sources.ActivityWatch.OK || fr.Now.Window.Reason != "unreadable" ||
		string(fr.AWInfo) == "null" || !strings.Contains(fr.Now.Summary, "could not be read") {
		t.Fatalf("frame: %s", out.Body)
	}
	h := e.health.Report(ctx)
	aws := h.Sources.ActivityWatch
	if h.AWOK || h.Status != "degraded" || aws.OK || aws.Code != toolbus.CodeAwEventsUnreadable || aws.Hint == "" ||
		!strings.Contains(aws.Error, "aw events: http status 500") || !aws.Checked {
		t.Fatalf("health: %+v", h)
	}
}

// system_health shows each circuit as it is now: right after the
// breaker opens, health says open, without waiting for its next refresh.
func TestHealthShowsTheLiveCircuit(t *testing.T) {
	e, sw, _, _ := switchEngine(t, nil)
	ctx := context.Background()
	if h := e.health.Report(ctx); !h.AWOK || h.Sources.ActivityWatch.Circuit != "closed" {
		t.Fatalf("health at first: %+v", h)
	}
	sw.down.Store(true)
	for range 3 {
		e.Call(ctx, toolbus.Request{Name: "aw_get_state"})
	}
	if st := e.awSrc.Status(); st.Circuit != "open" {
		t.Fatalf("the breaker did not open: %+v", st)
	}
	// The clock has not moved: the last refresh is current.
	out := e.Call(ctx, toolbus.Request{Name: "system_health"})
	var env struct {
		Result struct {
			AWOK    bool   `json:"aw_ok"`
			Status  string `json:"status"`
			Sources struct {
				ActivityWatch struct {
					Circuit string `json:"circuit"`
					Code    string `json:"code"`
				} `json:"activitywatch"`
			} `json:"sources"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Body, &env); err != nil || env.Result.Sources.ActivityWatch.Circuit != "open" ||
		env.Result.AWOK || env.Result.Status != "degraded" || env.Result.Sources.ActivityWatch.Code != toolbus.CodeAwUnavailable {
		t.Fatalf("system_health right after the breaker opened: %s", out.Body)
	}
}

// A sidecar that answers 401 or 403 to /probe is a misconfiguration:
// health names SidecarAuthFailed with a hint naming sidecar.url, and
// however many frames meet it, its circuit stays closed.
func TestSidecarRefusalIsAConfigurationProblem(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			sc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
			defer sc.Close()
			e, _ := fixtureEngine(t, func(c *config.Config) { c.Sidecar.URL = sc.URL })
			for range 5 {
				out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build"})
				if out.Err != nil || !bytes.Contains(out.Body, []byte(`"omni_probe":null`)) {
					t.Fatalf("frame: %s (%v)", out.Body, out.Err)
				}
			}
			h := e.health.Report(context.Background())
			st := h.Sources.Sidecar
			if h.Status != "degraded" || !h.AWOK || st.OK || st.Code != toolbus.CodeSidecarAuthFailed || !st.Misconfigured ||
				!strings.Contains(st.Hint, "sidecar.url") || st.Circuit != "closed" {
				t.Fatalf("health: %+v", h)
			}
		})
	}
}
