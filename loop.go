package retry

import (
	"context"
	"errors"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/policy"
)

// run is a whole call, one attempt at a time, on the caller's stack.
func (r *Retrier) run(ctx context.Context, op func(context.Context) error, st *Stats) error {
	if err := checkCall(ctx, op); err != nil {
		return err
	}
	var c call
	c.init(r, ctx, &r.p)
	if !c.open() {
		return c.end(st)
	}
	if r.breakers != nil {
		return c.guarded(op, st)
	}
	return c.loop(op, nil, st)
}

// resume goes on with a call whose first attempt the fast path made at
// start, and which failed with err.
func (r *Retrier) resume(ctx context.Context, op func(context.Context) error, err error, start time.Duration) error {
	var c call
	c.init(r, ctx, &r.p)
	c.start = start
	c.stats.Attempts = 1
	c.record(1, err, breaker.Permit{}, false)
	return c.loop(op, err, nil)
}

// loop makes the call's attempts, from a failure err to decide on (nil to
// begin with an attempt), until one succeeds or the call stops.
func (c *call) loop(op func(context.Context) error, err error, st *Stats) error {
	for {
		if err != nil {
			if c.deferred() {
				return c.deferTo(err, st)
			}
			delay, stop := c.next(c.stats.Attempts, err, c.last)
			if stop == policy.Continue && !c.sleep(delay) {
				stop = policy.StopCanceled
			}
			if stop != policy.Continue {
				c.stop = stop
				return c.end(st)
			}
		}
		a, ok := c.admit()
		if !ok {
			return c.end(st)
		}
		c.stats.Attempts++
		c.running = a.permit
		err = c.attempt(op)
		c.running = breaker.Permit{}
		c.record(c.stats.Attempts, err, a.permit, false)
		if err == nil {
			c.stats.Winner = c.stats.Attempts
			return c.end(st)
		}
	}
}

// deferTo ends a call nested in an Outermost loop's operation after its one
// attempt: the error goes back as it is, for the outer loop to classify.
func (c *call) deferTo(err error, st *Stats) error {
	c.stopTimer()
	if c.r.breakers != nil {
		c.release(c.outcome())
	}
	if st != nil {
		c.stats.Elapsed = monoNow() - c.start
		*st = c.stats
	}
	return err
}

// errAborted is what the breakers hear of a call whose operation panicked or
// called runtime.Goexit: a failure, since the call did not end well.
var errAborted = errors.New("retry: the operation panicked or exited its goroutine")

// guarded is loop for a Retrier with breakers: an operation that panics or
// exits its goroutine (runtime.Goexit, as t.FailNow does) must still give
// back its breaker's permit, or a half-open breaker would wait for its
// probe forever.
func (c *call) guarded(op func(context.Context) error, st *Stats) error {
	done := false
	defer func() {
		if !done {
			c.running.Done(c.ctx, errAborted)
			c.release(errAborted)
		}
	}()
	err := c.loop(op, nil, st)
	done = true
	return err
}

// sleep waits d, reusing one timer for the whole call. It reports false if
// the context ended first. The wait runs from the failure, so a wait that
// has already passed (a tiny one) is not slept at all: parking the goroutine
// on a timer would cost far more than the wait. A context that can never end
// needs no timer of its own: time.Sleep reuses the goroutine's, and
// allocates nothing.
func (c *call) sleep(d time.Duration) bool {
	c.prev = d
	rest := d - (monoNow() - c.decided)
	if rest <= 0 {
		c.stats.Waited += d
		return c.ctx.Err() == nil
	}
	done := c.ctx.Done()
	if done == nil {
		time.Sleep(rest)
		c.stats.Waited += d
		return true
	}
	if c.timer == nil {
		c.timer = time.NewTimer(rest)
	} else {
		c.timer.Reset(rest)
	}
	select {
	case <-c.timer.C:
		c.stats.Waited += d
		return true
	case <-done:
		c.stats.Waited += min(monoNow()-c.decided, d) // the part of the wait that passed
		return false
	}
}

func (c *call) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
	}
}
