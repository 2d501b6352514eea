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

// Reader is what a Service reads of ActivityWatch; *aw.Client implements
// it.
type Reader interface {
	Info(ctx context.Context) (aw.Info, error)
	Buckets(ctx context.Context) (map[string]aw.Bucket, error)
	Events(ctx context.Context, bucketID string, q aw.EventQuery) ([]aw.Event, error)
	Settings(ctx context.Context) (aw.Settings, error)
}

const (
	// parallel bounds the event reads in flight.
	parallel = 4
	// heavyParallel is 1: on the real Python aw-server a week of window
	// events read a day at a time takes 1.6 s one read after another and
	// 2.0 s two or four at once (one interpreter lock), and a frame's read
	// sent meanwhile waits behind every read in flight; aw-server-rust has
	// one datastore thread. Small reads (the open day's newest minutes) go
	// beside a heavy one up to parallel.
	heavyParallel = 1
	// heavySpan is the span beyond which a read counts as heavy.
	heavySpan = time.Hour
	// minSplit is the shortest piece a read over the client's body limit
	// is halved into.
	minSplit = 15 * time.Minute
)

// serverMeta is what a period's reads need first: the server's info and
// bucket list, the buckets chosen, and ActivityWatch's settings (which
// place the period's days). A plain value once returned.
type serverMeta struct {
	At        time.Time // when it was read
	Info      aw.Info
	Buckets   map[string]aw.Bucket
	Selection nowframe.Selection
	// Settings are the zero value when they could not be read (then the
	// web UI's defaults apply); SettingsErr says why.
	Settings    aw.Settings
	SettingsErr error
}

// readMeta reads the server's info, bucket list and settings concurrently,
// in one call through the source, and selects the buckets of the
// configured host as frames do. A failure of the settings does not fail
// it.
func (s *Service) readMeta(ctx context.Context) (*serverMeta, error) {
	m := &serverMeta{}
	err := s.opts.Source.Do(ctx, func(ctx context.Context) error {
		var (
			wg            sync.WaitGroup
			infoErr, bErr error
		)
		wg.Go(func() { m.Info, infoErr = s.opts.AW.Info(ctx) })
		wg.Go(func() { m.Buckets, bErr = s.opts.AW.Buckets(ctx) })
		wg.Go(func() { m.Settings, m.SettingsErr = s.opts.AW.Settings(ctx) })
		wg.Wait()
		return upstream.Join(infoErr, bErr)
	})
	if err != nil {
		return nil, err
	}
	if m.SettingsErr != nil && aw.Transient(m.SettingsErr) && !s.opts.PrivacyFilters.Seen() {
		// Privacy first: the settings hold the person's privacy filters,
		// and none were ever read, so nothing can be answered without them.
		return nil, fmt.Errorf("ActivityWatch's settings, which hold your privacy filters, could not be read, so no activity is shown without them; try again: %w", m.SettingsErr)
	}
	m.At = s.now()
	m.Selection = nowframe.SelectBuckets(s.opts.Host, &m.Info, m.Buckets, m.At)
	return m, nil
}

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
	case RoleEditor:
		return "editor events"
	}
	return "browser tab events"
}

// target is one bucket to read.
type target struct {
	id, role string
	browser  string // the web UI's browser name of a web bucket
	excluded bool   // the privacy settings exclude the browser
	created  int64  // when the bucket was created (µs)
	host     int    // its host's index in inputs.hosts
	hostname string
}

// day names the target's day starting at start.
func (tg target) day(start int64) dayKey { return dayKey{tg.hostname, tg.id, tg.created, start} }

// bucketRead describes target tg: its newest event's end and whether that
// is stale: seen (the newest event read) at now when it is the later, else
// the bucket list's as of when the list was read (it may be reused for
// some seconds: a watcher heartbeating since is not stale).
func bucketRead(m *serverMeta, tg target, now, seen time.Time) BucketRead {
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
	br.Stale = age > limit && tg.role != RoleEditor // an editor reports only while used
	return br
}
