// Package upstream is what every caller of ActivityWatch and the sidecar
// shares: a deadline per source (including retries), a circuit breaker, and
// the last status of each source, which health reports without probing.
package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Circuit is a breaker state.
type Circuit int

// Breaker states.
const (
	Closed Circuit = iota
	Open
	HalfOpen
)

// String returns "closed", "open" or "half-open".
func (c Circuit) String() string { return [...]string{"closed", "open", "half-open"}[c] }

// CodeCircuitOpen is the code of a call an open circuit refused (the tool
// bus's stable code).
const CodeCircuitOpen = "CircuitOpen"

// Options configure one Source.
type Options struct {
	// Name is the source's name in health and frames ("activitywatch").
	Name string
	// Code is the error code of its failures ("AwUnavailable").
	Code string
	// Configured is false for a source the person never set up (no
	// sidecar URL): it is never called and never degrades health.
	Configured bool
	Deadline   time.Duration     // bounds one Do, retries included (default 2 s)
	Now        func() time.Time  // default time.Now
	Classify   func(error) Class // sorts a failure; nil: every failure counts
	// OnChange, when set, is called outside any lock when the reported
	// state changes, with hysteresis so that a flapping source is not
	// reported at every call: its first result; down once the circuit
	// opens or at once on a misconfiguration; up after recoverThreshold
	// successes in a row.
	OnChange func(st Status)
}

// Class is what Options.Classify says of a failure.
type Class struct {
	Code string // replaces the source's Code ("": keep it)
	// Hint says what to fix, naming the setting; fixed text, never the
	// source's own words.
	Hint string
	// Misconfigured: the source answered and refused us (401, 403, a
	// refused Host header); only a setting fixes it, not a retry.
	// Answered: the source answered with an error of its own (a 5xx, a
	// malformed body); retryable. Either proves the source reachable, so
	// it does not count toward the breaker (one bucket or day that keeps
	// failing must not refuse every other read) and closes a half-open one.
	Misconfigured, Answered bool
}

// Status is the last known state of a source. It is a value: safe to copy.
type Status struct {
	Name       string    `json:"name"`
	Configured bool      `json:"configured"`
	Checked    bool      `json:"checked"`
	OK         bool      `json:"ok"`
	CheckedAt  time.Time `json:"checked_at,omitzero"`
	LatencyMs  float64   `json:"latency_ms"`
	Error      string    `json:"error,omitempty"`
	Circuit    string    `json:"circuit"`
	// ConsecutiveFailures counts the failures toward the breaker since
	// the source last answered.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// Code, Hint and Misconfigured describe the last failure (see Error).
	Code          string `json:"code,omitempty"`
	Hint          string `json:"hint,omitempty"`
	Misconfigured bool   `json:"misconfigured,omitempty"`
}

// Error is a failed call to a source: retryable unless Misconfigured.
type Error struct {
	Source string
	// Code is the source's code (AwUnavailable, SidecarUnavailable), the
	// code Classify gave, or CircuitOpen when the breaker refused the call.
	Code          string
	Hint          string // Class.Hint
	Misconfigured bool   // Class.Misconfigured
	// RetryAfter is set when the circuit is open (refusing the call, or
	// opened by its failure): when it will allow a probe.
	RetryAfter time.Duration
	Circuit    Circuit       // the breaker's state after the call
	TimedOut   bool          // the source's deadline expired
	Deadline   time.Duration // Options.Deadline
	Err        error
}

func (e *Error) Error() string {
	if e.Code == CodeCircuitOpen {
		return fmt.Sprintf("%s: circuit open after repeated failures, retry in %s", e.Source, e.RetryAfter.Round(time.Millisecond))
	}
	if e.TimedOut {
		return fmt.Sprintf("%s: no answer within the deadline: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotConfigured is returned by Do on a source that is not configured.
var ErrNotConfigured = errors.New("source not configured")

// Source guards one upstream. Safe for concurrent use.
type Source struct {
	opts Options

	mu        sync.Mutex
	state     Circuit
	failures  int
	successes int // consecutive, for reporting up
	openedAt  time.Time
	probing   bool
	last      Status
	reported  string // what OnChange last said: "", "up" or "down"
}

// The breaker: failureThreshold consecutive failures open the circuit,
// which refuses calls for coolDown before one half-open probe; a source
// reported down is reported up again after recoverThreshold consecutive
// successes.
const (
	failureThreshold = 3
	coolDown         = 10 * time.Second
	recoverThreshold = 2
)

// New returns a Source with defaults applied.
func New(opts Options) *Source {
	opts.Deadline = cmp.Or(max(opts.Deadline, 0), 2*time.Second)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Source{opts: opts, last: Status{Name: opts.Name, Configured: opts.Configured, Circuit: Closed.String()}}
}

// Name is the source's name.
func (s *Source) Name() string { return s.opts.Name }

// Configured reports whether the person set this source up.
func (s *Source) Configured() bool { return s.opts.Configured }

// Status returns the last status.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked(s.opts.Now())
}

func (s *Source) statusLocked(now time.Time) Status {
	st := s.last
	st.Circuit = s.circuitLocked(now).String()
	st.ConsecutiveFailures = s.failures
	return st
}

// Circuit returns the breaker's state now.
func (s *Source) Circuit() Circuit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.circuitLocked(s.opts.Now())
}

func (s *Source) circuitLocked(now time.Time) Circuit {
	if s.state == Open && !now.Before(s.openedAt.Add(coolDown)) {
		return HalfOpen
	}
	return s.state
}

// Do runs fn under the source's deadline and breaker and records the
// outcome. A call refused by an open circuit returns an *Error with Code
// CircuitOpen without running fn. A failure of fn returns an *Error with the
// source's code. A call abandoned because the caller's ctx was cancelled is
// not counted against the source.
func (s *Source) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.do(ctx, fn, false)
}

// Probe is Do for the poller's once-per-interval check of a source that is
// down: it runs as the half-open probe even before the cool-down ends, so
// a source that comes back is noticed within one interval, while callers
// are still refused without touching it. It is still one probe at a time.
func (s *Source) Probe(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.do(ctx, fn, true)
}

func (s *Source) do(ctx context.Context, fn func(ctx context.Context) error, probe bool) error {
	if !s.opts.Configured {
		return ErrNotConfigured
	}
	start := s.opts.Now()
	if err := s.admit(start, probe); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.Deadline)
	err := fn(cctx)
	timedOut := err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	end := s.opts.Now()
	if err != nil && ctx.Err() != nil {
		// The caller went away: say nothing about the source.
		s.release()
		return err
	}
	return s.record(start, end, err, timedOut)
}

func (s *Source) admit(now time.Time, probe bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.circuitLocked(now)
	if c == Open && probe {
		c = HalfOpen
	}
	switch c {
	case Open:
		return &Error{Source: s.opts.Name, Code: CodeCircuitOpen, Circuit: Open,
			RetryAfter: s.openedAt.Add(coolDown).Sub(now)}
	case HalfOpen:
		if s.probing {
			return &Error{Source: s.opts.Name, Code: CodeCircuitOpen, Circuit: HalfOpen,
				RetryAfter: 100 * time.Millisecond}
		}
		s.state = HalfOpen
		s.probing = true
	}
	return nil
}

func (s *Source) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == HalfOpen {
		s.probing = false
		s.state = Open // not probed: stay open, the cool-down has passed so the next call probes
	}
}

func (s *Source) record(start, end time.Time, err error, timedOut bool) error {
	var class Class
	if err != nil && s.opts.Classify != nil {
		class = s.opts.Classify(err)
	}
	s.mu.Lock()
	err = s.recordLocked(start, end, err, timedOut, class)
	changed := s.transitionLocked(class.Misconfigured)
	st := s.statusLocked(end)
	s.mu.Unlock()
	if changed && s.opts.OnChange != nil {
		s.opts.OnChange(st)
	}
	return err
}

// transitionLocked updates what is reported of the source after a call
// (see Options.OnChange) and says whether it changed.
func (s *Source) transitionLocked(misconfigured bool) bool {
	next := s.reported
	switch {
	case s.last.OK && (s.reported == "" || s.successes >= recoverThreshold):
		next = "up"
	case !s.last.OK && (s.reported == "" || s.state == Open || misconfigured):
		next = "down"
	}
	if next == s.reported {
		return false
	}
	s.reported = next
	return true
}

func (s *Source) recordLocked(start, end time.Time, err error, timedOut bool, class Class) error {
	s.probing = false
	s.last.Checked = true
	s.last.CheckedAt = end
	s.last.LatencyMs = float64(end.Sub(start).Microseconds()) / 1000
	if err == nil {
		s.state = Closed
		s.failures = 0
		s.successes++
		s.last.OK = true
		s.last.Error, s.last.Code, s.last.Hint, s.last.Misconfigured = "", "", "", false
		return nil
	}
	s.successes = 0
	s.last.OK = false
	var retryAfter time.Duration
	if class.Misconfigured || class.Answered {
		// The source answered: it is reachable, only refusing us or
		// failing this read.
		s.state = Closed
		s.failures = 0
	} else {
		s.failures++
		if s.state == HalfOpen || s.failures >= failureThreshold {
			s.state = Open
			s.openedAt = end
			retryAfter = coolDown
		}
	}
	e := &Error{Source: s.opts.Name, Code: cmp.Or(class.Code, s.opts.Code), Hint: class.Hint,
		Misconfigured: class.Misconfigured, Circuit: s.state, TimedOut: timedOut, Deadline: s.opts.Deadline,
		RetryAfter: retryAfter, Err: err}
	s.last.Error, s.last.Code, s.last.Hint, s.last.Misconfigured = e.Error(), e.Code, e.Hint, e.Misconfigured
	return e
}

// Join joins the errors of one source's parallel requests into one error
// whose message stays on one line ("a; b"); nil when all are nil.
// errors.Is and errors.As see every part.
func Join(errs ...error) error {
	j := errors.Join(errs...)
	if j == nil {
		return nil
	}
	return joined{j}
}

type joined struct{ error }

// Error is the errors' texts on one line, each text once: parallel reads
// that fail alike (three buckets' events, say) say so once.
func (j joined) Error() string {
	var parts []string
	for _, p := range strings.Split(j.error.Error(), "\n") {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

func (j joined) Unwrap() []error { return j.error.(interface{ Unwrap() []error }).Unwrap() }
