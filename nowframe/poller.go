package nowframe

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// PollerOptions configure a Poller (config's poll settings). Intervals
// are jittered by up to a tenth.
type PollerOptions struct {
	// Interval between frames while active: while someone watches (Watch)
	// or a call came in (Touch) within ActiveFor; IdleInterval otherwise.
	Interval, IdleInterval, ActiveFor time.Duration
	// BucketListTTL is how long builds reuse ActivityWatch's server info
	// and bucket list while Run runs (see SetReuse).
	BucketListTTL time.Duration
}

// Poller keeps the builder's latest frame (and its change feed) warm.
// Safe for concurrent use; Run is called at most once.
type Poller struct {
	b    *Builder
	opts PollerOptions

	// The rhythm runs on the monotonic clock from epoch, whatever the
	// builder's clock says.
	epoch    time.Time
	lastCall atomic.Int64 // time since epoch of the last Touch, +1; 0: none
	watchers atomic.Int64
	idle     atomic.Bool   // Run sleeps for the idle interval
	wake     chan struct{} // a call or a watcher while idle (capacity 1)

	tried chan struct{} // closed after Run's first attempt
}

// NewPoller returns a Poller over b; every option must be positive.
func NewPoller(b *Builder, opts PollerOptions) *Poller {
	return &Poller{b: b, opts: opts, tried: make(chan struct{}), epoch: time.Now(), wake: make(chan struct{}, 1)}
}

// Touch says a call came in: the active rhythm holds for ActiveFor, and a
// poller at rest builds its next frame one Interval after its last.
func (p *Poller) Touch() {
	// Stored before idle is read, as Run stores idle before it reads
	// lastCall: one of the two sees the other.
	p.lastCall.Store(int64(time.Since(p.epoch)) + 1)
	if p.idle.Load() {
		p.poke()
	}
}

// Watch says someone watches the frame or health (a subscription): the
// active rhythm holds until release is called (idempotent).
func (p *Poller) Watch() (release func()) {
	p.watchers.Add(1)
	if p.idle.Load() {
		p.poke()
	}
	var once sync.Once
	return func() { once.Do(func() { p.watchers.Add(-1) }) }
}

// Active reports whether someone watches or a call came in within
// ActiveFor.
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

// Tried returns a channel closed once Run has made its first attempt.
func (p *Poller) Tried() <-chan struct{} { return p.tried }

// Run builds frames until ctx ends: every Interval while Active, else
// every IdleInterval. It reads the bucket list and server info every
// BucketListTTL and the sidecar every 5 s (SetReuse). While ActivityWatch
// is down each tick only probes it.
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
		if !p.b.AWDown() || p.b.ProbeAW(ctx) == nil {
			p.b.BuildFor(ctx, CausePoll)
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
