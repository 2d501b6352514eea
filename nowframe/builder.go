package nowframe

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/upstream"
)

// AWReader is what the builder reads from ActivityWatch; *aw.Client.
type AWReader interface {
	Info(ctx context.Context) (aw.Info, error)
	Buckets(ctx context.Context) (map[string]aw.Bucket, error)
	Events(ctx context.Context, bucketID string, q aw.EventQuery) ([]aw.Event, error)
}

// Prober is the sidecar; *sidecar.Client.
type Prober interface {
	Probe(ctx context.Context) (json.RawMessage, error)
}

// Options configure a Builder.
type Options struct {
	AW            AWReader
	AWSource      *upstream.Source
	Sidecar       Prober // nil when SidecarSource is not configured
	SidecarSource *upstream.Source
	Host          string // whose buckets to read ("" = automatic)
	Privacy       Privacy
	Now           func() time.Time // default time.Now
	// Zone, when set, is the person's zone at t, named by the frame.
	Zone func(t time.Time) Zone
	// Redact, when set, redacts each frame's JSON once, when rendered, and
	// says where (paths, never values).
	Redact func(frame []byte) (out []byte, redacted, bounded []string)
	// Settings, when set, reads ActivityWatch's settings with the bucket
	// list (at most every SetReuse's awEvery while polling): their
	// privacy_filters apply to the events a frame reads, parsed by
	// PrivacyFilters (nil: a cache of its own), whose last filters apply:
	// a failed read keeps them.
	Settings       func(ctx context.Context) (aw.Settings, error)
	PrivacyFilters *transform.PrivacyFilterCache
}

// Builder assembles frames. Safe for concurrent use: concurrent fresh
// builds are coalesced into one.
type Builder struct {
	opts    Options
	version atomic.Uint64
	latest  atomic.Pointer[Frame]
	sel     atomic.Pointer[cachedSelection]

	mu        sync.Mutex
	inflight  *flight
	changed   chan struct{} // closed and replaced when a frame shows a switch
	wg        sync.WaitGroup
	quit      chan struct{} // closed by Close: a build under way stops
	closeOnce sync.Once

	// While polling (SetReuse), the bucket list, server info and the
	// sidecar's probe are read less often than the window and AFK events.
	reuseAW, reuseProbe atomic.Int64 // nanoseconds; 0: read every build
	lastAW              atomic.Pointer[cachedAW]
	lastProbe           atomic.Pointer[cachedProbe]
}

type cachedAW struct {
	at      time.Time
	info    *aw.Info
	buckets map[string]aw.Bucket
	sel     Selection
}

type cachedProbe struct {
	at   time.Time
	body json.RawMessage
}

// SetReuse makes builds reuse ActivityWatch's bucket list and info for up
// to awEvery, and the sidecar's probe for up to probeEvery (0: never).
// The poller sets it.
func (b *Builder) SetReuse(awEvery, probeEvery time.Duration) {
	b.reuseAW.Store(int64(awEvery))
	b.reuseProbe.Store(int64(probeEvery))
}

// AWDown reports whether ActivityWatch's circuit is open.
func (b *Builder) AWDown() bool { return b.opts.AWSource.Circuit() == upstream.Open }

// ProbeAW checks ActivityWatch as the circuit's half-open probe, even
// during the cool-down, reading what a frame reads (ReadAW): a server
// that answers /info but fails the event reads has not recovered.
func (b *Builder) ProbeAW(ctx context.Context) error {
	return b.opts.AWSource.Probe(ctx, b.ReadAW)
}

// ReadAW reads what a frame reads of ActivityWatch without building one
// and returns the error a frame would report, so health and frames agree.
// It does not go through the source: callers wrap it.
func (b *Builder) ReadAW(ctx context.Context) error {
	_, err := b.fetchAW(ctx)
	return err
}

// UnreadableError is the failure of a frame's reads when the info and the
// bucket list were read but the events of some selected buckets were not.
type UnreadableError struct {
	Buckets []string // server data: never in a hint or log unredacted
	Err     error
}

func (e *UnreadableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreadableError) Unwrap() error { return e.Err }

// selectionTTL is how long a bucket selection is trusted to fetch events
// in parallel with a fresh bucket list (a vanished bucket is refetched).
const selectionTTL = 30 * time.Second

type cachedSelection struct {
	sel Selection
	at  time.Time
}

type flight struct {
	done  chan struct{}
	frame *Frame
}

// NewBuilder returns a Builder.
func NewBuilder(opts Options) *Builder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PrivacyFilters == nil {
		opts.PrivacyFilters = &transform.PrivacyFilterCache{}
	}
	return &Builder{opts: opts, quit: make(chan struct{}), changed: make(chan struct{})}
}

// Changed returns a channel closed when the next frame shows the person
// doing something else (app, title, URL or AFK status).
func (b *Builder) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// publish makes f the latest frame unless a newer one is, and closes
// Changed's channel when f shows a switch.
func (b *Builder) publish(f *Frame) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := b.latest.Load()
	if prev != nil && prev.Version > f.Version {
		return
	}
	b.latest.Store(f)
	if prev != nil && switched(prev.Now, f.Now) {
		close(b.changed)
		b.changed = make(chan struct{})
	}
}

func switched(a, b Now) bool {
	return a.Window.App != b.Window.App || a.Window.Title != b.Window.Title || a.Window.Excluded != b.Window.Excluded ||
		a.Browser.URL != b.Browser.URL || a.Browser.Focused != b.Browser.Focused || a.AFK.Status != b.AFK.Status
}

// Latest returns the newest frame, or nil before the first build.
func (b *Builder) Latest() *Frame { return b.latest.Load() }

// Get returns a frame at most maxAge old: the latest one when it is young
// enough (cacheHit true), else a fresh build. maxAge <= 0 forces a build.
// It returns nil when ctx ends before a fresh frame is ready.
func (b *Builder) Get(ctx context.Context, maxAge time.Duration) (f *Frame, cacheHit bool) {
	if maxAge > 0 {
		if f := b.latest.Load(); f != nil && f.Age(b.opts.Now()) <= maxAge {
			return f, true
		}
	}
	return b.Build(ctx), false
}

// Build assembles a fresh frame, joining a build under way. A source that
// failed leaves its fields null and says why in Sources. Build returns nil
// when ctx ends first; the build goes on for whoever else waits.
func (b *Builder) Build(ctx context.Context) *Frame { return b.BuildFor(ctx, CauseRequest) }

// Why a frame was built (its built_for).
const (
	CauseRequest = "request" // a caller asked for a fresh frame
	CausePoll    = "poll"    // the poller's tick
)

// BuildFor is Build, recording why the frame is built when this call
// starts the build (a joined build keeps its own cause).
func (b *Builder) BuildFor(ctx context.Context, cause string) *Frame {
	b.mu.Lock()
	fl := b.inflight
	if fl == nil {
		fl = &flight{done: make(chan struct{})}
		b.inflight = fl
		b.wg.Add(1)
		// Shared by every caller that joins: one caller's cancellation must
		// not spoil it for the others.
		go b.run(context.WithoutCancel(ctx), fl, cause)
	}
	b.mu.Unlock()
	select {
	case <-fl.done:
		return fl.frame
	case <-ctx.Done():
		return nil
	}
}

func (b *Builder) run(ctx context.Context, fl *flight, cause string) {
	defer b.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		select {
		case <-b.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	fl.frame = b.build(ctx, cause)
	b.mu.Lock()
	b.inflight = nil
	b.mu.Unlock()
	close(fl.done)
}

// Close stops a build under way and waits for it. Idempotent.
func (b *Builder) Close() {
	b.closeOnce.Do(func() { close(b.quit) })
	b.wg.Wait()
}

type awPart struct {
	info    *aw.Info
	buckets map[string]aw.Bucket
	sel     Selection
	window  []aw.Event
	afk     []aw.Event
	web     map[string][]aw.Event
	failed  []string // buckets whose events could not be read
}

func (b *Builder) build(ctx context.Context, cause string) *Frame {
	var (
		wg           sync.WaitGroup
		part         awPart
		awErr, scErr error
		probe        json.RawMessage
	)
	wg.Go(func() {
		awErr = b.opts.AWSource.Do(ctx, func(ctx context.Context) error {
			var err error
			part, err = b.fetchAW(ctx)
			b.filter(&part)
			return err
		})
	})
	if b.opts.SidecarSource != nil && b.opts.SidecarSource.Configured() && b.opts.Sidecar != nil {
		if c := b.lastProbe.Load(); c != nil && b.opts.Now().Sub(c.at) < time.Duration(b.reuseProbe.Load()) {
			probe = c.body
		} else {
			wg.Go(func() {
				scErr = b.opts.SidecarSource.Do(ctx, func(ctx context.Context) error {
					var err error
					probe, err = b.opts.Sidecar.Probe(ctx)
					return err
				})
				if scErr == nil {
					b.lastProbe.Store(&cachedProbe{at: b.opts.Now(), body: probe})
				} else {
					b.lastProbe.Store(nil)
				}
			})
		}
	}
	wg.Wait()

	// Milliseconds, as ActivityWatch's own times: finer digits cost the
	// answer bytes and tell a reader nothing.
	now := b.opts.Now().Truncate(time.Millisecond)
	var refused *upstream.Error
	f := &Frame{
		Version:   b.version.Add(1),
		Timestamp: now,
		Info:      part.info,
		Buckets:   part.buckets,
		Probe:     probe,
		Cause:     cause,
	}
	if scErr != nil {
		f.Probe = nil
	}
	if b.opts.Zone != nil {
		z := b.opts.Zone(now)
		f.Zone = &z
	}
	f.Now = ComputeNow(Input{
		Now: now, Selection: part.sel, Window: part.window, AFK: part.afk, Web: part.web,
		Privacy: b.opts.Privacy, Unavailable: awErr != nil && !errors.As(awErr, new(*UnreadableError)), Unreadable: part.failed,
		Refused: errors.As(awErr, &refused) && refused.Misconfigured,
	})
	f.Sources.ActivityWatch = report(b.opts.AWSource, awErr)
	f.Sources.Sidecar = report(b.opts.SidecarSource, scErr)
	if err := f.render(b.opts.Redact); err != nil {
		panic("nowframe: rendering a frame: " + err.Error())
	}
	b.publish(f)
	return f
}

func report(src *upstream.Source, err error) SourceReport {
	if src == nil || !src.Configured() {
		return SourceReport{Circuit: upstream.Closed.String()}
	}
	st := src.Status()
	r := SourceReport{Configured: true, OK: err == nil, LatencyMs: st.LatencyMs, Circuit: st.Circuit}
	if err != nil {
		msg := err.Error()
		r.Error = &msg
		var ue *upstream.Error
		if errors.As(err, &ue) {
			r.Code = ue.Code
		}
	}
	return r
}

// eventsLimit is how many of the newest events are read per bucket.
const eventsLimit = 2

// readNewest reads a bucket's eventsLimit newest events and, when all of
// them start beyond the future tolerance (ActivityWatch lists events dated
// ahead first), the newest up to then too, so the current event is found;
// the future ones are kept for the frame to flag.
func (b *Builder) readNewest(ctx context.Context, id string) ([]aw.Event, error) {
	evs, err := b.opts.AW.Events(ctx, id, aw.EventQuery{Limit: eventsLimit})
	if err != nil || len(evs) < eventsLimit {
		return evs, err
	}
	limit := b.opts.Now().Add(DefaultThresholds().FutureTolerance)
	for _, e := range evs {
		if !e.Timestamp.After(limit) {
			return evs, nil
		}
	}
	cur, err := b.opts.AW.Events(ctx, id, aw.EventQuery{Limit: eventsLimit, End: limit})
	if err != nil {
		return nil, err
	}
	return append(cur, evs...), nil
}

// fetchAW reads info, the bucket list and the newest events of the
// selected buckets. While reusing (SetReuse), a cached info and bucket
// list with a window bucket cost only the event reads; when one fails
// everything is read again at once, so a down server is never hidden
// behind a cached info. With a trusted selection, all reads run in
// parallel; otherwise the events wait for the bucket list.
func (b *Builder) fetchAW(ctx context.Context) (awPart, error) {
	if c := b.lastAW.Load(); c != nil && c.sel.Window != "" && b.opts.Now().Sub(c.at) < time.Duration(b.reuseAW.Load()) {
		part := awPart{info: c.info, buckets: c.buckets, sel: c.sel}
		if err := b.fetchEvents(ctx, c.sel, &part); err == nil {
			return part, nil
		}
		// A bucket vanished or the read failed: read everything again.
		b.lastAW.Store(nil)
	}
	part, err := b.fetchAll(ctx)
	if err == nil && part.info != nil {
		b.lastAW.Store(&cachedAW{at: b.opts.Now(), info: part.info, buckets: part.buckets, sel: part.sel})
	}
	return part, err
}

// fetchAll reads info, the bucket list and the selected buckets' events.
func (b *Builder) fetchAll(ctx context.Context) (awPart, error) {
	var (
		part          awPart
		wg            sync.WaitGroup
		infoErr, bErr error
		info          aw.Info
		cached        = b.sel.Load()
		early         awPart
		earlyErr      error
		useEarly      bool
	)
	wg.Go(func() { info, infoErr = b.opts.AW.Info(ctx) })
	wg.Go(func() { part.buckets, bErr = b.opts.AW.Buckets(ctx) })
	if b.opts.Settings != nil {
		wg.Go(func() {
			// A server without settings has no privacy filters; one that
			// failed to send them keeps the last (none known: see filter).
			if s, err := b.opts.Settings(ctx); err == nil || !aw.Transient(err) {
				b.opts.PrivacyFilters.Parse(s.PrivacyFilters)
			}
		})
	}
	if cached != nil && b.opts.Now().Sub(cached.at) < selectionTTL && cached.sel.Window != "" {
		useEarly = true
		wg.Go(func() { earlyErr = b.fetchEvents(ctx, cached.sel, &early) })
	}
	wg.Wait()
	if infoErr == nil {
		part.info = &info
	}
	if bErr != nil {
		part.buckets = nil
		b.sel.Store(nil)
		return part, upstream.Join(infoErr, bErr)
	}
	part.sel = SelectBuckets(b.opts.Host, part.info, part.buckets, b.opts.Now())
	b.sel.Store(&cachedSelection{sel: part.sel, at: b.opts.Now()})
	if useEarly && earlyErr == nil && sameSelection(cached.sel, part.sel) {
		part.window, part.afk, part.web = early.window, early.afk, early.web
		return part, infoErr
	}
	err := b.fetchEvents(ctx, part.sel, &part)
	if err != nil && infoErr == nil {
		err = &UnreadableError{Buckets: slices.Clone(part.failed), Err: err}
	}
	return part, upstream.Join(infoErr, err)
}

func (b *Builder) fetchEvents(ctx context.Context, sel Selection, into *awPart) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	get := func(id string, dst *[]aw.Event) {
		evs, err := b.readNewest(ctx, id)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			into.failed = append(into.failed, id)
			return
		}
		*dst = evs
	}
	if sel.Window != "" {
		wg.Go(func() { get(sel.Window, &into.window) })
	}
	if sel.AFK != "" {
		wg.Go(func() { get(sel.AFK, &into.afk) })
	}
	webs := make([][]aw.Event, len(sel.Web))
	for i, id := range sel.Web {
		wg.Go(func() { get(id, &webs[i]) })
	}
	wg.Wait()
	if len(sel.Web) > 0 {
		into.web = make(map[string][]aw.Event, len(sel.Web))
		for i, id := range sel.Web {
			if webs[i] != nil {
				into.web[id] = webs[i]
			}
		}
	}
	return upstream.Join(errs...)
}

// withholdAll is what a frame applies while the person's privacy filters
// are unknown (the settings could not be read yet): no title, no URL.
const withholdAll = `[{"enabled":true,"field":"title","pattern":"(?s).","action":"redact","replacement":"(withheld: ActivityWatch's privacy filters could not be read yet)"},` +
	`{"enabled":true,"field":"url","pattern":"(?s).","action":"redact","replacement":"(withheld)"}]`

// filter applies the person's privacy filters to the events read: a
// dropped event is as if never stored (the newest one left is shown,
// with its age), a redacted one carries the replacement.
func (b *Builder) filter(part *awPart) {
	f := b.opts.PrivacyFilters.Last()
	if b.opts.Settings != nil && !b.opts.PrivacyFilters.Seen() {
		f = transform.ParsePrivacyFilters([]byte(withholdAll))
	}
	if f.Len() == 0 {
		return
	}
	part.window = f.AWEvents(part.sel.Window, part.window)
	part.afk = f.AWEvents(part.sel.AFK, part.afk)
	for id, evs := range part.web {
		part.web[id] = f.AWEvents(id, evs)
	}
}

func sameSelection(a, b Selection) bool {
	if a.Host != b.Host || a.Window != b.Window || a.AFK != b.AFK || len(a.Web) != len(b.Web) {
		return false
	}
	// Web buckets are ordered by last update, which flips as browsers take
	// turns: compare them as a set.
	for _, id := range a.Web {
		if !slices.Contains(b.Web, id) {
			return false
		}
	}
	return true
}
