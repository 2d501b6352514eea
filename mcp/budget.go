package mcp

import (
	"sync"
	"sync/atomic"
)

// firstReplyEstimate is what a call in flight is charged before the
// connection's first reply tells how big replies are: generous, so that
// the first calls of a connection cannot overshoot the budget by what
// their replies turn out to weigh. minReplyEstimate is the least any call
// is charged.
const (
	firstReplyEstimate = 16 << 10
	minReplyEstimate   = 1 << 10
)

// byteBudget bounds the reply bytes of stream connections that are either
// being produced (calls in flight, charged an estimate) or queued for the
// writer, across the Server. When a connection is over its own cap, or the
// Server over its budget, its reader pauses before the next message
// (backpressure); a connection with nothing charged may always go on, so
// that no connection starves behind others' unread replies.
type byteBudget struct {
	limit int64

	mu   sync.Mutex
	used int64
	peak int64         // the most bytes ever charged at once (tests read it)
	wake chan struct{} // closed when bytes are released; nil when nobody waits
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

// connBudget is one connection's share of a byteBudget.
type connBudget struct {
	b     *byteBudget
	limit int64
	used  int64        // guarded by b.mu
	held  int64        // of used, bytes the writer holds behind an open batch array; guarded by b.mu
	open  *batch       // the batch whose array is open on the wire; guarded by b.mu
	last  atomic.Int64 // size of the last reply: the estimate of the next
}

func (b *byteBudget) conn(limit int64) *connBudget {
	c := &connBudget{b: b, limit: limit}
	c.last.Store(firstReplyEstimate)
	return c
}

// charge counts n more bytes. It never blocks: producers of replies must
// not wait for the writer they feed.
func (c *connBudget) charge(n int) {
	if c == nil {
		return
	}
	b := c.b
	b.mu.Lock()
	c.used += int64(n)
	b.used += int64(n)
	if b.used > b.peak {
		b.peak = b.used
	}
	b.mu.Unlock()
}

// release uncounts n bytes and wakes paused readers.
func (c *connBudget) release(n int) {
	if c == nil {
		return
	}
	b := c.b
	b.mu.Lock()
	c.used -= int64(n)
	b.used -= int64(n)
	b.wakeLocked()
	b.mu.Unlock()
}

// wakeLocked wakes the paused readers, which check their condition again;
// b.mu is held.
func (b *byteBudget) wakeLocked() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// hold marks n charged bytes as held by the writer behind a batch's open
// array: they wait for the reader to finish the batch, so they must not
// stop it (wait).
func (c *connBudget) hold(n int) { c.held1(int64(n)) }

// unhold undoes hold (the bytes stay charged).
func (c *connBudget) unhold(n int) { c.held1(-int64(n)) }

func (c *connBudget) held1(n int64) {
	c.b.mu.Lock()
	c.held += n
	c.b.wakeLocked()
	c.b.mu.Unlock()
}

// opened records which batch's array is open on the wire (nil: none).
func (c *connBudget) opened(arr *batch) {
	c.b.mu.Lock()
	c.open = arr
	c.b.wakeLocked()
	c.b.mu.Unlock()
}

// estimate is what a new call in flight is charged until its reply exists.
func (c *connBudget) estimate() int {
	if c == nil {
		return 0
	}
	return int(max(c.last.Load(), minReplyEstimate))
}

// replied records the size of a reply for later estimates.
func (c *connBudget) replied(n int) {
	if c != nil {
		c.last.Store(int64(n))
	}
}

// wait blocks until the connection may start more work, or stop is
// closed (false). cur is the batch the reader is in (nil between lines).
// When every charged byte is held behind the open array of the very batch
// the reader is in, the reader may go on: only it can end that batch.
// Between lines held bytes count like any others.
func (c *connBudget) wait(stop <-chan struct{}, paused func(), cur *batch) bool {
	b := c.b
	hooked := false
	for {
		b.mu.Lock()
		if (cur != nil && c.open == cur && c.used == c.held) || (c.used < c.limit && b.used < b.limit) {
			b.mu.Unlock()
			return true
		}
		if b.wake == nil {
			b.wake = make(chan struct{})
		}
		wake := b.wake
		b.mu.Unlock()
		if !hooked && paused != nil {
			hooked = true
			paused()
		}
		select {
		case <-wake:
		case <-stop:
			return false
		}
	}
}
