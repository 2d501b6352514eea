package upstream

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newSource(c *clock) *Source {
	return New(Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now})
}

var errDown = errors.New("connection refused")

func fail(context.Context) error { return errDown }
func ok(context.Context) error   { return nil }

func TestBreakerOpensAfterThreeFailuresAndProbesOnce(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)}
	s := newSource(c)
	for i := range 3 {
		err := s.Do(context.Background(), fail)
		var ue *Error
		if !errors.As(err, &ue) || ue.Code != "AwUnavailable" || !errors.Is(err, errDown) {
			t.Fatalf("failure %d: got %v, want AwUnavailable wrapping the cause", i+1, err)
		}
	}
	if got := s.Circuit(); got != Open {
		t.Fatalf("after 3 failures circuit = %v, want open", got)
	}
	called := false
	err := s.Do(context.Background(), func(context.Context) error { called = true; return nil })
	var ue *Error
	if !errors.As(err, &ue) || ue.Code != CodeCircuitOpen || called {
		t.Fatalf("open circuit: got %v (called=%v), want CircuitOpen without calling", err, called)
	}
	if ue.RetryAfter <= 0 || ue.RetryAfter > 10*time.Second {
		t.Fatalf("retry after %v, want within the 10 s cool-down", ue.RetryAfter)
	}

	c.add(10 * time.Second)
	if got := s.Circuit(); got != HalfOpen {
		t.Fatalf("after cool-down circuit = %v, want half-open", got)
	}
	// One probe at a time: a second caller during the probe is refused.
	release := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = s.Do(context.Background(), func(context.Context) error { close(started); <-release; return nil })
	})
	<-started
	if err := s.Do(context.Background(), ok); !errors.As(err, &ue) || ue.Code != CodeCircuitOpen {
		t.Fatalf("second call during the half-open probe: %v, want CircuitOpen", err)
	}
	close(release)
	wg.Wait()
	if got := s.Circuit(); got != Closed {
		t.Fatalf("after a good probe circuit = %v, want closed", got)
	}
	if st := s.Status(); !st.OK || st.ConsecutiveFailures != 0 || st.Error != "" {
		t.Fatalf("status after recovery = %+v", st)
	}
}

func TestFailedProbeReopens(t *testing.T) {
	c := &clock{t: time.Now()}
	s := newSource(c)
	for range 3 {
		_ = s.Do(context.Background(), fail)
	}
	c.add(11 * time.Second)
	_ = s.Do(context.Background(), fail)
	if got := s.Circuit(); got != Open {
		t.Fatalf("after a failed probe circuit = %v, want open again", got)
	}
}

func TestDeadlineBoundsTheCall(t *testing.T) {
	s := New(Options{Name: "sidecar", Code: "SidecarUnavailable", Configured: true, Deadline: 20 * time.Millisecond})
	err := s.Do(context.Background(), func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	var ue *Error
	if !errors.As(err, &ue) || !ue.TimedOut || ue.Code != "SidecarUnavailable" {
		t.Fatalf("got %v, want a timed-out SidecarUnavailable", err)
	}
	if st := s.Status(); st.OK || !st.Checked || st.Error == "" {
		t.Fatalf("status = %+v, want a recorded failure", st)
	}
}

func TestCallerCancellationIsNotASourceFailure(t *testing.T) {
	s := newSource(&clock{t: time.Now()})
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Do(ctx, func(ctx context.Context) error { return ctx.Err() })
	}
	if st := s.Status(); st.Checked || st.ConsecutiveFailures != 0 || s.Circuit() != Closed {
		t.Fatalf("status = %+v circuit %v, want untouched", st, s.Circuit())
	}
}

func TestNotConfigured(t *testing.T) {
	s := New(Options{Name: "sidecar"})
	if err := s.Do(context.Background(), ok); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("got %v, want ErrNotConfigured", err)
	}
	if st := s.Status(); st.Configured || st.Checked {
		t.Fatalf("status = %+v", st)
	}
}

func TestOnChangeOnlyOnTransitions(t *testing.T) {
	var got []bool
	c := &clock{t: time.Now()}
	s := New(Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now,
		OnChange: func(st Status) { got = append(got, st.OK) }})
	for _, f := range []func(context.Context) error{ok, ok, fail, fail, fail, nil, ok, ok, ok} {
		if f == nil {
			c.add(11 * time.Second) // the cool-down
			continue
		}
		_ = s.Do(context.Background(), f)
	}
	if want := []bool{true, false, true}; !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v (first result, down, up)", got, want)
	}
}

// A source that flaps (a failure now and then, or a failure and a
// success in turn) is reported once per real transition: down when the
// circuit opens, up once it has answered twice in a row since, never at
// every call.
func TestFlappingSourceIsReportedOncePerTransition(t *testing.T) {
	tests := []struct {
		name string
		// calls: 'o' a success, 'x' a failure; the clock moves past the
		// cool-down before each call, so an open circuit lets the next
		// call through as its half-open probe.
		calls string
		want  []bool
	}{
		{"alternating", "oxoxoxoxoxoxoxox", []bool{true}},
		{"two failures between successes", "oxxoxxoxxoxxo", []bool{true}},
		{"opens, one success, opens again", "oxxxoxoxoxo", []bool{true, false}},
		{"opens, then answers for good", "oxxxoxoo", []bool{true, false, true}},
		{"down from the start, then up", "xxxoo", []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Now()}
			var got []bool
			s := New(Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now,
				OnChange: func(st Status) { got = append(got, st.OK) }})
			for _, call := range tt.calls {
				c.add(11 * time.Second)
				f := ok
				if call == 'x' {
					f = fail
				}
				_ = s.Do(context.Background(), f)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("reported %v, want %v", got, tt.want)
			}
		})
	}
}

var errRefused = errors.New("401 unauthorized")

// classify marks errRefused as a misconfiguration with its own code.
func classify(err error) Class {
	if errors.Is(err, errRefused) {
		return Class{Code: "AwAuthFailed", Hint: "set activitywatch.api_key", Misconfigured: true}
	}
	return Class{}
}

// A source that answers and refuses us (401, 403, a refused Host header)
// is a misconfiguration: its own code and hint, not retryable, reported
// down at once, and it never opens the circuit, however often it
// happens; real failures still count toward it.
func TestMisconfigurationDoesNotOpenTheCircuit(t *testing.T) {
	c := &clock{t: time.Now()}
	var changes []Status
	s := New(Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Now: c.now, Classify: classify,
		OnChange: func(st Status) { changes = append(changes, st) }})
	_ = s.Do(context.Background(), ok)
	refused := func(context.Context) error { return errRefused }
	for i := range 10 {
		err := s.Do(context.Background(), refused)
		var ue *Error
		if !errors.As(err, &ue) || ue.Code != "AwAuthFailed" || !ue.Misconfigured || ue.Hint != "set activitywatch.api_key" ||
			!errors.Is(err, errRefused) || ue.Circuit != Closed {
			t.Fatalf("refusal %d: %#v", i+1, err)
		}
	}
	st := s.Status()
	if st.Circuit != "closed" || st.ConsecutiveFailures != 0 || st.OK || st.Code != "AwAuthFailed" || !st.Misconfigured ||
		st.Hint == "" || st.Error == "" {
		t.Fatalf("status after ten refusals: %+v", st)
	}
	if len(changes) != 2 || !changes[0].OK || changes[1].OK || changes[1].Code != "AwAuthFailed" {
		t.Fatalf("reported %+v, want up then down once (at the first refusal)", changes)
	}

	// Real failures open it; a refusal met by the half-open probe shows
	// the source answers: the circuit closes.
	for range 3 {
		_ = s.Do(context.Background(), fail)
	}
	if st := s.Status(); st.Circuit != "open" || st.Code != "AwUnavailable" || st.Misconfigured {
		t.Fatalf("after three failures: %+v", st)
	}
	c.add(11 * time.Second)
	_ = s.Do(context.Background(), refused)
	if s.Circuit() != Closed {
		t.Fatalf("a refusal met by the half-open probe left the circuit %v", s.Circuit())
	}
	_ = s.Do(context.Background(), ok)
	if st := s.Status(); !st.OK || st.Code != "" || st.Hint != "" || st.Misconfigured || st.Error != "" {
		t.Fatalf("status after a success: %+v", st)
	}
}

func TestProbeRunsBeforeTheCoolDownEnds(t *testing.T) {
	c := &clock{t: time.Now()}
	s := newSource(c)
	for range 3 {
		_ = s.Do(context.Background(), fail)
	}
	c.add(time.Second) // well inside the 10 s cool-down
	if err := s.Do(context.Background(), ok); err == nil {
		t.Fatal("a caller got through an open circuit")
	}
	if err := s.Probe(context.Background(), ok); err != nil {
		t.Fatalf("the poller's probe was refused: %v", err)
	}
	if s.Circuit() != Closed {
		t.Fatalf("after a good probe: %v", s.Circuit())
	}
}

// TestJoinSaysEachTextOnce: three bucket reads failing alike used to read
// "aw events: boom; aw events: boom; aw events: boom" in the frame.
func TestJoinSaysEachTextOnce(t *testing.T) {
	boom := errors.New("aw events: http status 500: boom")
	other := errors.New("aw info: timeout")
	err := Join(boom, nil, boom, other, boom)
	if got, want := err.Error(), "aw events: http status 500: boom; aw info: timeout"; got != want {
		t.Fatalf("Join = %q, want %q", got, want)
	}
	if !errors.Is(err, other) || !errors.Is(err, boom) {
		t.Fatal("the joined error lost its causes")
	}
	if Join(nil, nil) != nil {
		t.Fatal("Join of nothing is not nil")
	}
}

// errAnswered stands for a read the source answered with an error of its
// own (a 500 for one bucket's day).
var errAnswered = errors.New("answered 500")

// A failure the source answered (Class.Answered) fails the call,
// retryable, but never opens the circuit however often it happens; a
// failure that opens the circuit says when it will allow a probe.
func TestAnsweredFailuresDoNotOpenTheCircuit(t *testing.T) {
	c := &clock{t: time.Now()}
	s := New(Options{Name: "history", Code: "AwUnavailable", Configured: true, Now: c.now,
		Classify: func(err error) Class { return Class{Answered: errors.Is(err, errAnswered)} }})
	for i := range 10 {
		var ue *Error
		if err := s.Do(context.Background(), func(context.Context) error { return errAnswered }); !errors.As(err, &ue) ||
			ue.Misconfigured || ue.Circuit != Closed || ue.RetryAfter != 0 {
			t.Fatalf("answered failure %d: %#v", i+1, err)
		}
	}
	for i := range 3 {
		var ue *Error
		err := s.Do(context.Background(), func(context.Context) error { return errors.New("connection refused") })
		if !errors.As(err, &ue) {
			t.Fatal(err)
		}
		if opened := i == 2; opened != (ue.Circuit == Open) || opened != (ue.RetryAfter == 10*time.Second) {
			t.Errorf("failure %d: circuit %s, retry after %s", i+1, ue.Circuit, ue.RetryAfter)
		}
	}
}
