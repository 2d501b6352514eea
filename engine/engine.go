// Package engine is the one per-process core: it owns the upstreams, the
// frame builder, health and the tool bus, and Call is the single path for
// MCP tools, direct methods and `awbridge call`.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/sidecar"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/artifacts"
	"github.com/awbridge/awbridge/toolbus/redact"
	"github.com/awbridge/awbridge/toolbus/state"
	"github.com/awbridge/awbridge/upstream"
)

// Deps is everything an Engine is built from; main builds it.
type Deps struct {
	Config  config.Config
	Logger  zerolog.Logger
	Version string
	Now     func() time.Time // default time.Now
	// MachineZone is the machine's zone at a call (default: an
	// activity.MachineZone, following TZ and /etc/localtime), unless
	// activity.timezone is set.
	MachineZone func() activity.Zone
	Transport   http.RoundTripper // for both upstreams (default: the clients')
	// HealthFirstWait bounds how long the first health call waits for the
	// first probe (default 500 ms).
	HealthFirstWait time.Duration
	SocketPath      string                // checked by preflight ("": not)
	Protect         func() protect.Result // nil: not configured
	// Checks, when set, adds cheap checks of whoever runs the engine to
	// health at each refresh; they count like preflight's.
	Checks func() []health.Check
}

// Engine is the process's core. Safe for concurrent use; Close it once.
type Engine struct {
	deps      Deps
	log       zerolog.Logger
	awc       *aw.Client
	awSrc     *upstream.Source
	histSrc   *upstream.Source // the activity tools' reads: own client and breaker
	builder   *nowframe.Builder
	poller    *nowframe.Poller
	activity  *activity.Service
	health    *health.Checker
	state     *state.Store
	artifacts *artifacts.Store // disabled without a usable context root
	frameZone func(t time.Time) nowframe.Zone
	bus       *toolbus.Bus
	// The prune pass New started waits for pruneStartDelay or for Close
	// closing pruneNow; stopPrune cancels it; it closes pruneDone (all nil
	// when none started).
	pruneNow  chan struct{}
	stopPrune context.CancelFunc
	pruneDone chan struct{}
	// warmMaxAge is nowframe_build's default max_age_ms while the poller
	// runs (0: fresh).
	warmMaxAge atomic.Int64
}

// DirectMethods lists the direct JSON-RPC methods, answered with their
// tool's bare result: the one place that says which methods are direct.
// Each is an alias of its tool (the name with '.' for the first '_').
func DirectMethods() []string { return []string{"aw.get_state", "nowframe.build", "system.health"} }

// New builds an Engine from deps, each piece after what it needs, the tool
// bus last. It does no I/O beyond preflight checks.
func New(d Deps) (*Engine, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	c := d.Config
	onChange := logTransition(d.Logger)

	awOpts := aw.Options{
		BaseURL:        c.AW.URL,
		HostHeader:     c.AW.HostHeader,
		APIKey:         c.AW.APIKey,
		AttemptTimeout: attemptTimeout(c.AW.Timeout),
		MaxBodyBytes:   c.AW.MaxBodyBytes,
		Transport:      d.Transport,
		UserAgent:      "awbridge/" + d.Version,
	}
	awc, err := aw.New(awOpts)
	if err != nil {
		return nil, fmt.Errorf("engine: activitywatch client: %w", err)
	}
	awSrc := upstream.New(upstream.Options{Name: "activitywatch", Code: toolbus.CodeAwUnavailable,
		Configured: true, Deadline: c.AW.Timeout, Now: d.Now, Classify: classifyAW, OnChange: onChange})
	// History reads have their own client and source: one attempt lasts
	// the whole deadline (a timed-out read is never resent to a server
	// still busy with it), and their failures never open the live frame's
	// circuit nor show in health.
	awOpts.AttemptTimeout = c.AW.HistoryTimeout
	awHist, err := aw.New(awOpts)
	if err != nil {
		return nil, fmt.Errorf("engine: activitywatch client: %w", err)
	}
	histSrc := upstream.New(upstream.Options{Name: "activitywatch history", Code: toolbus.CodeAwUnavailable,
		Configured: true, Deadline: c.AW.HistoryTimeout, Now: d.Now, Classify: classifyHistory, OnChange: onChange})
	var sc *sidecar.Client
	if c.Sidecar.URL != "" {
		sc, err = sidecar.New(sidecar.Options{BaseURL: c.Sidecar.URL, AttemptTimeout: attemptTimeout(c.Sidecar.Timeout),
			MaxBodyBytes: c.Sidecar.MaxBodyBytes, Transport: d.Transport})
		if err != nil {
			return nil, fmt.Errorf("engine: sidecar client: %w", err)
		}
	}
	scSrc := upstream.New(upstream.Options{Name: "sidecar", Code: toolbus.CodeSidecarUnavailable,
		Configured: sc != nil, Deadline: c.Sidecar.Timeout, Now: d.Now, Classify: classifySidecar, OnChange: onChange})

	titleRules, err := config.ParseRules(c.Privacy.TitleRules)
	if err != nil {
		return nil, fmt.Errorf("engine: privacy.title_rules: %w", err)
	}
	urlRules, err := config.ParseRules(c.Privacy.URLRules)
	if err != nil {
		return nil, fmt.Errorf("engine: privacy.url_rules: %w", err)
	}
	red := NewRedactor(c)
	privacy := nowframe.Privacy{MaxTitleLength: c.Privacy.MaxTitleLength, ExcludeApps: c.Privacy.ExcludedApps(),
		TitleRules: titleRules, URLRules: urlRules, MaskSecrets: func(s string) string { out, _ := red.Text(s); return out }}
	redactOnce := func(b []byte) ([]byte, []string, []string) {
		out, rep, err := red.JSON("result", b, nil)
		if err != nil {
			return []byte(`{"withheld":"the document exceeded the redactor's limits"}`), []string{"result"}, nil
		}
		return out, rep.Redacted, rep.Bounded
	}
	zone, err := zoneOf(c.Activity.Timezone, d)
	if err != nil {
		return nil, err
	}
	zoneAt := frameZone(zone)
	as, warn := artifacts.Open(artifacts.Options{Root: c.Paths.ContextRoot,
		MaxAge: c.Artifacts.MaxAge, MaxBytes: c.Artifacts.MaxBytes, Now: d.Now, Logger: d.Logger})
	if warn != "" {
		d.Logger.Warn().Msg(warn)
	}

	filters := &transform.PrivacyFilterCache{} // the person's privacy_filters, for frames, activity and health
	bopts := nowframe.Options{
		AW: awc, AWSource: awSrc, SidecarSource: scSrc, Host: c.AW.Host,
		Privacy: privacy, Now: d.Now, Zone: zoneAt,
		Redact:   redactOnce, // once per frame, not per call
		Settings: awc.Settings, PrivacyFilters: filters,
	}
	if sc != nil {
		bopts.Sidecar = sc
	}
	builder := nowframe.NewBuilder(bopts)
	poller := nowframe.NewPoller(builder, nowframe.PollerOptions{Interval: c.Poll.Interval,
		IdleInterval: c.Poll.IdleInterval, ActiveFor: c.Poll.ActiveFor, BucketListTTL: c.Poll.BucketListTTL})
	act := activity.NewService(activity.ServiceOptions{
		AW: awHist, Source: histSrc, Host: c.AW.Host, Now: d.Now,
		Zone: zone, Privacy: privacy, MetaTTL: c.Poll.BucketListTTL, PrivacyFilters: filters,
	})

	preflight := Preflight(c)
	if err := as.Refused(); err != nil {
		preflight = append(preflight, health.Check{Name: "artifact_root", OK: false, Detail: err.Error()})
	}
	hopts := health.Options{
		AWSource:      awSrc,
		AWProbe:       builder.ReadAW, // what a frame reads: health and frames agree
		SidecarSource: scSrc,
		Preflight:     append(preflight, socketCheck(d.SocketPath)...),
		Live:          liveChecks(as, filters, d.Checks),
		Now:           d.Now,
		FirstWait:     d.HealthFirstWait,
		Protect:       d.Protect,
		Redact:        redactOnce,
		// Effective settings: a terminal asking the service sees what it
		// uses (config refuses URLs with credentials or a query).
		Settings: map[string]string{"activitywatch_url": c.AW.URL, "activitywatch_host": c.AW.Host, "sidecar_url": c.Sidecar.URL},
		AWServer: func() string {
			if s, ok := awc.LastServer(); ok {
				return s.String()
			}
			return ""
		},
	}
	if sc != nil {
		hopts.SidecarProbe = sc.Probe
	}
	st, err := openState(c, red, d.Logger)
	if err != nil {
		return nil, err
	}
	rates, err := config.ParseRateLimits(c.Limits.RateLimits)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	limits := make(map[string]toolbus.RateLimit, len(rates))
	for tool, r := range rates {
		limits[tool] = toolbus.RateLimit{PerSecond: r.PerSecond, Burst: r.Burst}
	}

	e := &Engine{deps: d, log: d.Logger, awc: awc, awSrc: awSrc, histSrc: histSrc, builder: builder, poller: poller,
		activity: act, health: health.New(hopts), state: st, artifacts: as, frameZone: zoneAt}
	e.bus, err = toolbus.New(toolbus.Options{
		ServerName: "awbridge", Now: d.Now, Redactor: red, State: st, Artifacts: as,
		RateLimits: limits, MaxInFlight: c.Server.MaxInFlight,
	}, e.tools()...)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.startPrune()
	return e, nil
}

// startPrune starts one prune pass in the background if one is due (at
// most once per PruneEvery across the processes sharing the context
// root), so every process that writes artifacts bounds them. It begins
// pruneStartDelay later, or at Close, so a session's first answers do not
// share the process with it. Close waits for it.
func (e *Engine) startPrune() {
	if !e.pruning() {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.pruneNow, e.stopPrune, e.pruneDone = make(chan struct{}), cancel, make(chan struct{})
	go func() {
		defer close(e.pruneDone)
		t := time.NewTimer(pruneStartDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-e.pruneNow:
		}
		e.prune(ctx)
	}()
}

// pruning says whether the artifacts are bounded at all.
func (e *Engine) pruning() bool {
	return e.artifacts.Enabled() && (e.deps.Config.Artifacts.MaxAge > 0 || e.deps.Config.Artifacts.MaxBytes > 0)
}

// openState opens the process's state store; an unusable state dir leaves
// the session scope working, with one warning.
func openState(c config.Config, red *redact.Redactor, log zerolog.Logger) (*state.Store, error) {
	redactValue := toolbus.RedactValue(red)
	st, warns, err := state.Open(state.Options{Dir: c.Paths.StateDir, Redact: redactValue})
	for _, w := range warns {
		log.Warn().Msg("state: " + w)
	}
	if err != nil {
		log.Warn().Err(err).Msg("persistent state is off; session state works")
		st, _, err = state.Open(state.Options{Redact: redactValue})
		if err != nil {
			return nil, fmt.Errorf("engine: state: %w", err)
		}
	}
	return st, nil
}

// NewRedactor is the redactor of c's limits: the engine's, and the log's.
func NewRedactor(c config.Config) *redact.Redactor {
	return redact.New(redact.Options{MaxString: int(c.Limits.MaxStringBytes), ExtraKeys: protect.ParseList(c.Limits.SensitiveKeys)})
}

// logTransition logs a source going up or down, once per transition.
// Error texts carry no event data; a hint is fixed text.
func logTransition(log zerolog.Logger) func(upstream.Status) {
	return func(st upstream.Status) {
		if st.OK {
			log.Info().Str("source", st.Name).Float64("latency_ms", st.LatencyMs).Msg("source up")
			return
		}
		ev := log.Warn().Str("source", st.Name).Str("circuit", st.Circuit).Str("code", st.Code).Str("error", st.Error)
		if st.Hint != "" {
			ev = ev.Str("hint", st.Hint)
		}
		ev.Msg("source down")
	}
}

// attemptTimeout leaves room for retries inside a source's deadline.
func attemptTimeout(deadline time.Duration) time.Duration {
	return max(deadline/2, 100*time.Millisecond)
}

// Run keeps the frame warm until ctx ends (the poller), nowframe_build
// answering from a frame up to 2 s old, and prunes the artifacts every
// PruneEvery. The service runs it; a stdio session without one does not.
func (e *Engine) Run(ctx context.Context) error {
	e.warmMaxAge.Store(2000)
	defer e.warmMaxAge.Store(0)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if e.pruning() {
		wg.Go(func() { e.pruneArtifacts(ctx) })
	}
	return e.poller.Run(ctx)
}

// PruneEvery is how often the artifacts are pruned, by whichever process
// sharing the context root comes first (a pass reads metadata only).
const PruneEvery = 10 * time.Minute

const (
	pruneCheckEvery = PruneEvery / 4 // the last pass may have been another process's
	pruneStartDelay = time.Second    // after New, unless Close comes first
	// pruneCloseWait bounds how long Close waits for a pass before it
	// cancels it (the next process runs it again).
	pruneCloseWait = 2 * time.Second
)

// pruneArtifacts runs a pass whenever one is due until ctx ends.
func (e *Engine) pruneArtifacts(ctx context.Context) {
	t := time.NewTicker(pruneCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.prune(ctx)
		}
	}
}

// prune runs a pass if one is due, logging counts (never run names).
func (e *Engine) prune(ctx context.Context) {
	st, ran, err := e.artifacts.PruneIfDue(ctx, PruneEvery)
	switch {
	case ctx.Err() != nil && ran:
		e.log.Debug().Int("removed_runs", st.Removed).Msg("artifacts: prune pass stopped before its end; the next one goes on")
	case ctx.Err() != nil:
	case err != nil:
		e.log.Warn().Err(err).Msg("artifacts: not pruned")
	case !ran:
	case st.Failed > 0:
		e.log.Warn().Int("removed_runs", st.Removed).Int("failed_runs", st.Failed).Msg("artifacts: some runs could not be pruned")
	case st.Removed > 0:
		e.log.Info().Int("removed_runs", st.Removed).Int64("freed_bytes", st.RemovedBytes).
			Int("kept_runs", st.Runs-st.Removed).Int64("kept_bytes", st.Bytes-st.RemovedBytes).Msg("artifacts pruned")
	default:
		e.log.Debug().Int("kept_runs", st.Runs).Int64("kept_bytes", st.Bytes).Msg("artifacts: nothing to prune")
	}
}

// Prime starts the first health probe in the background.
func (e *Engine) Prime(ctx context.Context) { e.health.Prime(ctx) }

// Close waits for background work (a prune pass is run now if it has not
// begun, then cancelled after pruneCloseWait) and flushes state.
func (e *Engine) Close() {
	if e.pruneDone != nil {
		close(e.pruneNow)
		select {
		case <-e.pruneDone:
		case <-time.After(pruneCloseWait):
			e.stopPrune()
			<-e.pruneDone
		}
		e.stopPrune()
	}
	e.builder.Close()
	e.health.Close()
	if err := e.state.Close(); err != nil {
		e.log.Warn().Err(err).Msg("state: closing")
	}
}

// ToolsList returns the pre-rendered tools/list result for an MCP
// protocol version ("" when none was negotiated).
func (e *Engine) ToolsList(version string) json.RawMessage { return e.bus.ToolsList(version) }

// liveChecks are the health checks of the running engine: artifact
// writes failing, the person's privacy filters skipped, then extra's.
func liveChecks(as *artifacts.Store, filters *transform.PrivacyFilterCache, extra func() []health.Check) func() []health.Check {
	return func() []health.Check {
		var out []health.Check
		if f := filters.Last(); f != nil && len(f.Skipped) > 0 {
			out = append(out, health.Check{Name: "privacy_filters", OK: false,
				Detail: "ActivityWatch's privacy_filters setting: skipped, so not applied: " + strings.Join(f.Skipped, "; ")})
		}
		if failing, n := as.WritesFailing(); failing {
			out = append(out, health.Check{Name: "artifact_writes", OK: false,
				Detail: fmt.Sprintf("%d writes failed since the last success: the context root is full or not writable; calls go on without artifacts", n)})
		}
		if extra != nil {
			out = append(out, extra()...)
		}
		return out
	}
}

// Call is the single path of every call: MCP tools, direct methods and
// `awbridge call`.
func (e *Engine) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	e.poller.Touch() // someone is asking: the poller keeps the active rhythm
	if req.Direct && !slices.Contains(DirectMethods(), req.Name) {
		return toolbus.Response{Err: &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeUnknownTool,
			Message: fmt.Sprintf("unknown method %q", req.Name)}, Stage: toolbus.StageResolve}
	}
	return e.bus.Call(ctx, req)
}

// Preflight runs the bridge's own start-up checks on c.
func Preflight(c config.Config) []health.Check {
	checks := []health.Check{{Name: "config", OK: true, Detail: "loaded and valid"}}
	u, err := url.Parse(c.AW.URL)
	ok := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	why := "well formed"
	if !ok {
		why = "not an http(s) URL with a host"
	}
	checks = append(checks, health.Check{Name: "activitywatch_url", OK: ok, Detail: why})
	if c.Paths.ContextRoot != "" {
		ok, why := writableDir(c.Paths.ContextRoot)
		checks = append(checks, health.Check{Name: "context_root", OK: ok, Detail: why})
	}
	if err := state.CheckFile(c.Paths.StateDir); err != nil {
		var se *state.StorageError
		why := "is not a regular file"
		if errors.Is(err, state.ErrSymlink) {
			why = "is a symbolic link"
		}
		path := c.Paths.StateDir
		if errors.As(err, &se) {
			path = se.Path
		}
		checks = append(checks, health.Check{Name: "state_file", OK: false,
			Detail: "refused: " + path + " " + why + "; persistent state is off (remove it and restart)"})
	}
	return checks
}

// socketCheck says whether the socket's folder exists (or can be made)
// and is writable.
func socketCheck(path string) []health.Check {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			ok, why := writableDir(d)
			if d != dir {
				why = "folder can be created under " + d + " (" + why + ")"
			}
			return []health.Check{{Name: "socket_path", OK: ok, Detail: why}}
		}
		if filepath.Dir(d) == d {
			return []health.Check{{Name: "socket_path", OK: false, Detail: "no existing parent folder"}}
		}
	}
}

func writableDir(dir string) (bool, string) {
	st, err := os.Stat(dir)
	if err != nil {
		return false, "missing"
	}
	if !st.IsDir() {
		return false, "not a folder"
	}
	f, err := os.CreateTemp(dir, ".awbridge-preflight-*")
	if err != nil {
		return false, "not writable"
	}
	name := f.Name()
	f.Close()
	os.Remove(filepath.Clean(name))
	return true, "writable"
}
