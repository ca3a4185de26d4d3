package policy

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/sched"
	"github.com/retrykit/retry/jitter"
)

// Defaults used for zero fields of a Policy.
const (
	DefaultMaxAttempts = 3
	DefaultMaxDelay    = 30 * time.Second
)

// The default schedule, used when Policy.Backoff is nil.
const (
	DefaultBase   = 100 * time.Millisecond
	DefaultFactor = 2
	DefaultCap    = 10 * time.Second
)

// DefaultBackoff returns the schedule used when Policy.Backoff is nil:
// Exponential{Base: 100ms, Factor: 2, MaxDelay: 10s}.
func DefaultBackoff() backoff.Exponential {
	return backoff.Exponential{Base: DefaultBase, Factor: DefaultFactor, MaxDelay: DefaultCap}
}

// retryAfterSpread bounds the small positive jitter added to a server's
// Retry-After, so that clients told the same time do not return together.
const retryAfterSpread = time.Second

// Policy says how often and how long to retry. Its zero value is usable: see
// the table in the package documentation. A Policy is a value; copy it to
// derive another.
type Policy struct {
	// MaxAttempts counts every attempt, the first included. 0 means 3.
	MaxAttempts int
	// MaxElapsed stops retrying when the next attempt would start more than
	// this long after the call began. It does not interrupt a running attempt:
	// give the context a deadline for that. 0 means no limit.
	MaxElapsed time.Duration
	// AttemptTimeout bounds each attempt through its context. An attempt that
	// runs out of time is a timeout: retried only for idempotent or keyed work.
	// 0 means none.
	AttemptTimeout time.Duration
	// MaxDelay is the longest single wait. Backoff delays are clamped to it;
	// a server asking for a longer Retry-After makes the call return at once
	// with that wait in the error, instead of blocking the caller. 0 means 30s.
	MaxDelay time.Duration
	// Backoff is the schedule of nominal delays. nil means DefaultBackoff().
	Backoff backoff.Backoff
	// Jitter spreads each nominal delay. nil means jitter.Full{}.
	Jitter jitter.Jitter
	// Strict retries only failures a classifier recognised as transient; an
	// unrecognised error stops the call. Use it for calls that cost money.
	Strict bool
	// Idempotent declares that repeating the operation is harmless, so an
	// attempt that timed out (and may still be running) can be retried.
	Idempotent bool
	// RequireKey refuses calls that do not carry an idempotency key.
	RequireKey bool
	// Budget, shared by every call that uses it, can refuse a retry the rest
	// of the policy allows. nil means no budget. Next does not consult it:
	// the retry loop does, after Next says Continue.
	Budget budget.Budget
}

// Stop is the outcome of Next: Continue, or why the call must stop.
type Stop uint8

// The outcomes of Next, in the order Next checks them.
const (
	Continue          Stop = iota // retry after the returned delay
	StopPermanent                 // the classifier said the failure is not transient
	StopNotIdempotent             // the attempt timed out; repeating it is not known to be safe
	StopAttempts                  // MaxAttempts reached
	StopClassLimit                // the failure's class used up its Limit of retries in this call
	StopWaitTooLong               // the server asked to wait longer than MaxDelay
	StopElapsed                   // the next attempt would start after MaxElapsed
	StopDeadline                  // the wait would outlast the context's deadline
	StopBudget                    // the shared retry budget refused (reported by the retry loop)
)

var stopNames = [...]string{
	Continue:          "continue",
	StopPermanent:     "permanent failure",
	StopNotIdempotent: "not idempotent",
	StopAttempts:      "attempts exhausted",
	StopClassLimit:    "class limit reached",
	StopWaitTooLong:   "wait too long",
	StopElapsed:       "time budget exhausted",
	StopDeadline:      "deadline too close",
	StopBudget:        "budget exhausted",
}

// String returns a short description, e.g. "attempts exhausted".
func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return fmt.Sprintf("stop(%d)", uint8(s))
}

// State describes a call right after a failed attempt. The retry loop fills
// it; tests can write it by hand.
type State struct {
	Attempt int           // attempts made so far, the failed one included (≥ 1)
	Elapsed time.Duration // since the call began
	Prev    time.Duration // the previous wait (0 before the first retry)
	// ClassFailures counts the call's failures with this failure's Reason,
	// this one included; the retry loop counts them for decisions with a Limit.
	ClassFailures int
	Keyed         bool          // the call carries an idempotency key
	HasDeadline   bool          // the context has a deadline
	Remaining     time.Duration // time left before that deadline, when HasDeadline
}

// Next decides what follows a failed attempt classified as d: the wait before
// the next attempt, or the reason to stop. r is a uniformly distributed random
// number for the jitter. When the server's wait is too long, Next returns that
// wait with StopWaitTooLong; for the other stops the duration is informative.
//
// A NoOpinion decision is treated as unclassified: retried, or stopped when
// Strict.
func (p *Policy) Next(s State, d classify.Decision, r uint64) (time.Duration, Stop) {
	switch {
	case d.Verdict == classify.Stop || (d.Verdict == classify.NoOpinion && p.Strict):
		return 0, StopPermanent
	case d.Timeout && !p.Idempotent && !s.Keyed:
		return 0, StopNotIdempotent
	case s.Attempt >= p.Attempts():
		return 0, StopAttempts
	case d.Limit > 0 && s.ClassFailures > d.Limit:
		return 0, StopClassLimit
	}
	maxDelay := p.maxDelay()
	if d.RetryAfter > maxDelay {
		return d.RetryAfter, StopWaitTooLong
	}
	delay := p.Delay(s.Attempt, s.Prev, d.RetryAfter, r)
	if p.MaxElapsed > 0 && addSat(s.Elapsed, delay) > p.MaxElapsed {
		return delay, StopElapsed
	}
	if s.HasDeadline && delay >= s.Remaining {
		return delay, StopDeadline
	}
	return delay, Continue
}

// Delay is the wait after failed attempt n: the server's retryAfter when
// positive, plus a small positive jitter (at most a tenth of it, at most 1s,
// never beyond MaxDelay), or else the jittered backoff clamped to MaxDelay.
// prev is the previous wait and r a uniform random number.
func (p *Policy) Delay(n int, prev, retryAfter time.Duration, r uint64) time.Duration {
	if retryAfter > 0 {
		return p.serverDelay(retryAfter, r)
	}
	// The common case — a doubling exponential schedule, the default one
	// included, with full jitter — is computed here without a call; any other
	// schedule or jitter goes through delayAny.
	if _, full := p.Jitter.(jitter.Full); full || p.Jitter == nil {
		// Factor 0 or 2, in one integer test: the bits of 2.0 are one bit more than 0.0's.
		if b, ok := p.Backoff.(backoff.Exponential); ok && math.Float64bits(b.Factor)&^math.Float64bits(2) == 0 {
			return p.clamp(jitter.Full{}.Apply(sched.Doubling(b.Base, b.MaxDelay, n), prev, r))
		}
		if p.Backoff == nil {
			return p.clamp(jitter.Full{}.Apply(sched.Doubling(DefaultBase, DefaultCap, n), prev, r))
		}
	}
	return p.clamp(max(p.delayAny(n, prev, r), 0))
}

// clamp bounds a delay by MaxDelay.
func (p *Policy) clamp(d time.Duration) time.Duration {
	return min(d, p.maxDelay())
}

// serverDelay is the server's wait plus a small positive jitter, within
// MaxDelay but never below the server's wait.
func (p *Policy) serverDelay(retryAfter time.Duration, r uint64) time.Duration {
	spread := min(retryAfter/10, retryAfterSpread)
	extra, _ := bits.Mul64(uint64(spread), r)
	return max(retryAfter, min(retryAfter+time.Duration(extra), p.maxDelay()))
}

// delayAny is the jittered delay of any schedule and jitter.
func (p *Policy) delayAny(n int, prev time.Duration, r uint64) time.Duration {
	var nominal time.Duration
	if p.Backoff == nil {
		nominal = DefaultBackoff().Delay(n) // called directly: boxing it into a Backoff would allocate
	} else {
		nominal = p.Backoff.Delay(n)
	}
	if p.Jitter == nil {
		return jitter.Full{}.Apply(nominal, prev, r)
	}
	return p.Jitter.Apply(nominal, prev, r)
}

// Attempts returns the effective MaxAttempts: the default for 0.
func (p *Policy) Attempts() int {
	if p.MaxAttempts == 0 {
		return DefaultMaxAttempts
	}
	return p.MaxAttempts
}

func (p *Policy) maxDelay() time.Duration {
	if p.MaxDelay == 0 {
		return DefaultMaxDelay
	}
	return p.MaxDelay
}

// Validate reports negative limits and invalid schedules or jitters (those
// with a Validate method), naming the field and its value.
func (p *Policy) Validate() error {
	if p.MaxAttempts < 0 {
		return fmt.Errorf("policy.Policy.MaxAttempts = %d: must be at least 1 (or 0 for the default %d)", p.MaxAttempts, DefaultMaxAttempts)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"MaxElapsed", p.MaxElapsed}, {"AttemptTimeout", p.AttemptTimeout}, {"MaxDelay", p.MaxDelay}} {
		if f.d < 0 {
			return fmt.Errorf("policy.Policy.%s = %v: must not be negative", f.name, f.d)
		}
	}
	if err := validate(p.Backoff); err != nil {
		return fmt.Errorf("policy.Policy.Backoff: %w", err)
	}
	if err := validate(p.Jitter); err != nil {
		return fmt.Errorf("policy.Policy.Jitter: %w", err)
	}
	return nil
}

func validate(v any) error {
	if v, ok := v.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// addSat adds two non-negative durations, saturating.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
