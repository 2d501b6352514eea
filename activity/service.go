package activity

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/upstream"
)

// Defaults of the Service's bounds; tests set the unexported
// ServiceOptions to other values.
const (
	defaultCacheBytes = 64 << 20 // memory kept between calls
	defaultMetaTTL    = 10 * time.Second
	// cacheDays bounds how far back days are kept.
	cacheDays = 14
	// reread is how much of the newest data each call reads again: the
	// newest event grows with heartbeats, a watcher may deliver late.
	// Older data is final; a day is closed reread after its end.
	reread = 3 * time.Minute
)

// Progress is told how far a long call is: done of total steps (days read,
// units computed) with a fixed message (never data). It may be called
// from several goroutines, one call at a time.
type Progress func(done, total float64, msg string)

// ServiceOptions configure a Service.
type ServiceOptions struct {
	// AW reads ActivityWatch.
	AW Reader
	// Source guards ActivityWatch's history (deadline, circuit breaker,
	// last status): give it one of its own, not the live frame's, so that
	// a slow week never opens the frame's circuit. Each read is one call
	// through it.
	Source *upstream.Source
	// Host is the configured host whose buckets to read, as for frames
	// (nowframe.SelectBuckets).
	Host string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Zone is asked for the zone days are counted in at each call
	// (activity.timezone, or the machine's zone, followed).
	Zone func() Zone
	// Privacy are the frames' privacy settings, applied to every event
	// shown.
	Privacy nowframe.Privacy
	// PrivacyFilters parses ActivityWatch's privacy_filters setting, read
	// with the other settings (shared with the frames', for health; nil:
	// one of its own).
	PrivacyFilters *transform.PrivacyFilterCache
	// MetaTTL is how long the server's info, bucket list and settings are
	// used before they are read again (default 10 s; negative: every call).
	MetaTTL time.Duration

	// Bounds that only tests change (0: the default).
	cacheBytes int64         // negative keeps nothing (defaultCacheBytes)
	revalidate time.Duration // see revalidate; negative: never (DefaultRevalidate)
	maxEvents  int           // see DenseError (DefaultMaxEvents)
	maxCalls   int           // calls reading and computing at once (DefaultMaxCalls)
	parallel   int           // event reads in flight (parallel)
}

// Service answers the activity tools from ActivityWatch's stored events
// (see the package doc). Safe for concurrent use.
type Service struct {
	opts  ServiceOptions
	pr    *privacyRules
	store *store
	// key authenticates cursors (random per process).
	key [32]byte
	// heavy holds a token per heavy read in flight.
	heavy chan struct{}
	// calls holds a token per call reading or computing (maxCalls).
	calls chan struct{}

	mu      sync.Mutex
	classes classesMemo
	// cachedMeta is the last metadata read (see meta).
	cachedMeta *serverMeta
}

type classesMemo struct {
	raw     string
	classes transform.Classes
	err     error
}

// NewService returns a Service.
func NewService(opts ServiceOptions) *Service {
	switch {
	case opts.cacheBytes == 0:
		opts.cacheBytes = defaultCacheBytes
	case opts.cacheBytes < 0:
		opts.cacheBytes = 0
	}
	opts.MetaTTL = cmp.Or(opts.MetaTTL, defaultMetaTTL)
	if opts.PrivacyFilters == nil {
		opts.PrivacyFilters = &transform.PrivacyFilterCache{}
	}
	opts.revalidate = cmp.Or(opts.revalidate, DefaultRevalidate)
	opts.maxEvents = cmp.Or(opts.maxEvents, DefaultMaxEvents)
	opts.maxCalls = cmp.Or(opts.maxCalls, DefaultMaxCalls)
	opts.parallel = cmp.Or(opts.parallel, parallel)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, pr: &privacyRules{p: opts.Privacy}, store: newStore(opts.cacheBytes, cacheDays*24*time.Hour),
		heavy: make(chan struct{}, heavyParallel), calls: make(chan struct{}, opts.maxCalls)}
	_, _ = rand.Read(s.key[:]) // never fails (crypto/rand)
	return s
}

func (s *Service) now() time.Time { return s.opts.Now() }

// progress serializes a Progress and counts steps.
type progress struct {
	mu          sync.Mutex
	fn          Progress
	done, total float64
}

func (p *progress) step(n float64, msg string) {
	if p == nil || p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.fn(min(p.done, p.total), p.total, msg)
}

// inputs are the buckets a computation reads and its settings.
type inputs struct {
	targets []target
	hosts   []string // the hosts read, in precedence order
	hasAFK  []bool   // per host
	opt     transform.Options
	filters *transform.PrivacyFilters // the person's, applied to each bucket's events first
	key     string                    // targets and settings, for unit keys
}

// inputsOf chooses the buckets (of sels' hosts; their editors' with
// editors) and settings for m, with notes on what is missing.
func (s *Service) inputsOf(m *serverMeta, sels []nowframe.Selection, editors bool) (inputs, []string) {
	var (
		in    inputs
		notes []string
	)
	for h, sel := range sels {
		add := func(id, role, browser string) {
			in.targets = append(in.targets, target{id: id, role: role, browser: browser, created: us(m.Buckets[id].Created),
				excluded: browser != "" && s.pr.browserExcluded(browser), host: h, hostname: sel.Host})
		}
		in.hosts, in.hasAFK = append(in.hosts, sel.Host), append(in.hasAFK, sel.AFK != "")
		if sel.Window != "" {
			add(sel.Window, RoleWindow, "")
		} else {
			notes = append(notes, "no window watcher (aw-watcher-window) bucket for this host: there is no activity to count")
		}
		if sel.AFK != "" {
			add(sel.AFK, RoleAFK, "")
		} else if sel.Window != "" {
			notes = appendNote(notes, "no AFK watcher (aw-watcher-afk) bucket for a host: its window time all counts as active, as ActivityWatch's Android view counts it")
		}
		for _, bb := range transform.BrowserBuckets(sel.Web) {
			add(bb.BucketID, RoleWeb, bb.Browser)
		}
		if editors {
			for _, id := range editorBuckets(m, sel.Host) {
				add(id, RoleEditor, "")
			}
		}
	}
	if m.SettingsErr != nil {
		notes = append(notes, "ActivityWatch's settings could not be read: days start at 04:00, weeks on Monday, and the default categories apply")
	}
	in.opt.AlwaysActivePattern = m.Settings.AlwaysActivePattern
	cats, setting := string(m.Settings.Classes), "classes" // or the category sets, when only they are set
	if m.Settings.Classes == nil && m.Settings.CategorySets != nil {
		cats, setting = "\x00"+string(m.Settings.CategorySets)+"\x00"+string(m.Settings.ActiveSetIDs), "category_sets"
	}
	if cats != "" {
		cs, err := s.parseClasses(m.Settings, cats)
		if err != nil {
			notes = append(notes, "ActivityWatch's "+setting+" setting could not be used: the default categories apply")
		}
		in.opt.Classes = cs
	}
	filters := m.Settings.PrivacyFilters
	if m.SettingsErr != nil {
		filters = s.opts.PrivacyFilters.Raw() // the last rules read, as frames keep them: never none for a failed read
	}
	in.filters = s.opts.PrivacyFilters.Parse(filters)
	if in.filters != nil && len(in.filters.Skipped) > 0 {
		notes = append(notes, "some of ActivityWatch's privacy filters could not be used and do not apply (system_health says which)")
	}
	h := sha256.New()
	for _, t := range in.targets {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%s\x00", t.role, t.id, t.created, t.host, t.hostname)
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s", in.opt.AlwaysActivePattern, cats, filters)
	in.key = hex.EncodeToString(h.Sum(nil)[:16])
	return in, notes
}

// parseClasses parses the categories of set, once per distinct value raw
// of its category settings.
func (s *Service) parseClasses(set aw.Settings, raw string) (transform.Classes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.classes.raw != raw || (s.classes.classes == nil && s.classes.err == nil) {
		cs, err := transform.ClassesOf(set.Classes, set.CategorySets, set.ActiveSetIDs)
		s.classes = classesMemo{raw: raw, classes: cs, err: err}
	}
	if s.classes.err != nil {
		return nil, s.classes.err
	}
	return s.classes.classes, nil
}

// dayPlan is one calendar day of a period.
type dayPlan struct {
	full span64    // the whole day
	need span64    // its part within the period
	date time.Time // its start in the period's zone, for messages
}

// unitPlan is one unit of computation.
type unitPlan struct {
	span          span64
	whole         bool // a whole day, or a whole hour of an open day: kept once final
	before, after bool // computed with the time around it (within the period)
	margin        span64
}

// plan splits p into days and units: a closed day (ended Reread ago) is
// one unit, an open one is split into hours (why units: see the package
// doc). A unit's margins reach into the rest of the period, or, for a
// period split by day, only into the rest of its day.
func (s *Service) plan(p Period, now time.Time) ([]dayPlan, []unitPlan) {
	ps := spanOf(p.Span())
	var (
		days  []dayPlan
		units []unitPlan
	)
	for _, d := range p.Days() {
		full := p.Calendar.DayOf(d.Start)
		dp := dayPlan{full: spanOf(full), need: spanOf(d), date: full.Start}
		days = append(days, dp)
		bound := ps // what a unit's margins may reach
		if p.byDay {
			bound = dp.need
		}
		add := func(cell span64) {
			u := span64{max(cell.start, dp.need.start), min(cell.end, dp.need.end)}
			if u.start >= u.end {
				return
			}
			up := unitPlan{span: u, whole: u == cell, before: u.start > bound.start, after: u.end < bound.end}
			up.margin = u
			if up.before {
				up.margin.start = max(bound.start, u.start-margin)
			}
			if up.after {
				up.margin.end = min(bound.end, u.end+margin)
			}
			units = append(units, up)
		}
		if !full.End.Add(reread).After(now) {
			add(dp.full)
			continue
		}
		for h := dp.full.start; h < dp.full.end; h += int64(time.Hour / time.Microsecond) {
			add(span64{h, min(h+int64(time.Hour/time.Microsecond), dp.full.end)})
		}
	}
	return days, units
}

// prepared is a period read and computed.
type prepared struct {
	period Period
	now    time.Time
	units  []*unitResult
	source Source
	fresh  Freshness
	notes  []string
}

// prepare reads the server's metadata, places the period on the calendar
// at now (resolve), reads its events (the editors' only when asked: they
// cost the slow server as much as a third more) and computes its units
// (what the store lacks).
func (s *Service) prepare(ctx context.Context, host string, editors bool, resolve func(c Calendar, now time.Time) (Period, error), fn Progress) (*prepared, error) {
	m, err := s.meta(ctx)
	if err != nil {
		return nil, err
	}
	sels, err := selections(m, host)
	if err != nil {
		return nil, err
	}
	now := s.now()
	p, err := resolve(NewCalendar(s.opts.Zone(), m.Settings), now)
	if err != nil {
		return nil, err
	}
	in, notes := s.inputsOf(m, sels, editors)
	days, plans := s.plan(p, now)
	prog := &progress{fn: fn, total: float64(len(days) + len(plans))}
	if err := s.turn(ctx, prog); err != nil {
		return nil, err
	}
	defer func() { <-s.calls }()
	s.revalidate(ctx, m, in, days, now)
	call, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	b := &budget{max: int64(s.opts.maxEvents), cancel: cancel}
	ld := newPeriodEvents(in, days, b)
	c := s.newComputer(call, in, ld, plans, now, prog)
	err = s.loadInto(call, ld, in, now, prog, c.dayDone)
	units := c.finish()
	if context.Cause(call) == errTooDense && ctx.Err() == nil {
		return nil, &DenseError{Start: p.Start, End: p.End, Max: s.opts.maxEvents}
	}
	if err != nil {
		if aw.KindOf(err) == aw.NotFound {
			s.forgetMeta(m) // a bucket vanished (maybe to be created again)
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pr := &prepared{period: p, now: now, units: units, notes: notes,
		source: Source{Host: sels[0].Host, HostSource: sels[0].HostSource, Note: sels[0].Note, Buckets: []BucketRead{}},
		fresh:  Freshness{AsOf: now.In(p.Start.Location())}}
	if host == HostAll {
		pr.source.Host, pr.source.HostSource, pr.source.Note = HostAll, HostFromArgument, ""
	}
	counts := make([]int, len(in.targets))
	for t, tg := range in.targets {
		var (
			events int
			end    int64 // the newest event's (days hold later events than the days before)
			holes  []span64
		)
		for _, r := range ld.reads[t] {
			events, holes = events+r.count, append(holes, r.holes...)
			end = cmp.Or(r.end, end)
		}
		seen := time.Time{}
		if end != 0 {
			seen = time.UnixMicro(end)
		}
		br := bucketRead(m, tg, now, seen)
		br.Events, counts[t] = events, events
		if br.NewestEnd != nil {
			t := br.NewestEnd.In(p.Start.Location())
			br.NewestEnd = &t
		}
		if ld.failed[t] != nil {
			br.Unreadable = true
			pr.notes = appendNote(pr.notes, "a browser bucket could not be read: its tabs are missing")
		}
		for _, n := range holeNotes(tg.role, holes, p.Start.Location()) {
			pr.notes = appendNote(pr.notes, n)
		}
		br.Stale = br.Stale && !p.End.Before(now.Truncate(time.Millisecond)) // a closed period is whole
		if br.Stale {
			pr.fresh.StaleWatchers = append(pr.fresh.StaleWatchers, tg.id)
		}
		pr.source.Buckets = append(pr.source.Buckets, br)
	}
	if p.Note != "" {
		pr.notes = appendNote(pr.notes, p.Note)
	}
	pr.source.Hosts = hostsWithData(m, in, counts, p.Start)
	return pr, nil
}

// turn waits until fewer than MaxCalls calls read or compute, or ctx ends,
// saying so through prog while it waits; the caller gives its turn back
// (<-s.calls).
func (s *Service) turn(ctx context.Context, prog *progress) error {
	select {
	case s.calls <- struct{}{}:
		return nil
	default:
	}
	prog.step(0, "waiting for another activity call to finish")
	select {
	case s.calls <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// meta returns the server's info, bucket list and settings, read again
// once older than MetaTTL, or at once when they name no window bucket (the
// person's first watcher may have just started).
func (s *Service) meta(ctx context.Context) (*serverMeta, error) {
	s.mu.Lock()
	m := s.cachedMeta
	s.mu.Unlock()
	if m != nil && s.now().Sub(m.At) < s.opts.MetaTTL {
		return m, nil
	}
	m, err := s.readMeta(ctx)
	if err != nil {
		return nil, err
	}
	if m.Selection.Window != "" {
		s.mu.Lock()
		s.cachedMeta = m
		s.mu.Unlock()
	}
	return m, nil
}

// forgetMeta drops m from the cache, if it is still there.
func (s *Service) forgetMeta(m *serverMeta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cachedMeta == m {
		s.cachedMeta = nil
	}
}

// maxHoleNotes bounds the notes on stretches left out, per bucket.
const maxHoleNotes = 3

// holeNotes says which stretches of a bucket were left out (holes, in time
// order): ActivityWatch holds more of its events there than awbridge reads
// in so short a time. Touching stretches are one; beyond maxHoleNotes, one
// note counts the rest.
func holeNotes(role string, holes []span64, loc *time.Location) []string {
	var joined []span64
	for _, h := range holes {
		if n := len(joined); n > 0 && joined[n-1].end >= h.start {
			joined[n-1].end = max(joined[n-1].end, h.end)
			continue
		}
		joined = append(joined, h)
	}
	var notes []string
	for i, h := range joined {
		if i == maxHoleNotes {
			notes = append(notes, fmt.Sprintf("%d more stretches of %s are left out for the same reason", len(joined)-i, roleNoun(role)))
			break
		}
		start, end := time.UnixMicro(h.start).In(loc), time.UnixMicro(h.end).In(loc)
		notes = append(notes, fmt.Sprintf("ActivityWatch holds more %s from %s to %s than awbridge reads in so short a time "+
			"(activitywatch.max_body_bytes): that time is left out", roleNoun(role), start.Format("Mon 2 Jan 15:04:05"), end.Format("Mon 2 Jan 15:04:05")))
	}
	return notes
}

func appendNote(notes []string, n string) []string {
	if slices.Contains(notes, n) {
		return notes
	}
	return append(notes, n)
}

// computer computes a call's units, each as soon as the days it reads
// (its own and those its margins reach) are read, while the other days
// are still being read; from the store when it holds them. The units run
// concurrently, one per CPU.
type computer struct {
	s     *Service
	ctx   context.Context
	in    inputs
	ld    *periodEvents
	plans []unitPlan
	now   time.Time
	prog  *progress
	out   []*unitResult
	days  [][]int // per unit: the days it reads

	mu        sync.Mutex
	wait      []int   // per unit: its days not yet read
	byDay     [][]int // per day: the units reading it
	readers   []int   // per day: the units reading it not yet computed
	read      []bool  // per day: read (every target's)
	dayFailed []bool  // per day: a read failed (its units are not kept)
	queue     chan int
	wg        sync.WaitGroup
}

func (s *Service) newComputer(ctx context.Context, in inputs, ld *periodEvents, plans []unitPlan, now time.Time, prog *progress) *computer {
	c := &computer{s: s, ctx: ctx, in: in, ld: ld, plans: plans, now: now, prog: prog,
		out: make([]*unitResult, len(plans)), days: make([][]int, len(plans)),
		wait: make([]int, len(plans)), byDay: make([][]int, len(ld.days)), dayFailed: make([]bool, len(ld.days)),
		readers: make([]int, len(ld.days)), read: make([]bool, len(ld.days)),
		queue: make(chan int, len(plans))}
	for i, u := range plans {
		if c.final(u) {
			if r := s.store.unit(c.key(u)); r != nil {
				c.out[i] = r
				prog.step(1, "computing the period")
				continue
			}
		}
		for d, dp := range ld.days {
			if dp.need.start < u.margin.end && u.margin.start < dp.need.end {
				c.wait[i]++
				c.days[i] = append(c.days[i], d)
				c.byDay[d] = append(c.byDay[d], i)
				c.readers[d]++
			}
		}
	}
	for range min(runtime.GOMAXPROCS(0), len(plans)) {
		c.wg.Go(c.work)
	}
	return c
}

func (c *computer) key(u unitPlan) unitKey { return unitKey{c.in.key, u.span, u.before, u.after} }

// final reports whether a unit's result may be kept: a whole unit whose
// data (margins included) is final.
func (c *computer) final(u unitPlan) bool {
	return u.whole && u.margin.end+reread.Microseconds() <= us(c.now)
}

// dayDone is told a day was read: the units waiting for it alone start;
// a day no unit reads (they were kept) is let go.
func (c *computer) dayDone(d int, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dayFailed[d] = c.dayFailed[d] || failed
	c.read[d] = true
	if c.readers[d] == 0 {
		c.ld.release(d)
	}
	for _, i := range c.byDay[d] {
		if c.wait[i]--; c.wait[i] == 0 {
			c.queue <- i
		}
	}
}

// unitDone is told unit i is computed (or given up): the days it alone
// still needed are let go.
func (c *computer) unitDone(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.days[i] {
		if c.readers[d]--; c.readers[d] == 0 && c.read[d] {
			c.ld.release(d)
		}
	}
}

// finish waits for the units started and returns every unit's result
// (nil for those whose days were not all read).
func (c *computer) finish() []*unitResult {
	close(c.queue)
	c.wg.Wait()
	return c.out
}

func (c *computer) work() {
	for i := range c.queue {
		c.compute(i)
		c.unitDone(i)
	}
}

// compute computes unit i, once its days are read.
func (c *computer) compute(i int) {
	if c.ctx.Err() != nil {
		return
	}
	u := c.plans[i]
	ins, editors := c.hostInputs(u.margin)
	r, err := computeUnit(c.ctx, ins, u.span, c.in.opt, c.s.pr)
	if err != nil {
		return // ctx ended: the caller returns its error
	}
	r.addEditor(editors, c.s.pr)
	c.mu.Lock()
	failed := slices.ContainsFunc(c.days[i], func(d int) bool { return c.dayFailed[d] })
	c.mu.Unlock()
	if c.final(u) && !failed {
		c.s.store.putUnit(c.key(u), r, c.now)
	}
	c.out[i] = r
	c.prog.step(1, "computing the period")
}
