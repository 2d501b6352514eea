// Package health owns the health report: read from each source's last
// status (never a probe per call; refreshed at most once a second, the
// first call probes), the bridge's own preflight, and the protected
// environment.
package health

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/upstream"
	"github.com/tidwall/gjson"
)

// Check is one preflight check.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Options configure a Checker. Every func may be nil.
type Options struct {
	// AWProbe checks ActivityWatch by reading what a frame reads, so event
	// reads that fail while /info answers make health degraded.
	AWSource      *upstream.Source
	AWProbe       func(ctx context.Context) error
	SidecarSource *upstream.Source
	SidecarProbe  func(ctx context.Context) (json.RawMessage, error)
	// Preflight is the bridge's own checks, run once at start; Live adds
	// checks of the running bridge at each refresh (cheap, safe for
	// concurrent use), counted alike.
	Preflight []Check
	Live      func() []Check
	Protect   func() protect.Result // at each refresh
	// Redact redacts each rendered report once (the probe payload is the
	// sidecar's data) and says where.
	Redact func(report []byte) (out []byte, redacted, bounded []string)
	// FirstWait bounds how long the first call waits for the first probe
	// (default 200 ms); the report then says "checking" and the probe goes
	// on in the background.
	FirstWait time.Duration
	Now       func() time.Time
	// Settings are the effective settings every report shows (URLs
	// without credentials).
	Settings map[string]string
	// AWServer names the ActivityWatch server that last answered
	// /api/0/info ("aw-server-rust v0.14.0"), "" before one did.
	AWServer func() string
}

// Report is the system.health result: the contract's fields first, then ours.
type Report struct {
	AWOK               bool            `json:"aw_ok"`
	SidecarProbeStatus *bool           `json:"sidecar_probe_status"`
	PreflightOK        bool            `json:"preflight_ok"`
	ProtectedEnvOK     bool            `json:"protected_env_ok"`
	ProtectedDiffCount int             `json:"protected_diff_count"`
	OmniProbe          json.RawMessage `json:"omni_probe"`

	// Status is "healthy", "degraded", or "checking" until the first
	// probe of a configured source answers.
	Status    string    `json:"status"`
	CheckedAt time.Time `json:"checked_at"`
	Sources   struct {
		ActivityWatch upstream.Status `json:"activitywatch"`
		Sidecar       upstream.Status `json:"sidecar"`
	} `json:"sources"`
	Preflight []Check `json:"preflight"`
	// ProtectedEnvConfigured: a protected-environment baseline or item
	// list exists; ProtectedDiffs name the items that differ, never values.
	ProtectedEnvConfigured bool           `json:"protected_env_configured"`
	ProtectedDiffs         []protect.Diff `json:"protected_diffs,omitempty"`
	// AWServer names the ActivityWatch server that answers
	// ("aw-server-rust v0.14.0", "aw-server (Python) v0.13.2"), once its
	// /api/0/info has.
	AWServer string `json:"aw_server,omitempty"`
	// ServedBy says who answered a terminal's `awbridge health` ("service"
	// or "in-process"); empty elsewhere.
	ServedBy string            `json:"served_by,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Healthy reports whether nothing the person configured is failing.
func (r *Report) Healthy() bool { return r.Status == "healthy" }

// Checker answers health. Safe for concurrent use; Close waits for a
// background refresh.
type Checker struct {
	opts Options

	mu         sync.Mutex
	lastProbe  json.RawMessage
	checkedAt  time.Time
	refreshing bool
	rendered   []byte
	redactions []string
	bounded    []string
	report     Report
	first      chan struct{} // closed after the first refresh
	quit       chan struct{} // closed by Close: a refresh under way stops
	changed    chan struct{} // closed and replaced when the verdict changes
	prot       protect.Result
	closeOnce  sync.Once
	firstOnce  sync.Once
	wg         sync.WaitGroup
}

// refreshEvery is the most often the sources are re-checked.
const refreshEvery = time.Second

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.FirstWait = cmp.Or(max(opts.FirstWait, 0), 200*time.Millisecond)
	return &Checker{opts: opts, first: make(chan struct{}), quit: make(chan struct{}), changed: make(chan struct{})}
}

// Close stops a refresh under way (the process is exiting: a probe of a
// slow source must not hold it) and waits for it. Call it once.
func (c *Checker) Close() {
	c.closeOnce.Do(func() { close(c.quit) })
	c.wg.Wait()
}

// Prime starts the first probe in the background, so that the first
// health call finds it done.
func (c *Checker) Prime(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checkedAt.IsZero() {
		c.refreshLocked(ctx)
	}
}

// refreshLocked starts a refresh unless one is under way; c.mu held. ctx
// bounds nothing after it returns: the probe runs under the sources' own
// deadlines.
func (c *Checker) refreshLocked(ctx context.Context) {
	if !c.refreshing {
		c.refreshing = true
		c.wg.Add(1)
		go c.refresh(context.WithoutCancel(ctx))
	}
}

// Rendered returns the rendered (and redacted) report, with where that
// very rendering was redacted and where a long string was bounded (paths),
// read under one lock so they always match. The first call probes the
// sources (bounded by their deadlines); later calls answer at once from
// the last status and, when it is older than the refresh interval, start
// one refresh in the background.
func (c *Checker) Rendered(ctx context.Context) (body []byte, redacted, bounded []string) {
	b, _, red, bnd := c.get(ctx)
	return b, red, bnd
}

// Report returns the report as a value (see Rendered for freshness rules).
func (c *Checker) Report(ctx context.Context) Report {
	_, r, _, _ := c.get(ctx)
	return r
}

func (c *Checker) get(ctx context.Context) ([]byte, Report, []string, []string) {
	now := c.opts.Now()
	c.mu.Lock()
	if now.Sub(c.checkedAt) >= refreshEvery {
		c.refreshLocked(ctx)
	}
	c.mu.Unlock()

	waited := true
	select {
	case <-c.first:
	default:
		select {
		case <-c.first:
		case <-ctx.Done():
			waited = false
		case <-time.After(c.opts.FirstWait):
			waited = false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rendered == nil || !waited || c.sourcesMovedLocked() {
		c.render(now)
	}
	return c.rendered, c.report, c.redactions, c.bounded
}

// sourcesMovedLocked reports whether a source's live state (circuit, up
// or down, its error) differs from the last rendered report: a breaker
// that opened since is shown at once, not at the next refresh. Reading
// a source's status is cheap; the report is rendered again only then.
func (c *Checker) sourcesMovedLocked() bool {
	moved := func(src *upstream.Source, shown upstream.Status) bool {
		if src == nil {
			return false
		}
		st := src.Status()
		return st.Circuit != shown.Circuit || st.OK != shown.OK || st.Checked != shown.Checked ||
			st.Code != shown.Code || st.Error != shown.Error || st.ConsecutiveFailures != shown.ConsecutiveFailures
	}
	return moved(c.opts.AWSource, c.report.Sources.ActivityWatch) || moved(c.opts.SidecarSource, c.report.Sources.Sidecar)
}

func (c *Checker) refresh(ctx context.Context) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-c.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	var (
		wg    sync.WaitGroup
		probe json.RawMessage
		scErr error
	)
	if c.opts.AWSource != nil && c.opts.AWProbe != nil {
		wg.Go(func() { _ = c.opts.AWSource.Do(ctx, c.opts.AWProbe) })
	}
	if c.opts.SidecarSource != nil && c.opts.SidecarSource.Configured() && c.opts.SidecarProbe != nil {
		wg.Go(func() {
			scErr = c.opts.SidecarSource.Do(ctx, func(ctx context.Context) error {
				var err error
				probe, err = c.opts.SidecarProbe(ctx)
				return err
			})
		})
	}
	wg.Wait()
	var pr protect.Result
	if c.opts.Protect != nil {
		pr = c.opts.Protect()
	}
	if scErr != nil {
		probe = nil
	}
	c.mu.Lock()
	c.prot, c.lastProbe = pr, probe
	c.checkedAt = c.opts.Now()
	c.refreshing = false
	c.render(c.checkedAt)
	c.mu.Unlock()
	c.firstOnce.Do(func() { close(c.first) })
}

// render rebuilds the report from the sources' last status; c.mu held.
func (c *Checker) render(now time.Time) {
	r := Report{CheckedAt: now.UTC(), Preflight: c.opts.Preflight, Settings: c.opts.Settings}
	if c.opts.Live != nil {
		if live := c.opts.Live(); len(live) > 0 {
			r.Preflight = append(slices.Clip(c.opts.Preflight), live...)
		}
	}
	r.ProtectedEnvConfigured, r.ProtectedEnvOK, r.ProtectedDiffCount = c.prot.Configured, c.prot.OK(), c.prot.DiffCount()
	r.ProtectedDiffs = c.prot.Diffs
	if c.opts.AWSource != nil {
		r.Sources.ActivityWatch = c.opts.AWSource.Status()
	}
	if c.opts.SidecarSource != nil {
		r.Sources.Sidecar = c.opts.SidecarSource.Status()
	}
	r.AWOK = r.Sources.ActivityWatch.OK
	if c.opts.AWServer != nil {
		r.AWServer = c.opts.AWServer()
	}
	r.PreflightOK = !slices.ContainsFunc(r.Preflight, func(ch Check) bool { return !ch.OK })
	healthy := r.AWOK && r.PreflightOK && r.ProtectedEnvOK
	if r.Sources.Sidecar.Configured {
		ok := false
		if c.lastProbe != nil && r.Sources.Sidecar.OK {
			r.OmniProbe = c.lastProbe
			ok = gjson.GetBytes(c.lastProbe, "ok").Bool()
			pre := gjson.GetBytes(c.lastProbe, "preflight_ok")
			if !pre.Exists() {
				pre = gjson.GetBytes(c.lastProbe, "ok")
			}
			r.PreflightOK = r.PreflightOK && pre.Bool()
		}
		r.SidecarProbeStatus = &ok
		healthy = healthy && ok && r.PreflightOK
	}
	if r.OmniProbe == nil {
		r.OmniProbe = json.RawMessage("null")
	}
	switch {
	case healthy:
		r.Status = "healthy"
	case (!r.Sources.ActivityWatch.Checked && c.opts.AWSource != nil) ||
		(r.Sources.Sidecar.Configured && !r.Sources.Sidecar.Checked):
		r.Status = "checking"
	default:
		r.Status = "degraded"
	}
	b, err := jsonw.Marshal(&r)
	if err != nil {
		b = []byte(`{"aw_ok":false,"sidecar_probe_status":null,"preflight_ok":false,"protected_env_ok":false,"protected_diff_count":-1,"omni_probe":null,"status":"degraded"}`)
	}
	c.redactions, c.bounded = nil, nil
	if c.opts.Redact != nil {
		b, c.redactions, c.bounded = c.opts.Redact(b)
	}
	if verdict(c.report) != verdict(r) {
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.report, c.rendered = r, b
}

// verdict is what a subscriber to health cares about.
func verdict(r Report) [4]string {
	sc := "none"
	if r.SidecarProbeStatus != nil {
		sc = fmt.Sprint(*r.SidecarProbeStatus)
	}
	return [4]string{r.Status, fmt.Sprint(r.AWOK), sc, r.Sources.ActivityWatch.Circuit}
}

// Changed returns a channel closed when the report's verdict (status,
// sources up or down, circuit) next changes.
func (c *Checker) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}
