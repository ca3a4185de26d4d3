// Package cenkalti adapts schedules between this module and
// github.com/cenkalti/backoff/v4, so that code can move from one to the other
// one call site at a time.
//
// BackOff turns a schedule and a jitter of this module into a v4 BackOff, for
// code that still calls backoff.Retry. From turns a configured v4 BackOff into
// a schedule and a jitter, for code that moves to retry.Do.
//
// From converts the schedule only. The limits are options of the retry
// package: ExponentialBackOff.MaxElapsedTime (15 minutes by default in v4)
// becomes retry.WithMaxElapsed, and backoff.WithMaxRetries(b, n) becomes
// retry.WithMaxAttempts(n+1).
package cenkalti

import (
	"fmt"
	"math/rand/v2"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
)

// Stateful is a v4 BackOff that follows a schedule of this module: the n-th
// call of NextBackOff returns the jittered Delay(n). Like every v4 BackOff it
// counts calls, so it is not safe for concurrent use; Reset starts over.
type Stateful struct {
	schedule backoff.Backoff
	jitter   jitter.Jitter
	n        int
	prev     time.Duration
}

var _ cbackoff.BackOff = (*Stateful)(nil)

// BackOff returns a v4 BackOff for schedule b spread by j (nil means no
// jitter). Its randomness comes from math/rand/v2.
func BackOff(b backoff.Backoff, j jitter.Jitter) *Stateful {
	if j == nil {
		j = jitter.None{}
	}
	return &Stateful{schedule: b, jitter: j}
}

// NextBackOff returns the wait before the next attempt. It never returns
// cbackoff.Stop: bound the attempts with cbackoff.WithMaxRetries.
func (s *Stateful) NextBackOff() time.Duration {
	s.n++
	d := s.jitter.Apply(s.schedule.Delay(s.n), s.prev, rand.Uint64())
	s.prev = d
	return d
}

// Reset starts the schedule over.
func (s *Stateful) Reset() {
	s.n, s.prev = 0, 0
}

// From converts a v4 BackOff into a schedule and a jitter:
//
//	| v4 type              | schedule                                              | jitter                          |
//	|----------------------|-------------------------------------------------------|---------------------------------|
//	| *ExponentialBackOff  | Exponential{InitialInterval, Multiplier, MaxInterval} | Proportional(RandomizationFactor) |
//	| *ConstantBackOff     | Constant(Interval)                                    | None                            |
//	| *ZeroBackOff         | Constant(0)                                           | None                            |
//
// Other types — *StopBackOff, and the wrappers whose state v4 keeps private —
// return an error that says what to use instead, as does a configuration that
// the schedule or jitter would reject.
func From(b cbackoff.BackOff) (backoff.Backoff, jitter.Jitter, error) {
	switch b := b.(type) {
	case *cbackoff.ExponentialBackOff:
		s := backoff.Exponential{Base: b.InitialInterval, Factor: b.Multiplier, MaxDelay: b.MaxInterval}
		if b.Multiplier == 0 {
			s.Factor = 1 // v4 multiplies by 0 and then clamps to InitialInterval: a constant
		}
		j := jitter.Proportional(b.RandomizationFactor)
		if err := s.Validate(); err != nil {
			return nil, nil, fmt.Errorf("cenkalti.From: %w", err)
		}
		if err := j.Validate(); err != nil {
			return nil, nil, fmt.Errorf("cenkalti.From: RandomizationFactor: %w", err)
		}
		return s, j, nil
	case *cbackoff.ConstantBackOff:
		s := backoff.Constant(b.Interval)
		if err := s.Validate(); err != nil {
			return nil, nil, fmt.Errorf("cenkalti.From: %w", err)
		}
		return s, jitter.None{}, nil
	case *cbackoff.ZeroBackOff:
		return backoff.Constant(0), jitter.None{}, nil
	case *cbackoff.StopBackOff:
		return nil, nil, fmt.Errorf("cenkalti.From: *backoff.StopBackOff never retries: use retry.WithMaxAttempts(1)")
	case nil:
		return nil, nil, fmt.Errorf("cenkalti.From: nil BackOff")
	}
	return nil, nil, fmt.Errorf("cenkalti.From: unsupported BackOff type %T: convert the BackOff it wraps, and map the "+
		"wrapper to an option (WithMaxRetries(b, n) is retry.WithMaxAttempts(n+1); WithContext is the context given to retry.Do)", b)
}
