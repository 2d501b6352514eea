package toolbus

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a per-tool token bucket: PerSecond calls a second on
// average, Burst at once.
type RateLimit struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
}

type limiter struct {
	cfg RateLimit
	l   *rate.Limiter
}

func newLimiter(rl RateLimit) *limiter {
	if rl.Burst <= 0 {
		rl.Burst = max(1, int(math.Ceil(rl.PerSecond)))
	}
	return &limiter{cfg: rl, l: rate.NewLimiter(rate.Limit(rl.PerSecond), rl.Burst)}
}

// policySnapshot is what the envelope's policy reports: the effective
// values at execution time (the envelope's policy snapshot).
type policySnapshot struct {
	timeout   time.Duration
	rateLimit *RateLimit
}

// policyStage applies the policies that act before execution: the rate
// limit and the effective timeout (the tool's, shortened by the caller's
// deadline or timeout_ms, never lengthened).
func (b *Bus) policyStage(r *run) bool {
	r.pol.timeout = r.e.timeout
	if r.req.Saturated && r.opt.noWait {
		ms := int64(50)
		return r.fail(StageExecute, &ToolError{Kind: PolicyError, Code: CodeConcurrencyLimited, Retryable: true,
			Message: fmt.Sprintf("this connection already has its maximum of %d calls in flight", b.opts.MaxInFlight),
			Hint:    "retry shortly, or send without wait:false to queue", RetryAfterMs: &ms})
	}
	if r.opt.timeout > 0 && r.opt.timeout < r.pol.timeout {
		r.pol.timeout = r.opt.timeout
	}
	if !r.opt.deadline.IsZero() {
		left := r.opt.deadline.Sub(b.opts.Now())
		if left <= 0 {
			return r.fail(StageExecute, &ToolError{Kind: PolicyError, Code: CodeTimeout, Retryable: false,
				Message: "the caller's deadline has already passed", Hint: "send a deadline in the future, or timeout_ms",
				Details: map[string]any{"deadline": r.opt.deadline.UTC().Format(time.RFC3339Nano)}})
		}
		r.pol.timeout = min(r.pol.timeout, left)
	}
	if lim := b.limiter[r.e.tool.Name]; lim != nil {
		r.pol.rateLimit = &lim.cfg
		res := lim.l.ReserveN(b.opts.Now(), 1)
		if delay := res.DelayFrom(b.opts.Now()); !res.OK() || delay > 0 {
			res.CancelAt(b.opts.Now())
			ms := max(delay.Milliseconds(), 1)
			return r.fail(StageExecute, &ToolError{Kind: PolicyError, Code: CodeRateLimited, Retryable: true,
				Message:      fmt.Sprintf("%s is limited to %g calls a second (burst %d)", r.e.tool.Name, lim.cfg.PerSecond, lim.cfg.Burst),
				Hint:         "wait retry_after_ms before calling this tool again",
				RetryAfterMs: &ms, Details: map[string]any{"throttling_scope": r.e.tool.Name}})
		}
	}
	return true
}
