package cenkalti

import (
	"math/rand/v2"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// Stateful is a v4 BackOff that follows a schedule of this module: the n-th
// call of NextBackOff returns the jittered Delay(n). Like every v4 BackOff it
// counts calls, so it is not safe for concurrent use; Reset starts over.
//
// The zero Stateful follows policy.DefaultBackoff() without jitter. A nil
// *Stateful never retries: NextBackOff returns v4's backoff.Stop.
type Stateful struct {
	schedule backoff.Backoff
	jitter   jitter.Jitter
	n        int
	prev     time.Duration
}

var _ cbackoff.BackOff = (*Stateful)(nil)

// BackOff returns a v4 BackOff for schedule b spread by j. A nil b means the
// retry package's default schedule, policy.DefaultBackoff(); a nil j means no
// jitter. Its randomness comes from math/rand/v2.
func BackOff(b backoff.Backoff, j jitter.Jitter) *Stateful {
	return &Stateful{schedule: b, jitter: j}
}

// NextBackOff returns the wait before the next attempt. It never returns v4's
// backoff.Stop, except for a nil *Stateful: bound the attempts with v4's
// backoff.WithMaxRetries.
func (s *Stateful) NextBackOff() time.Duration {
	if s == nil {
		return cbackoff.Stop
	}
	s.n++
	d := s.spread(s.nominal(s.n))
	s.prev = d
	return d
}

func (s *Stateful) nominal(n int) time.Duration {
	if s.schedule == nil {
		return policy.DefaultBackoff().Delay(n)
	}
	return s.schedule.Delay(n)
}

func (s *Stateful) spread(d time.Duration) time.Duration {
	if s.jitter == nil {
		return d
	}
	return s.jitter.Apply(d, s.prev, rand.Uint64())
}

// Reset starts the schedule over.
func (s *Stateful) Reset() {
	if s != nil {
		s.n, s.prev = 0, 0
	}
}
