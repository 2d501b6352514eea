package activity

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Re-validating kept days. A kept closed day is final for the
// computation, not for the person, who may delete events in the web UI.
// ActivityWatch has no change feed, ETag or modification time, but
// GET .../events/count?start&end is cheap (a SQL count, ~15-20 ms on the
// Python aw-server). So a kept complete day is confirmed at most every
// revalidate after its last read or check, on the next call that needs
// it: one count per bucket over each run of due days, and only when that
// differs from what is expected (the count last confirmed, else the events
// held, an event across midnight counted once), one count per day; a day
// whose count differs is read again and the units computed over it are
// dropped. An edit that keeps the count (a changed title) is missed until
// the day leaves the store: catching it would cost what reading the days
// costs. aw-server-rust ignores the count's range, so it is skipped by its
// version, and a day counted beyond its run's total stops a check.

// DefaultRevalidate is how long a kept day is trusted after its last read
// or check (the Service's revalidate bound).
const DefaultRevalidate = 5 * time.Minute

// counter is what re-validation needs of the Reader (an *aw.Client has
// it; a Reader without it re-validates nothing).
type counter interface {
	EventCount(ctx context.Context, bucketID string, start, end time.Time) (int64, error)
}

// checkDay is a kept day due for a check, as its events were held then.
type checkDay struct {
	key  dayKey
	bd   *bucketDay
	full span64
	// want is the day's expected count: the last confirmed, else the
	// events held.
	want int64
	// head and tail are the ids of the events held at the day's start
	// and end (the parts of events across midnight).
	head, tail []int64
}

// revalidate checks the kept complete days of the call's period that are
// due (see above), before the call uses them. It fails nothing: a count
// that cannot be had leaves the days as they are until the next check.
func (s *Service) revalidate(ctx context.Context, m *serverMeta, in inputs, days []dayPlan, now time.Time) {
	c, ok := s.opts.AW.(counter)
	every := s.opts.revalidate
	if !ok || every < 0 || !s.store.enabled() || strings.Contains(m.Info.Version, "rust") {
		return
	}
	for _, tg := range in.targets {
		var run []checkDay
		for _, d := range days {
			cd, due := s.due(ctx, tg.day(d.full.start), d.full, every, now)
			if len(run) > 0 && (!due || run[len(run)-1].full.end != cd.full.start) {
				if s.checkRun(ctx, c, run, now) != nil {
					return
				}
				run = nil
			}
			if due {
				run = append(run, cd)
			}
		}
		if len(run) > 0 && s.checkRun(ctx, c, run, now) != nil {
			return
		}
	}
}

// due returns the kept day of key when it is complete and its last read
// or check is every old or more.
func (s *Service) due(ctx context.Context, key dayKey, full span64, every time.Duration, now time.Time) (checkDay, bool) {
	bd := s.store.peekDay(key)
	if bd == nil || bd.hold(ctx) != nil {
		return checkDay{}, false
	}
	defer bd.release()
	if !bd.complete(reread.Microseconds()) || us(now)-max(bd.readAt, bd.checkedAt) < every.Microseconds() {
		return checkDay{}, false
	}
	cd := checkDay{key: key, bd: bd, full: full, want: int64(len(bd.events))}
	if bd.counted {
		cd.want = bd.count
	}
	for _, e := range bd.events[:min(len(bd.events), overlapLookback)] {
		if e.Start == full.start && e.Duration > 0 {
			cd.head = append(cd.head, e.ID)
		}
	}
	for _, e := range bd.events[max(0, len(bd.events)-overlapLookback):] {
		if e.End() >= full.end && e.Duration > 0 {
			cd.tail = append(cd.tail, e.ID)
		}
	}
	return cd, true
}

// checkRun checks a run of consecutive due days of one bucket: one count
// over the run, then, when it differs, one per day. Only a failed count
// is returned.
func (s *Service) checkRun(ctx context.Context, c counter, run []checkDay, now time.Time) error {
	bucket := run[0].key.bucket
	rk := rangeKey{bucket, run[0].key.created, span64{run[0].full.start, run[len(run)-1].full.end}}
	want, ok := s.store.rangeCount(rk)
	if !ok {
		want = 0
		for i, cd := range run {
			want += cd.want
			if i > 0 {
				want -= int64(shared(run[i-1].tail, cd.head))
			}
		}
	}
	total, err := s.count(ctx, c, bucket, rk.span)
	var counts []int64 // per day, when the run's count differs
	if err == nil && total != want {
		counts = make([]int64, len(run))
		for i, cd := range run {
			if counts[i], err = s.count(ctx, c, bucket, cd.full); err != nil || counts[i] > total {
				counts = nil // no count, or one that ignores its range: learn nothing
				break
			}
		}
	}
	for i, cd := range run {
		if counts == nil {
			s.settle(ctx, cd, 0, false, false, now)
		} else {
			s.settle(ctx, cd, counts[i], true, counts[i] != cd.want, now)
		}
	}
	if err == nil && (counts != nil || total == want) {
		s.store.setRangeCount(rk, total)
	}
	return err
}

// settle records a check of cd's day: its count when counted, and, when
// changed, forgets its events (the call reads the day again) and drops
// the units computed over it.
func (s *Service) settle(ctx context.Context, cd checkDay, count int64, counted, changed bool, now time.Time) {
	if cd.bd.hold(ctx) != nil {
		return
	}
	cd.bd.checkedAt = us(now)
	if counted {
		cd.bd.count, cd.bd.counted = count, true
	}
	if changed && cd.bd.covered {
		cd.bd.forget()
	}
	cd.bd.release()
	if changed {
		s.store.dropUnits(cd.full)
		s.store.resize(cd.key, cd.bd, 0, now)
	}
}

// count is the server's count of bucket's events overlapping sp (its end
// excluded), through the source.
func (s *Service) count(ctx context.Context, c counter, bucket string, sp span64) (int64, error) {
	var n int64
	err := s.opts.Source.Do(ctx, func(ctx context.Context) error {
		var err error
		n, err = c.EventCount(ctx, bucket, time.UnixMicro(sp.start), time.UnixMicro(sp.end-1))
		return err
	})
	return n, err
}

// shared is how many ids a and b have in common.
func shared(a, b []int64) int {
	n := 0
	for _, x := range a {
		if x != 0 && slices.Contains(b, x) {
			n++
		}
	}
	return n
}
