package toolbus

import (
	"math"
	"sync"
	"time"

	"github.com/awbridge/awbridge/internal/text"
	"github.com/awbridge/awbridge/toolbus/redact"
)

// How a call's progress reaches its caller (see Call.Progress).
const (
	// ProgressAfter is how long a call runs before its first progress
	// update goes out: a quick call reports none.
	ProgressAfter = time.Second
	// ProgressEvery is the least time between two updates: at most four
	// a second.
	ProgressEvery = 250 * time.Millisecond
	// maxProgressMessage bounds an update's message (bytes).
	maxProgressMessage = 200
)

// ProgressUpdate is how far a call has come, as its caller receives it.
type ProgressUpdate struct {
	// Progress is the work done so far; it grows with every update.
	Progress float64
	// Total is the work to do; 0 when unknown.
	Total float64
	// Message says what the call is doing, in a few plain words (fixed
	// text of the tool's, cleaned and bounded; "" for none).
	Message string
}

// progressGate passes a tool's progress reports on to the caller's sink:
// none before ProgressAfter, then at most one per ProgressEvery, the
// latest report winning (a report held back goes out when its time
// comes, so the last one before a pause is seen), each larger than the
// one before, and none once the call has returned. The sink is called
// with mu held, so that close waits for a sink call under way.
type progressGate struct {
	sink   func(ProgressUpdate)
	red    *redact.Redactor
	start  time.Time
	fired  chan struct{} // the timer's function has run (nil: no timer armed)
	timer  *time.Timer
	mu     sync.Mutex
	sent   bool
	last   time.Time // when the last update went out
	done   float64   // the last Progress accepted
	pend   ProgressUpdate
	hasPen bool
	closed bool
}

// newProgressGate returns the gate of one call, or nil when nobody
// listens (sink nil): then reports cost a nil check.
func newProgressGate(sink func(ProgressUpdate), red *redact.Redactor) *progressGate {
	if sink == nil {
		return nil
	}
	return &progressGate{sink: sink, red: red, start: time.Now()}
}

// report takes one report of the tool's. Safe from any goroutine.
func (g *progressGate) report(done, total float64, message string) {
	if g == nil || math.IsNaN(done) || math.IsInf(done, 0) {
		return
	}
	if math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		total = 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || ((g.sent || g.hasPen) && done <= g.done) {
		return // progress only grows
	}
	g.done = done
	g.pend, g.hasPen = ProgressUpdate{Progress: done, Total: total, Message: message}, true
	if g.timer != nil {
		return // a send is due: it takes this report
	}
	due := g.start.Add(ProgressAfter)
	if g.sent {
		due = g.last.Add(ProgressEvery)
	}
	if wait := time.Until(due); wait > 0 {
		fired := make(chan struct{})
		g.fired = fired
		g.timer = time.AfterFunc(wait, func() {
			defer close(fired)
			g.mu.Lock()
			defer g.mu.Unlock()
			g.timer = nil
			if !g.closed {
				g.sendLocked()
			}
		})
		return
	}
	g.sendLocked()
}

// sendLocked sends the pending report. Called with mu held.
func (g *progressGate) sendLocked() {
	if !g.hasPen {
		return
	}
	u := g.pend
	g.hasPen, g.sent, g.last = false, true, time.Now()
	if u.Message != "" {
		u.Message, _ = g.red.Text(u.Message)
		u.Message = text.Cut(redact.Clean(u.Message), maxProgressMessage)
	}
	g.sink(u)
}

// close ends the gate when the call returns: no update goes out after it
// has returned (a send under way finishes first).
func (g *progressGate) close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.closed = true
	t, fired := g.timer, g.fired
	g.mu.Unlock()
	if t != nil && !t.Stop() {
		<-fired // its function is running: it sees closed, or has sent
	}
}
