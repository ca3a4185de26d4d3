package retry

import (
	"context"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
)

// WithLimiter paces every attempt of every call — the first one included —
// through l, shared with every other Retrier given the same limiter
// (limit.Adaptive, limit.Throttler, or any limit.Limiter). Before each
// attempt the loop asks l for permission, and l may make it wait its turn:
// at most the policy's MaxDelay, and never past MaxElapsed or the context's
// deadline. After each attempt the loop tells l how it ended (see
// limit.OutcomeOf). When l refuses, or the turn would come too late, the call
// ends at once with ErrLimited: nothing was sent, and the refusal is never
// retried.
//
// A limiter's wait before a retry counts in Stats.Waited; a wait before the
// first attempt counts only in Elapsed.
func WithLimiter(l limit.Limiter) Option {
	return func(c *config) *InvalidError {
		if err := check("WithLimiter", l); err != nil {
			return err
		}
		c.limiter = l
		return nil
	}
}

// admitFirst asks the limiter for the first attempt of a call started at
// start. It returns the reason the call cannot start.
func (r *Retrier) admitFirst(ctx context.Context, start time.Duration) error {
	if r.limiter.Acquire(ctx, r.maxLimitWait(ctx, start, start)) {
		return nil
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return ErrLimited
}

// admit asks the limiter for the call's next attempt, counting its wait. It
// returns the reason the call must stop.
func (c *call) admit() error {
	now := monoNow()
	ok := c.r.limiter.Acquire(c.ctx, c.r.maxLimitWait(c.ctx, c.start, now))
	c.stats.Waited += monoNow() - now
	switch {
	case ok:
		return nil
	case c.ctx.Err() != nil:
		return context.Cause(c.ctx)
	}
	return ErrLimited
}

// maxLimitWait is the longest wait a limiter may ask for at now, in a call
// that started at start: the policy's MaxDelay, cut to what is left of
// MaxElapsed and of the context's deadline.
func (r *Retrier) maxLimitWait(ctx context.Context, start, now time.Duration) time.Duration {
	w := r.p.MaxDelay
	if w == 0 {
		w = policy.DefaultMaxDelay
	}
	if r.p.MaxElapsed > 0 {
		w = min(w, r.p.MaxElapsed-(now-start))
	}
	if deadline, ok := ctx.Deadline(); ok {
		w = min(w, deadline.Sub(epoch)-now-1) // a wait that ends at the deadline is in vain
	}
	return max(w, 0)
}

// recordLimit tells the limiter, if any, how the attempt just made ended.
func (r *Retrier) recordLimit(ctx context.Context, err error, d classify.Decision) {
	if r.limiter != nil {
		r.limiter.Record(ctx, limit.OutcomeOf(err, d))
	}
}
