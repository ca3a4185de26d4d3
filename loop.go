package retry

import (
	"context"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// run is the whole call. Its first half is the hot path — a first attempt
// that succeeds — and reads no clock and allocates nothing unless the caller
// asked for Stats, a hook or a time budget.
func (r *Retrier) run(ctx context.Context, op func(context.Context) error, st *Stats) error {
	switch {
	case op == nil:
		return invalid("op", nil, "must not be nil")
	case ctx == nil:
		return invalid("ctx", nil, "must not be nil")
	case ctx.Err() != nil:
		return r.notStarted(ctx, context.Cause(ctx), st)
	case r.p.RequireKey:
		if _, ok := IdempotencyKey(ctx); !ok {
			return r.notStarted(ctx, ErrKeyRequired, st)
		}
	}
	var start time.Time
	if r.timed || st != nil {
		start = time.Now()
	}
	err := r.attempt(ctx, op)
	if r.hook != nil {
		r.hook(ctx, Event{Kind: AttemptDone, Attempt: 1, Err: err, Elapsed: time.Since(start)})
	}
	if err == nil {
		if st != nil {
			*st = Stats{Attempts: 1, Elapsed: time.Since(start)}
		}
		return nil
	}
	return r.retry(ctx, op, err, start, st)
}

// attempt calls op once, with its own deadline when the policy sets one.
func (r *Retrier) attempt(ctx context.Context, op func(context.Context) error) error {
	if r.p.AttemptTimeout <= 0 {
		return op(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, r.p.AttemptTimeout)
	defer cancel()
	return op(actx)
}

func (r *Retrier) notStarted(ctx context.Context, reason error, st *Stats) error {
	e := &Error{Reason: reason}
	if st != nil {
		*st = Stats{}
	}
	if r.hook != nil {
		r.hook(ctx, Event{Kind: GaveUp, Err: e})
	}
	return e
}

// inlineFailures is how many failures a call records without allocating.
const inlineFailures = 8

// call is the state of one call after its first failure.
type call struct {
	r          *Retrier
	ctx        context.Context
	start      time.Time
	stats      Stats
	rng        jitter.Rand
	timer      *time.Timer
	prev       time.Duration     // the previous wait, for decorrelated jitter
	last       classify.Decision // the last failure's classification
	streak     int               // failures in a row of last.Reason
	retryAfter time.Duration     // a server wait returned instead of slept
	inline     [inlineFailures]Failure
	spill      []Failure
}

// retry continues a call whose first attempt failed with err.
func (r *Retrier) retry(ctx context.Context, op func(context.Context) error, err error, start time.Time, st *Stats) error {
	c := call{r: r, ctx: ctx, start: start, rng: jitter.NewRand(r.src.Uint64())}
	if c.start.IsZero() {
		c.start = time.Now() // an untimed call starts its clock at the first failure
	}
	defer c.stopTimer()
	for {
		c.stats.Attempts++
		delay, reason := c.next(err)
		if reason != nil {
			return c.fail(err, reason, st)
		}
		if !c.sleep(delay, err) {
			return c.fail(err, context.Cause(ctx), st)
		}
		err = r.attempt(ctx, op)
		if r.hook != nil {
			r.hook(ctx, Event{Kind: AttemptDone, Attempt: c.stats.Attempts + 1, Err: err, Waited: c.stats.Waited, Elapsed: time.Since(c.start)})
		}
		if err == nil {
			c.stats.Attempts++
			if st != nil {
				c.stats.Elapsed = time.Since(c.start)
				*st = c.stats
			}
			return nil
		}
	}
}

// next classifies the failed attempt and asks the policy what follows: the
// wait before the next attempt, or the reason to stop.
func (c *call) next(err error) (time.Duration, error) {
	d := c.classify(err)
	if d.Reason == c.last.Reason && c.streak > 0 {
		c.streak++
	} else {
		c.streak = 1
	}
	c.last = d
	if c.ctx.Err() != nil { // the caller's own cancellation or deadline comes first
		c.record(Failure{Attempt: c.stats.Attempts, Err: err, Decision: d})
		return 0, context.Cause(c.ctx)
	}
	now := time.Now()
	s := policy.State{Attempt: c.stats.Attempts, Elapsed: now.Sub(c.start), Prev: c.prev, Streak: c.streak}
	if d.Timeout {
		_, s.Keyed = IdempotencyKey(c.ctx)
	}
	if deadline, ok := c.ctx.Deadline(); ok {
		s.HasDeadline, s.Remaining = true, deadline.Sub(now)
	}
	delay, stop := c.r.p.Next(s, d, c.rng.Uint64())
	if stop != policy.Continue {
		c.record(Failure{Attempt: c.stats.Attempts, Err: err, Decision: d})
		if d.RetryAfter > 0 && (stop == policy.StopWaitTooLong || stop == policy.StopDeadline) {
			c.retryAfter = d.RetryAfter
		}
		return delay, stopErrors[stop]
	}
	c.record(Failure{Attempt: c.stats.Attempts, Err: err, Decision: d, Delay: delay})
	return delay, nil
}

// classify runs the classifiers, then the general or strict fallback.
func (c *call) classify(err error) classify.Decision {
	if re, ok := err.(*ResultError); ok {
		return re.Decision
	}
	d := c.r.classify(err)
	if d.Verdict == classify.NoOpinion {
		if c.r.p.Strict {
			return classify.Strict(err)
		}
		return classify.General(err)
	}
	return d
}

// sleep waits d, reusing one timer for the whole call. It reports false if
// the context ended first. A context that can never end needs no timer of its
// own: time.Sleep reuses the goroutine's, and allocates nothing.
func (c *call) sleep(d time.Duration, err error) bool {
	if c.r.hook != nil {
		c.r.hook(c.ctx, Event{Kind: RetryScheduled, Attempt: c.stats.Attempts, Err: err, Decision: c.last,
			Delay: d, Waited: c.stats.Waited, Elapsed: time.Since(c.start)})
	}
	c.prev = d
	if d <= 0 {
		return c.ctx.Err() == nil
	}
	done := c.ctx.Done()
	if done == nil {
		time.Sleep(d)
		c.stats.Waited += d
		return true
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	began := time.Now()
	select {
	case <-c.timer.C:
		c.stats.Waited += d
		return true
	case <-done:
		c.stats.Waited += time.Since(began)
		return false
	}
}

func (c *call) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *call) record(f Failure) {
	if n := c.stats.Attempts - 1; n < inlineFailures {
		c.inline[n] = f
		return
	}
	c.spill = append(c.spill, f)
}

func (c *call) failures() []Failure {
	n := min(c.stats.Attempts, inlineFailures)
	out := make([]Failure, 0, n+len(c.spill))
	return append(append(out, c.inline[:n]...), c.spill...)
}

func (c *call) fail(last, reason error, st *Stats) error {
	c.stats.Elapsed = time.Since(c.start)
	e := &Error{Stats: c.stats, Reason: reason, Last: last, Decision: c.last, RetryAfter: c.retryAfter, Failures: c.failures()}
	if st != nil {
		*st = c.stats
	}
	if c.r.hook != nil {
		c.r.hook(c.ctx, Event{Kind: GaveUp, Attempt: c.stats.Attempts, Err: e, Decision: c.last, Waited: c.stats.Waited, Elapsed: c.stats.Elapsed})
	}
	return e
}
