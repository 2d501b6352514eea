package activity

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Defaults of the bounds on what one call holds (ServiceOptions). A real
// person's heavy day is ~10-30k window events and a week 50-200k; anything
// that can reach ActivityWatch's port can store millions (about 450 MiB of
// heap per million events held while a day is computed).
const (
	// DefaultMaxEvents bounds the raw events one call holds at once, over
	// all its buckets: 2,000,000.
	DefaultMaxEvents = 2_000_000
	// DefaultMaxCalls bounds the calls reading and computing at once per
	// Service (per process): 2; the others wait their turn.
	DefaultMaxCalls = 2
)

// DenseError is a period holding more of ActivityWatch's events than one
// call may hold at once (the Service's bound): ask a shorter period.
type DenseError struct {
	// Start and End are the period's.
	Start, End time.Time
	// Max is the bound.
	Max int
}

func (e *DenseError) Error() string {
	return fmt.Sprintf("period too dense: ActivityWatch holds more than %d events (the most one call reads) within %s - %s: ask a shorter period",
		e.Max, e.Start.Format(time.RFC3339), e.End.Format(time.RFC3339))
}

// errTooDense ends a call whose budget ran out (the call's context's cause).
var errTooDense = errors.New("period too dense")

// budget counts the raw events a call holds (read, or being read) against
// its bound; running out cancels the call with errTooDense. Safe for
// concurrent use; a nil budget counts nothing.
type budget struct {
	held   atomic.Int64
	max    int64
	cancel context.CancelCauseFunc
}

// charge counts n more events held; beyond the bound it cancels the call
// and returns errTooDense.
func (b *budget) charge(n int) error {
	if b == nil {
		return nil
	}
	if b.held.Add(int64(n)) > b.max {
		b.cancel(errTooDense)
		return errTooDense
	}
	return nil
}

// refund counts n events let go.
func (b *budget) refund(n int) {
	if b != nil {
		b.held.Add(-int64(n))
	}
}
