package jitter

import (
	"math"
	"math/bits"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

const maxDuration = time.Duration(math.MaxInt64)

// Jitter turns a nominal delay d into the delay actually waited.
//
// prev is the delay waited before the previous attempt (0 before the first
// retry); r is a uniformly distributed random number. Implementations must be
// pure and goroutine-safe, and must never return a negative duration.
type Jitter interface {
	Apply(d, prev time.Duration, r uint64) time.Duration
}

// None returns the nominal delay unchanged.
type None struct{}

// Apply returns d.
func (None) Apply(d, _ time.Duration, _ uint64) time.Duration { return d }

// Full waits a uniformly random time in [0, d): AWS's "full jitter", the
// retry package's default.
type Full struct{}

// Apply returns a uniform value in [0, d).
func (Full) Apply(d, _ time.Duration, r uint64) time.Duration { return scale(d, r) }

// Equal waits half the nominal delay plus a uniformly random time in [0, d/2):
// AWS's "equal jitter".
type Equal struct{}

// Apply returns d - d/2 + a uniform value in [0, d/2).
func (Equal) Apply(d, _ time.Duration, r uint64) time.Duration {
	half := d / 2
	return d - half + scale(half, r)
}

// Proportional spreads the delay by ±f of itself: a uniform value in
// [d*(1-f), d*(1+f)), saturating at the largest duration. It is cenkalti/backoff's
// RandomizationFactor; f must be in [0, 1].
type Proportional float64

// Apply returns a uniform value in [d*(1-f), d*(1+f)).
func (f Proportional) Apply(d, _ time.Duration, r uint64) time.Duration {
	u := float64(r>>11) * 0x1p-53 // uniform in [0, 1)
	v := float64(d) * (1 - float64(f) + 2*float64(f)*u)
	if !(v < float64(maxDuration)) {
		return maxDuration
	}
	if v < 0 {
		return 0
	}
	return time.Duration(v)
}

// Validate reports a factor outside [0, 1].
func (f Proportional) Validate() error {
	if !(f >= 0 && f <= 1) {
		return argerr.New("jitter.Proportional", float64(f), "must be in [0, 1]")
	}
	return nil
}

// Decorrelated is AWS's "decorrelated jitter": min(MaxDelay, uniform in
// [Base, 3*prev)), where prev is the previous delay (Base before the first
// retry). It ignores the schedule's growth and grows from its own last value,
// so pair it with a constant schedule, or use the nominal delay as the base by
// leaving Base zero.
type Decorrelated struct {
	Base     time.Duration // the smallest delay; 0 means the nominal delay d
	MaxDelay time.Duration // the largest delay; 0 means no cap beyond the policy's MaxDelay
}

// Apply returns min(MaxDelay, uniform in [Base, 3*prev)).
func (j Decorrelated) Apply(d, prev time.Duration, r uint64) time.Duration {
	base := j.Base
	if base <= 0 {
		base = d
	}
	prev = max(prev, base)
	hi := maxDuration
	if prev <= maxDuration/3 {
		hi = 3 * prev
	}
	v := base + scale(hi-base, r)
	if j.MaxDelay > 0 && v > j.MaxDelay {
		return j.MaxDelay
	}
	return v
}

// Validate reports negative durations and a cap below the base.
func (j Decorrelated) Validate() error {
	if j.Base < 0 {
		return argerr.Field("jitter.Decorrelated.Base", j.Base, "must not be negative")
	}
	if j.MaxDelay < 0 || (j.MaxDelay > 0 && j.MaxDelay < j.Base) {
		return argerr.Field("jitter.Decorrelated.MaxDelay", j.MaxDelay, "must be 0 (no cap) or at least Base ("+j.Base.String()+")")
	}
	return nil
}

// scale maps r onto [0, d) without floating point or bias worth measuring:
// the high word of the 128-bit product d*r.
func scale(d time.Duration, r uint64) time.Duration {
	if d <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(uint64(d), r)
	return time.Duration(hi)
}
