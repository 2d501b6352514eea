package activity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
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

// Defaults of FetcherOptions.
const (
	DefaultParallel = 4
	DefaultMinSplit = 15 * time.Minute
	// DefaultHeavyParallel is 1: on the real Python aw-server a week of
	// window events read a day at a time takes 1.6 s one read after
	// another and 2.0 s two or four at once (it computes each answer
	// under one interpreter lock), and a frame's read sent meanwhile
	// waits behind every read in flight. aw-server-rust hands every
	// request to one datastore thread, so it is no faster in parallel.
	DefaultHeavyParallel = 1
	// heavySpan is the span beyond which a read counts as heavy: a day,
	// or the part of one before the last few minutes re-read.
	heavySpan = time.Hour
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
	// HeavyParallel bounds the reads of more than an hour of events in
	// flight at once, across every call of the Fetcher (default
	// DefaultHeavyParallel); small reads (the open day's newest minutes)
	// go beside them up to Parallel.
	HeavyParallel int
	// MinSplit is the shortest piece a day is split into when its answer
	// exceeds the client's body limit (default 15 min): such a piece is
	// halved and each half read again, down to this.
	MinSplit time.Duration
	// Thresholds decide when a bucket is stale (default: the frame's,
	// nowframe.DefaultThresholds).
	Thresholds nowframe.Thresholds
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Fetcher reads the raw events of periods from ActivityWatch. It holds no
// state between calls (callers cache Meta or Raw as they see fit) and is
// safe for concurrent use.
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
	if opts.MinSplit <= 0 {
		opts.MinSplit = DefaultMinSplit
	}
	if opts.HeavyParallel <= 0 {
		opts.HeavyParallel = DefaultHeavyParallel
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := nowframe.DefaultThresholds()
	if opts.Thresholds.Window <= 0 {
		opts.Thresholds.Window = d.Window
	}
	if opts.Thresholds.AFK <= 0 {
		opts.Thresholds.AFK = d.AFK
	}
	if opts.Thresholds.Web <= 0 {
		opts.Thresholds.Web = d.Web
	}
	return &Fetcher{opts: opts, heavy: make(chan struct{}, opts.HeavyParallel)}
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

// Raw is a period's raw events of one host: what the computation reads.
// Each bucket's events are oldest first, clipped to [Period.Start,
// Period.End) (an event straddling a bound keeps only its part inside),
// decoded once. An event the day split cut in two is whole again when
// ActivityWatch gave it an id. A plain value once returned; the events'
// Data are never shared with another Raw.
type Raw struct {
	Period Period
	// Window and AFK are the selected window and AFK buckets' events (nil
	// when the host has no such bucket: Source.Note says so).
	Window []aw.Event
	AFK    []aw.Event
	// Web are the selected web.tab.current buckets, in the selection's
	// order (most recently updated first), one per bucket read.
	Web []WebEvents
	// Source is the host and the buckets read, each with its event count
	// and freshness.
	Source Source
	// Freshness says when the data was read and which watchers are stale.
	Freshness Freshness
	// Requests counts the event reads made (pieces of days times buckets).
	Requests int
}

// WebEvents are one web.tab.current bucket's events.
type WebEvents struct {
	Bucket string
	Events []aw.Event
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

// piece is one read's answer: the events of one bucket within span, newest
// first as served.
type piece struct {
	span   Span
	events []aw.Event
	// unread says ActivityWatch's answer for span stayed over the body
	// limit (activitywatch.max_body_bytes) at MinSplit: anything can store
	// that many events in so short a time. The span is left out, with a
	// note, rather than fail the period.
	unread bool
}

// target is one bucket to read.
type target struct {
	id, role string
}

// Events reads the period's events of the buckets m selected: the window,
// AFK and every web bucket, each split into the period's days (so each
// answer stays small and a week is read in parallel), at most Parallel
// reads at once, each read one call through the source. A day whose answer
// exceeds the client's body limit is halved and read again, down to
// MinSplit. A failure of the window or AFK bucket fails the whole read
// with an *UnreadableError (the other reads are cancelled); a web bucket
// that fails is marked unreadable in Source and left out.
func (f *Fetcher) Events(ctx context.Context, m *Meta, p Period) (*Raw, error) {
	sel := m.Selection
	var targets []target
	if sel.Window != "" {
		targets = append(targets, target{sel.Window, RoleWindow})
	}
	if sel.AFK != "" {
		targets = append(targets, target{sel.AFK, RoleAFK})
	}
	for _, id := range sel.Web {
		targets = append(targets, target{id, RoleWeb})
	}
	days := p.Days()

	pieces := make([][][]piece, len(targets)) // [target][day]
	for t := range pieces {
		pieces[t] = make([][]piece, len(days))
	}
	var requests atomic.Int64
	errs, err := readTargetDays(ctx, targets, len(days), f.opts.Parallel, func(ctx context.Context, t, d int) error {
		got, n, err := f.readSpan(ctx, targets[t].id, days[d])
		requests.Add(int64(n))
		if err == nil {
			pieces[t][d] = got // each (target, day) has its own slot
		}
		return err
	}, nil)
	if err != nil {
		return nil, err
	}

	now := f.opts.Now()
	raw := &Raw{Period: p, Requests: int(requests.Load()),
		Source:    Source{Host: sel.Host, HostSource: sel.HostSource, Note: sel.Note, Buckets: []BucketRead{}},
		Freshness: Freshness{AsOf: now}}
	for t, tg := range targets {
		br := f.bucketRead(m, tg, now, time.Time{})
		if errs[t] != nil {
			br.Unreadable = true
			raw.Source.Note = joinNote(raw.Source.Note, "a browser bucket could not be read: its tabs are missing")
		} else {
			evs := assemble(slices.Concat(pieces[t]...), p)
			br.Events = len(evs)
			switch tg.role {
			case RoleWindow:
				raw.Window = evs
			case RoleAFK:
				raw.AFK = evs
			default:
				raw.Web = append(raw.Web, WebEvents{Bucket: tg.id, Events: evs})
			}
		}
		if br.Stale {
			raw.Freshness.StaleWatchers = append(raw.Freshness.StaleWatchers, tg.id)
		}
		raw.Source.Buckets = append(raw.Source.Buckets, br)
	}
	return raw, nil
}

// readTargetDays calls read for every (target, day), the newest day first,
// at most parallel at once; read fills its own (target, day) slot. The
// first failure of a window or AFK target cancels the reads left (no
// answer without it); a web target's failure only marks it. dayDone, when
// set, hears each day as its last read ends (ctx is cancelled once the
// call has failed). It returns each target's first failure (nil where
// none) and an *UnreadableError when a window or AFK bucket failed, else
// the caller's ctx error (some days were never read).
func readTargetDays(ctx context.Context, targets []target, days, parallel int,
	read func(ctx context.Context, t, d int) error, dayDone func(ctx context.Context, d int, failed bool)) ([]error, error) {
	type job struct{ t, d int }
	jobs := make([]job, 0, len(targets)*days)
	for d := days - 1; d >= 0; d-- {
		for t := range targets {
			jobs = append(jobs, job{t, d})
		}
	}
	errs := make([]error, len(targets))
	left := make([]int, days) // reads left per day
	failedDay := make([]bool, days)
	for d := range left {
		left[d] = len(targets)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	queue := make(chan job)
	for range min(parallel, len(jobs)) {
		wg.Go(func() {
			for j := range queue {
				err := read(ctx, j.t, j.d)
				mu.Lock()
				if err != nil && errs[j.t] == nil && ctx.Err() == nil {
					// Once ctx is done, failures are its consequence.
					errs[j.t] = err
					if targets[j.t].role != RoleWeb {
						cancel()
					}
				}
				failedDay[j.d] = failedDay[j.d] || err != nil
				left[j.d]--
				done, failed := left[j.d] == 0, failedDay[j.d]
				mu.Unlock()
				if done && dayDone != nil {
					dayDone(ctx, j.d, failed)
				}
			}
		})
	}
feed:
	for _, j := range jobs {
		select {
		case queue <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()

	var (
		failed   []string
		failures []error
	)
	for t, tg := range targets {
		if errs[t] != nil && tg.role != RoleWeb {
			failed = append(failed, tg.id)
			failures = append(failures, errs[t])
		}
	}
	if len(failed) > 0 {
		return errs, &UnreadableError{Buckets: failed, Err: upstream.Join(failures...)}
	}
	return errs, parent.Err()
}

// readSpan reads one bucket's events within span in one call through the
// source; an answer over the body limit halves the span (down to
// MinSplit) and reads each half. It returns the pieces in time order and
// how many reads it made. The events returned are charged to the budget
// ctx carries (the caller refunds them); running out of it fails the read.
func (f *Fetcher) readSpan(ctx context.Context, id string, span Span) ([]piece, int, error) {
	var (
		evs              []aw.Event
		tooLarge, unread bool
	)
	heavy := span.Duration() > heavySpan
	if heavy {
		select {
		case f.heavy <- struct{}{}:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	err := f.do(ctx, func(ctx context.Context) error {
		got, err := f.opts.AW.Events(ctx, id, aw.EventQuery{Start: span.Start, End: span.End, SkipMalformed: true})
		if aw.KindOf(err) == aw.TooLarge {
			// The server answered; our limit refused it. Not a failure:
			// halve the span, or leave it out once it is MinSplit short.
			tooLarge, unread = span.Duration() >= 2*f.opts.MinSplit, span.Duration() < 2*f.opts.MinSplit
			return nil
		}
		evs = got
		return err
	})
	if heavy {
		<-f.heavy // released before the halves are read
	}
	if err != nil {
		return nil, 1, err
	}
	if unread {
		return []piece{{span: span, unread: true}}, 1, nil
	}
	if !tooLarge {
		if err := budgetOf(ctx).charge(len(evs)); err != nil {
			budgetOf(ctx).refund(len(evs))
			return nil, 1, err
		}
		return []piece{{span: span, events: evs}}, 1, nil
	}
	mid := span.Start.Add(span.Duration() / 2).Truncate(time.Millisecond)
	a, na, err := f.readSpan(ctx, id, Span{Start: span.Start, End: mid})
	if err != nil {
		return nil, 1 + na, err
	}
	b, nb, err := f.readSpan(ctx, id, Span{Start: mid, End: span.End})
	if err != nil {
		budgetOf(ctx).refund(pieceEvents(a))
		return nil, 1 + na + nb, err
	}
	return append(a, b...), 1 + na + nb, nil
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
	limit := f.opts.Thresholds.Web
	switch tg.role {
	case RoleWindow:
		limit = f.opts.Thresholds.Window
	case RoleAFK:
		limit = f.opts.Thresholds.AFK
	}
	br.Stale = age > limit
	return br
}

// stitchTolerance is how close to a piece's boundary an event must end and
// the next begin to be taken for one event the split cut (durations are
// float seconds; the server rounds the range's end up by 1 ms).
const stitchTolerance = time.Millisecond

// assemble turns the pieces of one bucket (in time order, each newest
// first) into its events oldest first, clipped to the pieces' spans and to
// the period, with an event cut at a boundary between pieces joined again
// when both parts carry the same id.
func assemble(pieces []piece, p Period) []aw.Event {
	n := 0
	for _, pc := range pieces {
		n += len(pc.events)
	}
	out := make([]aw.Event, 0, n)
	for _, pc := range pieces {
		lo, hi := pc.span.Start, pc.span.End
		if lo.Before(p.Start) {
			lo = p.Start
		}
		if hi.After(p.End) {
			hi = p.End
		}
		joinable := len(out) // the first event of this piece may continue out[joinable-1]
		for i := len(pc.events) - 1; i >= 0; i-- {
			e, ok := clip(pc.events[i], lo, hi)
			if !ok {
				continue
			}
			if len(out) == joinable && joinable > 0 && sameEvent(out[joinable-1], e, lo) {
				prev := &out[joinable-1]
				prev.Duration = e.End().Sub(prev.Timestamp).Seconds()
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// clip keeps the part of e within [lo, hi): false when none is. An event
// without duration is kept when it starts within. An event left whole
// keeps its duration exactly as served.
func clip(e aw.Event, lo, hi time.Time) (aw.Event, bool) {
	start, end := e.Timestamp, e.End()
	if e.Duration == 0 {
		return e, !start.Before(lo) && start.Before(hi)
	}
	if !end.After(lo) || !start.Before(hi) {
		return e, false
	}
	cut := false
	if start.Before(lo) {
		start, cut = lo, true
	}
	if end.After(hi) {
		end, cut = hi, true
	}
	if cut {
		e.Timestamp = start
		e.Duration = end.Sub(start).Seconds()
	}
	return e, true
}

// sameEvent reports whether prev, ending at boundary, and next, starting
// there, are the two parts of one stored event.
func sameEvent(prev, next aw.Event, boundary time.Time) bool {
	if prev.ID == nil || next.ID == nil || *prev.ID != *next.ID {
		return false
	}
	near := func(t time.Time) bool { d := t.Sub(boundary); return d > -stitchTolerance && d < stitchTolerance }
	return near(prev.End()) && near(next.Timestamp)
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return a + "; " + b
}
