package nowframe

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// PollerOptions configure a Poller.
type PollerOptions struct {
	// Interval between frames while active (default 1 s), jittered by up
	// to a tenth: while someone watches (Watch) or a call came in (Touch)
	// within ActiveFor.
	Interval time.Duration
	// IdleInterval between frames at rest (default 30 s), jittered alike.
	IdleInterval time.Duration
	// ActiveFor is how long after a call the active rhythm holds
	// (default 5 min).
	ActiveFor time.Duration
	// BucketListTTL is how long builds reuse ActivityWatch's server info
	// and bucket list while Run runs (default 10 s; see SetReuse).
	BucketListTTL time.Duration
	// History bounds how many changes are kept (default 1,000).
	History int
	// Frames bounds how many recent frames are kept, as snapshots
	// (default 600: ten minutes of polling).
	Frames int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Change is one switch the poller saw: what the person is doing changed
// (app, title, URL or AFK status) between two frames.
type Change struct {
	At      time.Time `json:"at"`
	Version uint64    `json:"frame_version"`
	// What names the fields that changed: "app", "title", "url", "afk".
	What    []string `json:"what"`
	Summary string   `json:"summary"`
}

// Snapshot is what nowframe_history shows of one past frame.
type Snapshot struct {
	At       time.Time `json:"at"`
	Version  uint64    `json:"frame_version"`
	BuiltFor string    `json:"built_for"`
	Summary  string    `json:"summary"`
	App      string    `json:"app,omitempty"`
	Title    string    `json:"title,omitempty"`
	URL      string    `json:"url,omitempty"`
	AFK      string    `json:"afk"`
	Stale    bool      `json:"stale"`
}

func snapshot(f *Frame) Snapshot {
	return Snapshot{At: f.Timestamp.UTC(), Version: f.Version, BuiltFor: f.Cause, Summary: f.Now.Summary,
		App: f.Now.Window.App, Title: f.Now.Window.Title, URL: f.Now.Browser.URL, AFK: f.Now.AFK.Status, Stale: f.Now.Stale}
}

// ring is a bounded, oldest-first buffer.
type ring[T any] struct {
	items []T
	next  int
	full  bool
}

func (r *ring[T]) add(v T) {
	r.items[r.next] = v
	r.next = (r.next + 1) % len(r.items)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring[T]) all() []T {
	var out []T
	if r.full {
		out = append(out, r.items[r.next:]...)
	}
	return append(out, r.items[:r.next]...)
}

// Poller keeps the builder's latest frame warm and a bounded feed of
// changes: one frame per interval while someone is watching or a call
// came in lately, one per idle interval otherwise. Safe for concurrent
// use; Run is called at most once and returns when its ctx ends.
type Poller struct {
	b    *Builder
	opts PollerOptions

	// The rhythm: measured on the monotonic clock from epoch, whatever
	// opts.Now says (a fake clock in tests must not stop the poller).
	epoch    time.Time
	lastCall atomic.Int64 // time since epoch of the last Touch, +1; 0: none
	watchers atomic.Int64
	idle     atomic.Bool   // Run sleeps for the idle interval
	wake     chan struct{} // a call or a watcher while idle (capacity 1)

	mu      sync.Mutex
	changes ring[Change]
	frames  ring[Snapshot]
	last    *Frame
	changed chan struct{} // closed and replaced at each change
	tried   chan struct{} // closed after Run's first attempt
}

// NewPoller returns a Poller over b. Pass its Observe as b's OnFrame.
func NewPoller(b *Builder, opts PollerOptions) *Poller {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.IdleInterval <= 0 {
		opts.IdleInterval = 30 * time.Second
	}
	if opts.ActiveFor <= 0 {
		opts.ActiveFor = 5 * time.Minute
	}
	if opts.BucketListTTL <= 0 {
		opts.BucketListTTL = 10 * time.Second
	}
	if opts.History <= 0 {
		opts.History = 1000
	}
	if opts.Frames <= 0 {
		opts.Frames = 600
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Poller{b: b, opts: opts, changes: ring[Change]{items: make([]Change, opts.History)},
		frames: ring[Snapshot]{items: make([]Snapshot, opts.Frames)}, changed: make(chan struct{}),
		tried: make(chan struct{}), epoch: time.Now(), wake: make(chan struct{}, 1)}
}

// Touch says a call came in: the active rhythm holds for ActiveFor from
// now, and a poller at rest wakes to build its next frame one Interval
// after its last. Cheap enough for every call.
func (p *Poller) Touch() {
	// Stored before idle is read, as Run stores idle before it reads
	// lastCall: one of the two sees the other.
	p.lastCall.Store(int64(time.Since(p.epoch)) + 1)
	if p.idle.Load() {
		p.poke()
	}
}

// Watch says someone watches the frame or health (a subscription): the
// active rhythm holds until release is called (once; more calls do
// nothing).
func (p *Poller) Watch() (release func()) {
	p.watchers.Add(1)
	if p.idle.Load() {
		p.poke()
	}
	var once sync.Once
	return func() { once.Do(func() { p.watchers.Add(-1) }) }
}

// Active reports whether the poller keeps the active rhythm: someone
// watches, or a call came in within ActiveFor.
func (p *Poller) Active() bool {
	if p.watchers.Load() > 0 {
		return true
	}
	lc := p.lastCall.Load()
	return lc != 0 && time.Since(p.epoch)-time.Duration(lc-1) < p.opts.ActiveFor
}

func (p *Poller) poke() {
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Tried returns a channel closed once Run has made its first attempt (a
// frame built, or ActivityWatch found down), so a server can answer its
// first caller from a warm frame.
func (p *Poller) Tried() <-chan struct{} { return p.tried }

// Run builds frames until ctx ends: every Interval while Active, else
// every IdleInterval; a call or a watcher arriving at rest brings the
// next frame forward to one Interval after the last. It reads the bucket
// list and server info every BucketListTTL and the sidecar every 5 s
// (SetReuse). A build is bounded by the sources' own deadlines. While
// ActivityWatch is down (its circuit open) each tick only probes it, so
// it is noticed within one interval of its return.
func (p *Poller) Run(ctx context.Context) error {
	p.b.SetReuse(p.opts.BucketListTTL, 5*time.Second)
	defer p.b.SetReuse(0, 0)
	defer p.idle.Store(false)
	t := time.NewTimer(0)
	defer t.Stop()
	var last time.Time // when the last tick started
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-p.wake:
			if !p.Active() {
				continue // a stale wake-up: the caller has gone quiet since
			}
			p.idle.Store(false)
			if wait := p.opts.Interval - time.Since(last); wait > 0 {
				t.Reset(wait)
				continue
			}
			t.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
		last = time.Now()
		// A source that is down is checked once per interval, cheaply;
		// the full read resumes as soon as it answers.
		if !p.b.AWDown() || p.b.ProbeAW(ctx) == nil {
			p.b.BuildFor(ctx, CausePoll) // the builder's OnFrame feeds Observe
		}
		select {
		case <-p.tried:
		default:
			close(p.tried)
		}
		// idle is stored before Active reads lastCall, as Touch stores
		// lastCall before it reads idle: a call is never slept through.
		p.idle.Store(true)
		every := p.opts.IdleInterval
		if p.Active() {
			p.idle.Store(false)
			every = p.opts.Interval
		}
		t.Reset(every + time.Duration(rand.Int64N(int64(every)/10+1)))
	}
}

// Observe records what changed since the last frame; the builder calls
// it (Options.OnFrame) for every frame, polled or asked for.
func (p *Poller) Observe(f *Frame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.last
	if prev != nil && f.Version < prev.Version {
		return // an older build finished late
	}
	p.last = f
	p.frames.add(snapshot(f))
	if prev == nil {
		return
	}
	what := diff(prev.Now, f.Now)
	if len(what) == 0 {
		return
	}
	p.changes.add(Change{At: f.Timestamp.UTC(), Version: f.Version, What: what, Summary: f.Now.Summary})
	close(p.changed)
	p.changed = make(chan struct{})
}

// diff names what the person-visible state changed between two frames.
func diff(a, b Now) []string {
	var what []string
	if a.Window.App != b.Window.App {
		what = append(what, "app")
	}
	if a.Window.Title != b.Window.Title || a.Window.Excluded != b.Window.Excluded {
		what = append(what, "title")
	}
	if a.Browser.URL != b.Browser.URL || a.Browser.Focused != b.Browser.Focused {
		what = append(what, "url")
	}
	if a.AFK.Status != b.AFK.Status {
		what = append(what, "afk")
	}
	return what
}

// Changes returns the changes of the last d (all kept ones when d <= 0),
// oldest first, at most limit (the newest ones) when limit > 0.
func (p *Poller) Changes(d time.Duration, limit int) []Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	return window(p.changes.all(), p.opts.Now().Add(-d), d > 0, limit, func(c Change) time.Time { return c.At })
}

// Frames returns snapshots of the frames of the last d (all kept ones
// when d <= 0), oldest first, at most limit (the newest) when limit > 0.
func (p *Poller) Frames(d time.Duration, limit int) []Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return window(p.frames.all(), p.opts.Now().Add(-d), d > 0, limit, func(s Snapshot) time.Time { return s.At })
}

func window[T any](all []T, cut time.Time, bounded bool, limit int, at func(T) time.Time) []T {
	if bounded {
		i := 0
		for i < len(all) && at(all[i]).Before(cut) {
			i++
		}
		all = all[i:]
	}
	if limit > 0 && len(all) > limit {
		all = all[len(all)-limit:]
	}
	return all
}

// Changed returns a channel closed at the next change (for subscribers).
func (p *Poller) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed // one channel for every subscriber: nothing piles up
}
