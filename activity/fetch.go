package activity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/upstream"
)

// Reader is what a Fetcher reads of ActivityWatch; *aw.Client implements
// it.
type Reader interface {
	Info(ctx context.Context) (aw.Info, error)
	Buckets(ctx context.Context) (map[string]aw.Bucket, error)
	Events(ctx context.Context, bucketID string, q aw.EventQuery) ([]aw.Event, error)
	Settings(ctx context.Context) (aw.Settings, error)
}

// DefaultParallel is FetcherOptions.Parallel's default.
const DefaultParallel = 4

const (
	// heavyParallel is 1: on the real Python aw-server a week of window
	// events read a day at a time takes 1.6 s one read after another and
	// 2.0 s two or four at once (it computes each answer under one
	// interpreter lock), and a frame's read sent meanwhile waits behind
	// every read in flight. aw-server-rust hands every request to one
	// datastore thread, so it is no faster in parallel. Small reads (the
	// open day's newest minutes) go beside a heavy one up to Parallel.
	heavyParallel = 1
	// heavySpan is the span beyond which a read counts as heavy: a day,
	// or the part of one before the last few minutes re-read.
	heavySpan = time.Hour
	// minSplit is the shortest piece a read is split into when its answer
	// exceeds the client's body limit: such a piece is halved and each
	// half read again, down to this.
	minSplit = 15 * time.Minute
)

// FetcherOptions configure a Fetcher.
type FetcherOptions struct {
	// AW reads ActivityWatch.
	AW Reader
	// Source guards ActivityWatch's history: its deadline, circuit breaker
	// and last status. Give it one of its own, not the live frame's, so
	// that a slow week never opens the frame's circuit nor shows in
	// health. Each read (the server's metadata, and each piece of a
	// period's events) is one call through it, so a server failing every
	// read opens the circuit, while one bucket that keeps failing as the
	// others answer does not (the server is up). nil: reads go straight to
	// AW.
	Source *upstream.Source
	// Host is the configured host whose buckets to read ("" =
	// ActivityWatch's own hostname, else the most recently updated), as
	// for frames (nowframe.SelectBuckets).
	Host string
	// Parallel bounds the event reads in flight (default 4).
	Parallel int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Fetcher reads ActivityWatch's metadata and a bucket's events (readSpan)
// through the source. It holds no state between calls but the heavy reads
// in flight, and is safe for concurrent use.
type Fetcher struct {
	opts FetcherOptions
	// heavy holds a token per heavy read in flight.
	heavy chan struct{}
}

// NewFetcher returns a Fetcher with defaults applied.
func NewFetcher(opts FetcherOptions) *Fetcher {
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Fetcher{opts: opts, heavy: make(chan struct{}, heavyParallel)}
}

// do runs fn through the source, or directly without one.
func (f *Fetcher) do(ctx context.Context, fn func(ctx context.Context) error) error {
	if f.opts.Source == nil {
		return fn(ctx)
	}
	return f.opts.Source.Do(ctx, fn)
}

// Meta is what a period's reads need first: the server's info and bucket
// list, the buckets chosen, and ActivityWatch's settings (which place the
// period's days). A plain value once returned.
type Meta struct {
	// At is when it was read.
	At time.Time
	// Info is /api/0/info.
	Info aw.Info
	// Buckets is the bucket list, keyed by id.
	Buckets map[string]aw.Bucket
	// Selection is the host and buckets chosen, as frames choose them.
	Selection nowframe.Selection
	// Settings are ActivityWatch's settings; the zero value when they
	// could not be read (then the web UI's defaults apply).
	Settings aw.Settings
	// SettingsErr says why the settings could not be read (an older
	// server without the endpoint, a malformed answer); nil when read. It
	// does not fail Meta.
	SettingsErr error
}

// Calendar is the calendar of zone with these settings.
func (m *Meta) Calendar(zone Zone) Calendar { return NewCalendar(zone, m.Settings) }

// Meta reads the server's info, bucket list and settings concurrently, in
// one call through the source, and selects the buckets of the configured
// host (or ActivityWatch's own, else the most recently updated). A failure
// of the info or bucket list fails it (an *upstream.Error around the
// *aw.Error when a Source is set); one of the settings does not.
func (f *Fetcher) Meta(ctx context.Context) (*Meta, error) {
	m := &Meta{}
	err := f.do(ctx, func(ctx context.Context) error {
		var (
			wg            sync.WaitGroup
			infoErr, bErr error
		)
		wg.Go(func() { m.Info, infoErr = f.opts.AW.Info(ctx) })
		wg.Go(func() { m.Buckets, bErr = f.opts.AW.Buckets(ctx) })
		wg.Go(func() { m.Settings, m.SettingsErr = f.opts.AW.Settings(ctx) })
		wg.Wait()
		return upstream.Join(infoErr, bErr)
	})
	if err != nil {
		return nil, err
	}
	m.At = f.opts.Now()
	m.Selection = nowframe.SelectBuckets(f.opts.Host, &m.Info, m.Buckets, m.At)
	return m, nil
}

// UnreadableError is a period's read failing for the window or AFK
// bucket, without which no activity can be computed: the frame's error
// of the same name (its text is the cause's; errors.As finds the
// *upstream.Error and *aw.Error; an aw.NotFound means the bucket vanished
// since Meta: read Meta again).
type UnreadableError = nowframe.UnreadableError

// ReadError is one bucket's events of one day that could not be read. Its
// text says what happened in a person's words ("ActivityWatch took
// longer than 30s to send Tuesday 24 Nov's window events"); errors.As
// finds the cause (an *upstream.Error, an *aw.Error).
type ReadError struct {
	// Role is the bucket's role (RoleWindow, RoleAFK, RoleWeb).
	Role string
	// Day is the day's start, in the period's zone.
	Day time.Time
	Err error
}

func (e *ReadError) Error() string {
	what := e.Day.Format("Monday 2 Jan") + "'s " + roleNoun(e.Role)
	var ue *upstream.Error
	switch {
	case errors.As(e.Err, &ue) && ue.TimedOut:
		return fmt.Sprintf("ActivityWatch took longer than %s to send %s", ue.Deadline, what)
	case errors.As(e.Err, &ue) && ue.Code == upstream.CodeCircuitOpen:
		return fmt.Sprintf("%s not read: %v", what, e.Err)
	}
	return fmt.Sprintf("ActivityWatch did not send %s: %v", what, e.Err)
}

// Unwrap returns the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// TimedOut reports whether the read ran out of its deadline (ActivityWatch
// answers, slowly), as opposed to failing.
func (e *ReadError) TimedOut() bool {
	var ue *upstream.Error
	return errors.As(e.Err, &ue) && ue.TimedOut
}

func roleNoun(role string) string {
	switch role {
	case RoleWindow:
		return "window events"
	case RoleAFK:
		return "AFK events"
	}
	return "browser tab events"
}

// target is one bucket to read.
type target struct {
	id, role string
}

// bucketRead describes target tg: its newest event's end and whether that
// is stale: seen (the newest event read) at now when it is the later, else
// the bucket list's as of when the list was read (it may be reused for
// some seconds: a watcher heartbeating since is not stale).
func (f *Fetcher) bucketRead(m *Meta, tg target, now, seen time.Time) BucketRead {
	br := BucketRead{ID: tg.id, Role: tg.role}
	b, ok := m.Buckets[tg.id]
	newest, at := b.LastUpdated, m.At
	if seen.After(newest) {
		newest, at = seen, now
	}
	if !ok || newest.IsZero() {
		return br
	}
	age := max(0, at.Sub(newest))
	ageS := math.Round(age.Seconds()*10) / 10
	br.NewestEnd, br.AgeS = &newest, &ageS
	th := nowframe.DefaultThresholds() // the frames': a bucket is stale alike
	limit := th.Web
	switch tg.role {
	case RoleWindow:
		limit = th.Window
	case RoleAFK:
		limit = th.AFK
	}
	br.Stale = age > limit
	return br
}
