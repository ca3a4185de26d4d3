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
// attempt the loop asks l for permission, and waits the time l asks for if
// that wait ends before the context's deadline, within MaxElapsed, and is at
// most the policy's MaxDelay; after each attempt it tells l how it ended (see
// limit.OutcomeOf). When l refuses, or asks for a longer wait, the call ends
// at once with ErrLimited: nothing was sent, and the refusal is never retried.
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

// admitFirst asks the limiter for the first attempt, started at start, and
// waits the time it asks for. It returns the reason the call cannot start.
func (r *Retrier) admitFirst(ctx context.Context, start time.Duration) error {
	wait, ok := r.limiter.Acquire(ctx, r.maxLimitWait(ctx, start, start))
	if !ok {
		return ErrLimited
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// admit asks the limiter for the call's next attempt and waits the time it
// asks for. It returns the reason the call must stop.
func (c *call) admit() error {
	now := monoNow()
	wait, ok := c.r.limiter.Acquire(c.ctx, c.r.maxLimitWait(c.ctx, c.start, now))
	if !ok {
		return ErrLimited
	}
	if wait <= 0 {
		return nil
	}
	c.decided = now
	if !c.pause(wait) {
		return context.Cause(c.ctx)
	}
	return nil
}

// pause waits d from c.decided on the call's timer, counting it as waited.
func (c *call) pause(d time.Duration) bool {
	rest := d - (monoNow() - c.decided)
	if c.timer == nil {
		c.timer = time.NewTimer(max(rest, 0))
	} else {
		c.timer.Reset(max(rest, 0))
	}
	select {
	case <-c.timer.C:
		c.stats.Waited += d
		return true
	case <-c.ctx.Done():
		c.stats.Waited += min(monoNow()-c.decided, d)
		return false
	}
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
