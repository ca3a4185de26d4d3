package backoff

import (
	"math"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/internal/sched"
)

// maxDuration is the saturation point of every schedule.
const maxDuration = time.Duration(math.MaxInt64)

// Backoff is a retry schedule: Delay(n) is the nominal wait after attempt n
// failed (n ≥ 1), before attempt n+1.
//
// Implementations must be pure functions of n, safe for concurrent use, and
// must never return a negative duration.
type Backoff interface {
	Delay(attempt int) time.Duration
}

// Func adapts an ordinary function to the Backoff interface. The function must
// follow the contract of Backoff: pure, goroutine-safe, non-negative. A nil
// Func is invalid (Validate reports it) and waits 0.
type Func func(attempt int) time.Duration

// Delay returns f(attempt), or 0 for a nil f.
func (f Func) Delay(attempt int) time.Duration {
	if f == nil {
		return 0
	}
	return f(attempt)
}

// Validate reports a nil function.
func (f Func) Validate() error {
	if f == nil {
		return argerr.New("backoff.Func", nil, "must not be nil")
	}
	return nil
}

// Constant waits the same duration after every attempt.
type Constant time.Duration

// Delay returns the constant duration, whatever the attempt.
func (c Constant) Delay(int) time.Duration { return time.Duration(c) }

// String returns the duration, e.g. "250ms".
func (c Constant) String() string { return time.Duration(c).String() }

// Validate reports a negative duration.
func (c Constant) Validate() error {
	if c < 0 {
		return argerr.New("backoff.Constant", time.Duration(c), "must not be negative")
	}
	return nil
}

// Linear grows by Step after each attempt: min(MaxDelay, Base + Step*(n-1)).
// The zero value retries at once. A zero MaxDelay means no cap.
type Linear struct {
	Base     time.Duration // the first delay
	Step     time.Duration // added after each further attempt
	MaxDelay time.Duration // the largest delay; 0 means no cap
}

// Delay returns the delay after attempt n, saturating at the cap.
func (l Linear) Delay(n int) time.Duration {
	limit := maxOrInf(l.MaxDelay)
	steps := time.Duration(clampAttempt(n) - 1)
	if l.Base >= limit {
		return limit
	}
	// Base + Step*steps ≤ limit  ⇔  steps ≤ (limit-Base)/Step, checked without overflow.
	if l.Step > 0 && steps > (limit-l.Base)/l.Step {
		return limit
	}
	return l.Base + l.Step*steps
}

// Validate reports negative durations and a cap below the base.
func (l Linear) Validate() error {
	if err := nonNegative("Linear", "Base", l.Base); err != nil {
		return err
	}
	if err := nonNegative("Linear", "Step", l.Step); err != nil {
		return err
	}
	return maxAtLeastBase("Linear", l.Base, l.MaxDelay)
}

// Exponential multiplies the delay by Factor after each attempt:
// min(MaxDelay, Base * Factor^(n-1)).
//
// A zero Factor means 2, and a zero MaxDelay means no cap. With a factor of 2 the
// delay is computed with a shift, without floating point.
type Exponential struct {
	Base     time.Duration // the first delay
	Factor   float64       // growth per attempt, at least 1; 0 means 2
	MaxDelay time.Duration // the largest delay; 0 means no cap
}

// Delay returns the delay after attempt n, saturating at the cap. The
// common factor of 2 is a shift.
func (e Exponential) Delay(n int) time.Duration {
	if e.Factor != 0 && e.Factor != 2 {
		return e.pow(n)
	}
	return sched.Doubling(e.Base, e.MaxDelay, n)
}

func (e Exponential) pow(n int) time.Duration {
	limit := maxOrInf(e.MaxDelay)
	if e.Base <= 0 {
		return 0 // however many multiplications (0 × +Inf would be NaN)
	}
	if e.Base >= limit {
		return limit
	}
	f := float64(e.Base) * math.Pow(e.Factor, float64(clampAttempt(n)-1))
	if !(f < float64(limit)) { // also catches +Inf and NaN
		return limit
	}
	return time.Duration(f)
}

// Validate reports a negative base, a factor below 1 (other than the zero
// value), a non-finite factor, and a cap below the base.
func (e Exponential) Validate() error {
	if err := nonNegative("Exponential", "Base", e.Base); err != nil {
		return err
	}
	if e.Factor != 0 && !(e.Factor >= 1 && e.Factor <= math.MaxFloat64) {
		return argerr.Field("backoff.Exponential.Factor", e.Factor, "must be at least 1 (or 0 for the default 2)")
	}
	return maxAtLeastBase("Exponential", e.Base, e.MaxDelay)
}

func clampAttempt(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

func maxOrInf(c time.Duration) time.Duration {
	if c <= 0 {
		return maxDuration
	}
	return c
}

func nonNegative(typ, field string, d time.Duration) error {
	if d < 0 {
		return argerr.Field("backoff."+typ+"."+field, d, "must not be negative")
	}
	return nil
}

func maxAtLeastBase(typ string, base, cap time.Duration) error {
	if cap < 0 {
		return argerr.Field("backoff."+typ+".MaxDelay", cap, "must not be negative (0 means no cap)")
	}
	if cap != 0 && cap < base {
		return argerr.Field("backoff."+typ+".MaxDelay", cap, "must not be below Base ("+base.String()+")")
	}
	return nil
}
