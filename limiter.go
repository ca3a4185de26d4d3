package retry

import (
	"context"
	"log/slog"
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
// first attempt counts only in Elapsed. Either is visible: hooks receive a
// LimiterWaited event (Delay: how long the limiter held the attempt), which
// WithLogger logs like a scheduled retry, at INFO from one second and at
// DEBUG below.
//
// A hedging Retrier (WithHedging) asks l too: for the first attempt and for
// an attempt that follows a failure as above (its wait counted in
// Stats.Waited when no other attempt was in flight as it began, as a
// Retry-After wait is), and for a hedge without waiting (maxWait 0), since a
// hedge is optional: one l cannot let go at once is not sent and not counted,
// the attempts in flight go on, and no hedge follows until another attempt
// starts. A refused retry there forbids new attempts; those in flight may
// still win, else the call fails with ErrLimited. Every attempt sent is
// recorded, a loser cancelled because another won as limit.Other, and so is a
// permission granted to an attempt that the call, ended meanwhile, did not
// send.
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
		if r.hook != nil { // the clock is read again only for a hook
			now := monoNow()
			r.limiterWaited(ctx, Event{Attempt: 1, Delay: now - start, Elapsed: now - start})
		}
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
	after := monoNow()
	c.stats.Waited += after - now
	switch {
	case ok:
		if c.r.hook != nil {
			c.r.limiterWaited(c.ctx, Event{Attempt: c.stats.Attempts + 1, Started: c.stats.Attempts, Delay: after - now,
				Waited: c.stats.Waited, Elapsed: after - c.start})
		}
		return nil
	case c.ctx.Err() != nil:
		return context.Cause(c.ctx)
	}
	return ErrLimited
}

// minLimiterWait is the shortest hold reported as a LimiterWaited event. A
// limiter that grants at once still takes tens of nanoseconds on a real
// clock (under testing/synctest, none): that is no wait, and an event per
// attempt for it would be noise.
const minLimiterWait = time.Microsecond

// limiterWaited sends e, a LimiterWaited event, to the hook, if any, when
// the limiter's hold (e.Delay) was a wait.
func (r *Retrier) limiterWaited(ctx context.Context, e Event) {
	if r.hook != nil && e.Delay >= minLimiterWait {
		e.Kind = LimiterWaited
		r.hook(ctx, e)
	}
}

// logLimiterWait logs a limiter's hold as a scheduled retry is logged: at
// INFO when a person would notice it, at DEBUG otherwise.
func logLimiterWait(ctx context.Context, l *slog.Logger, e Event) {
	level := slog.LevelDebug
	if e.Delay >= longWait {
		level = slog.LevelInfo
	}
	if l.Enabled(ctx, level) {
		l.LogAttrs(ctx, level, "retry: the client-side rate limiter held the attempt",
			slog.Int("attempt", e.Attempt),
			slog.Duration("delay", e.Delay),
			slog.Duration("waited", e.Waited),
			slog.Duration("elapsed", e.Elapsed))
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
