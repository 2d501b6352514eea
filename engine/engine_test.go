package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureEngine is an engine reading the recorded aw-server over HTTP, with
// the clock one second after the capture.
func fixtureEngine(t *testing.T, edit func(*config.Config)) (*Engine, *awfixture.Server) {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	fs := awfixture.NewServer(xs)
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	c := config.Defaults()
	c.AW.URL = srv.URL
	c.AW.Timeout = 2 * time.Second
	if edit != nil {
		edit(&c)
	}
	now := awfixture.T.Add(time.Second)
	// The golden files name the zone: the same on every machine.
	utc := func() activity.Zone { return activity.Zone{Name: "UTC", Loc: time.UTC} }
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now }, MachineZone: utc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, fs
}

// hangingServer answers nothing until the test ends.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	return srv
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s", path, pretty.Bytes())
	}
}

func TestDirectMethodsAgainstRecordedServer(t *testing.T) {
	e, _ := fixtureEngine(t, nil)
	ctx := context.Background()

	out := e.Call(ctx, toolbus.Request{Direct: true, Name: "aw.get_state"})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	var st struct {
		Info    map[string]any            `json:"info"`
		Buckets map[string]map[string]any `json:"buckets"`
	}
	if err := json.Unmarshal(out.Body, &st); err != nil {
		t.Fatal(err)
	}
	if st.Info["hostname"] != "vm" || st.Info["version"] != "v0.13.2" || len(st.Buckets) != 3 ||
		st.Buckets["aw-watcher-window_testhost"]["type"] != "currentwindow" {
		t.Fatalf("aw.get_state = %s", out.Body)
	}

	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build", Args: json.RawMessage(`{"reason":"manual"}`)})
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	golden(t, "frame_recorded.golden.json", out.Body)
	var f struct {
		Reason  string          `json:"reason"`
		AWInfo  json.RawMessage `json:"aw_info"`
		Omni    json.RawMessage `json:"omni_probe"`
		Sources map[string]struct {
			Configured, OK bool
		} `json:"sources"`
	}
	_ = json.Unmarshal(out.Body, &f)
	if f.Reason != "manual" || string(f.Omni) != "null" || !f.Sources["activitywatch"].OK || f.Sources["sidecar"].Configured {
		t.Fatalf("frame = %s", out.Body)
	}

	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
	if !bytes.Contains(out.Body, []byte(`"reason":"mcp"`)) {
		t.Fatalf("default reason: %s", out.Body)
	}

	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "system.health"})
	var h map[string]any
	if err := json.Unmarshal(out.Body, &h); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"aw_ok", "sidecar_probe_status", "preflight_ok", "protected_env_ok", "protected_diff_count", "omni_probe"} {
		if _, ok := h[k]; !ok {
			t.Fatalf("health lacks %s: %s", k, out.Body)
		}
	}
	if h["aw_ok"] != true || h["sidecar_probe_status"] != nil || h["status"] != "healthy" {
		t.Fatalf("health = %s", out.Body)
	}
}

func TestToolResultIsTheDirectResult(t *testing.T) {
	e, _ := fixtureEngine(t, nil)
	ctx := context.Background()
	for _, tc := range []struct{ tool, method, args string }{
		{"nowframe_build", "nowframe.build", `{"reason":"same","max_age_ms":60000}`},
		{"aw_get_state", "aw.get_state", `{"max_age_ms":60000}`},
		{"system_health", "system.health", `{}`},
	} {
		// Warm the frame so both calls read the same one.
		e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
		direct := e.Call(ctx, toolbus.Request{Direct: true, Name: tc.method, Args: json.RawMessage(tc.args)})
		tool := e.Call(ctx, toolbus.Request{Name: tc.tool, Args: json.RawMessage(tc.args)})
		var env struct {
			Tool     string          `json:"tool"`
			Result   json.RawMessage `json:"result"`
			CacheHit bool            `json:"cache_hit"`
		}
		if err := json.Unmarshal(tool.Body, &env); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(env.Result, direct.Body) {
			t.Fatalf("%s: envelope result differs from %s:\n%s\n%s", tc.tool, tc.method, env.Result, direct.Body)
		}
		if tc.tool != "system_health" && !env.CacheHit {
			t.Fatalf("%s with max_age_ms was not a cache hit", tc.tool)
		}
		// The dotted alias is echoed.
		alias := e.Call(ctx, toolbus.Request{Name: tc.method, Args: json.RawMessage(tc.args)})
		if !bytes.Contains(alias.Body, []byte(`"tool":"`+tc.method+`"`)) {
			t.Fatalf("alias not echoed: %s", alias.Body)
		}
	}
}

func TestActivityWatchDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	c := config.Defaults()
	c.AW.URL = url
	c.AW.Timeout = 500 * time.Millisecond
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()

	out := e.Call(ctx, toolbus.Request{Direct: true, Name: "aw.get_state"})
	if out.Err == nil || out.Stage != toolbus.StageExecute || out.Err.Kind != toolbus.ExecutionError ||
		out.Err.Code != toolbus.CodeAwUnavailable || !out.Err.Retryable {
		t.Fatalf("aw.get_state with ActivityWatch down: %+v", out)
	}

	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"})
	var f struct {
		AWInfo    json.RawMessage `json:"aw_info"`
		AWBuckets json.RawMessage `json:"aw_buckets"`
		Sources   map[string]struct {
			OK    bool    `json:"ok"`
			Error *string `json:"error"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out.Body, &f); err != nil {
		t.Fatal(err)
	}
	if string(f.AWInfo) != "null" || string(f.AWBuckets) != "null" || f.Sources["activitywatch"].OK || f.Sources["activitywatch"].Error == nil ||
		!bytes.Contains(out.Body, []byte(`"summary":"Unknown: ActivityWatch did not answer`)) {
		t.Fatalf("frame with ActivityWatch down: %s", out.Body)
	}

	// Third failure opens the circuit; the next call is refused at once.
	e.Call(ctx, toolbus.Request{Direct: true, Name: "aw.get_state"})
	out = e.Call(ctx, toolbus.Request{Name: "aw_get_state"})
	if out.Err == nil || out.Err.Code != toolbus.CodeCircuitOpen || out.Err.RetryAfterMs == nil {
		t.Fatalf("after three failures: %+v", out.Err)
	}
	if !bytes.Contains(out.Body, []byte(`"status":"Retryable"`)) || !bytes.Contains(out.Body, []byte(`"circuit":"open"`)) {
		t.Fatalf("envelope: %s", out.Body)
	}

	out = e.Call(ctx, toolbus.Request{Direct: true, Name: "system.health"})
	if !bytes.Contains(out.Body, []byte(`"aw_ok":false`)) || !bytes.Contains(out.Body, []byte(`"status":"degraded"`)) {
		t.Fatalf("health: %s", out.Body)
	}
}

func TestSidecarHangingDoesNotHoldTheFrame(t *testing.T) {
	hang := hangingServer(t)
	e, _ := fixtureEngine(t, func(c *config.Config) {
		c.Sidecar.URL = hang.URL
		c.Sidecar.Timeout = 150 * time.Millisecond
	})
	start := time.Now()
	out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build"})
	if time.Since(start) > 10*time.Second {
		t.Fatal("the sidecar's deadline was not applied")
	}
	var f struct {
		AWInfo  json.RawMessage `json:"aw_info"`
		Omni    json.RawMessage `json:"omni_probe"`
		Sources map[string]struct {
			OK    bool    `json:"ok"`
			Error *string `json:"error"`
		} `json:"sources"`
	}
	_ = json.Unmarshal(out.Body, &f)
	if string(f.Omni) != "null" || string(f.AWInfo) == "null" || f.Sources["sidecar"].OK ||
		f.Sources["sidecar"].Error == nil || !strings.Contains(*f.Sources["sidecar"].Error, "deadline") {
		t.Fatalf("frame with a hanging sidecar: %s", out.Body)
	}
}

func TestUnknownDirectMethodAndBadParams(t *testing.T) {
	e, _ := fixtureEngine(t, nil)
	out := e.Call(context.Background(), toolbus.Request{Direct: true, Name: "aw.nope"})
	if out.Stage != toolbus.StageResolve {
		t.Fatalf("unknown method: %+v", out)
	}
	out = e.Call(context.Background(), toolbus.Request{Direct: true, Name: "nowframe.build", Args: json.RawMessage(`{"reason":7}`)})
	if out.Stage != toolbus.StageValidate || out.Err.Kind != toolbus.ContractError {
		t.Fatalf("bad params: %+v", out)
	}
}
