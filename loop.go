package retry

import (
	"context"
	"errors"
	"time"

	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// epoch anchors the loop's monotonic readings. monoNow reads only the
// monotonic clock (time.Since): about 24 ns on the development machine,
// against 50 ns for time.Now, which also reads the wall clock. Every call
// reads it once before its first attempt, so that Elapsed always covers the
// whole call.
var epoch = time.Now()

func monoNow() time.Duration { return time.Since(epoch) }

// run is the whole call. Its first half is the first attempt; a first attempt
// that succeeds allocates nothing unless the caller asked for a hook, a
// retry budget or Outermost.
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
	start := monoNow()
	if r.limiter != nil {
		if err := r.admitFirst(ctx, start); err != nil {
			return r.notStarted(ctx, err, st)
		}
	}
	opCtx := ctx
	if r.outermost && !nestedInOutermost(ctx) {
		opCtx = SingleAttempt(ctx)
	}
	err := r.attempt(opCtx, op)
	if r.hook != nil {
		r.hook(ctx, Event{Kind: AttemptDone, Attempt: 1, Started: 1, Err: err, Elapsed: monoNow() - start})
	}
	if err == nil {
		if r.budget != nil {
			r.budget.Record(budget.Attempt{Outcome: budget.Succeeded})
		}
		r.recordLimit(ctx, nil, classify.Decision{})
		if st != nil {
			*st = Stats{Attempts: 1, Winner: 1, Elapsed: monoNow() - start}
		}
		return nil
	}
	return r.retry(ctx, opCtx, op, err, start, st)
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

// outermostKey marks a SingleAttempt context: loops running under it make
// one attempt and leave the decision to the code around them.
type outermostKey struct{}

func nestedInOutermost(ctx context.Context) bool { return ctx.Value(outermostKey{}) != nil }

// Deferred reports whether a loop given ctx defers to the code around it (an
// Outermost loop, or SingleAttempt): it makes one attempt and returns its
// error unchanged. A hook receives the loop's ctx, and uses this to count a
// call once when loops nest: the deferred attempt is the outer loop's.
func Deferred(ctx context.Context) bool { return ctx != nil && nestedInOutermost(ctx) }

// SingleAttempt returns a context with which retry loops make one attempt
// each and return its error unchanged, for work that must not be repeated —
// a request that is not idempotent, say — while what surrounds the loop (a
// circuit breaker, the hooks) still sees the real failure. It is the context
// an Outermost loop gives its operation.
func SingleAttempt(ctx context.Context) context.Context {
	if ctx == nil {
		return nil // the loop reports a nil context as invalid
	}
	return context.WithValue(ctx, outermostKey{}, true)
}

// errDeferred tells retry that an enclosing Outermost loop decides.
var errDeferred = errors.New("deferred to the outermost loop")

// The call keeps its first failures and its limited classes in arrays, so
// that a call that fails a few times before it succeeds allocates nothing:
// DoTwoRetries makes 0 allocations with them, and 2 (320 B) with a slice grown
// from the first failure, which breaks bench/'s target of at most one.
const (
	inlineFailures = 8 // failures a call records without allocating
	inlineClasses  = 4 // limited classes a call counts without allocating
)

// classCount counts a call's failures of one class with a Limit.
type classCount struct {
	reason string
	n      int
}

// call is the state of one call after its first failure. Times are monotonic
// readings (monoNow).
type call struct {
	r          *Retrier
	ctx        context.Context // the caller's
	start      time.Duration   // before the first attempt
	decided    time.Duration   // when the coming wait was decided: it runs from then
	stats      Stats
	rng        jitter.Rand
	timer      *time.Timer
	prev       time.Duration     // the previous wait, for decorrelated jitter
	last       classify.Decision // the last failure's classification
	retryAfter time.Duration     // a server wait returned instead of slept
	inline     [inlineFailures]Failure
	spill      []Failure
	classes    [inlineClasses]classCount
	moreClass  []classCount
}

// retry continues a call whose first attempt failed with err. opCtx is the
// context the operation receives: ctx, or ctx marked by an Outermost loop.
func (r *Retrier) retry(ctx, opCtx context.Context, op func(context.Context) error, err error, start time.Duration, st *Stats) error {
	c := call{r: r, ctx: ctx, start: start, rng: jitter.NewRand(r.src.Uint64())}
	defer c.stopTimer()
	for {
		c.stats.Attempts++
		delay, reason := c.next(err)
		if reason == errDeferred {
			c.report(st)
			return err // one attempt; the enclosing loop, or the caller, classifies err
		}
		if reason != nil {
			return c.fail(err, reason, st)
		}
		if !c.sleep(delay, err) {
			return c.fail(err, context.Cause(ctx), st)
		}
		if r.limiter != nil {
			if reason := c.admit(); reason != nil {
				return c.fail(err, reason, st)
			}
		}
		err = r.attempt(opCtx, op)
		if r.hook != nil {
			r.hook(ctx, Event{Kind: AttemptDone, Attempt: c.stats.Attempts + 1, Started: c.stats.Attempts + 1, Err: err, Waited: c.stats.Waited, Elapsed: monoNow() - c.start})
		}
		if err == nil {
			c.stats.Attempts++
			c.stats.Winner = c.stats.Attempts
			c.record(budget.Succeeded)
			r.recordLimit(ctx, nil, classify.Decision{})
			c.report(st)
			return nil
		}
	}
}

// report hands the call's Stats to a caller that asked for them.
func (c *call) report(st *Stats) {
	if st != nil {
		c.stats.Elapsed = monoNow() - c.start
		*st = c.stats
	}
}

// next classifies the failed attempt and decides what follows: the wait
// before the next attempt, or the reason to stop.
func (c *call) next(err error) (time.Duration, error) {
	d := c.r.Classify(err)
	c.last = d
	c.decided = monoNow()
	c.r.recordLimit(c.ctx, err, d)
	// At is set from the monotonic reading when the failures are reported
	// (failures): a wall clock read per failure would cost twice as much.
	f := Failure{Attempt: c.stats.Attempts, Err: err, Decision: d, mono: c.decided}
	if c.ctx.Err() != nil { // the caller's own cancellation or deadline comes first
		c.record(budget.Other)
		c.fails(f)
		return 0, context.Cause(c.ctx)
	}
	c.record(outcome(d))
	if nestedInOutermost(c.ctx) {
		return 0, errDeferred
	}
	delay, stop := c.decide(&c.r.p, d)
	if stop != policy.Continue {
		c.fails(f)
		if d.RetryAfter > 0 && (stop == policy.StopWaitTooLong || stop == policy.StopDeadline) {
			c.retryAfter = d.RetryAfter
		}
		return delay, stopErrors[stop]
	}
	f.Delay = delay
	c.fails(f)
	return delay, nil
}

// decide asks the policy p (the Retrier's, or its hedging form), then the
// shared budget, about a failure classified d, decided at c.decided.
func (c *call) decide(p *policy.Policy, d classify.Decision) (time.Duration, policy.Stop) {
	s := policy.State{Attempt: c.stats.Attempts, Elapsed: c.decided - c.start, Prev: c.prev}
	if d.Limit > 0 {
		s.ClassFailures = c.countClass(d.Reason)
	}
	if d.Timeout {
		_, s.Keyed = IdempotencyKey(c.ctx)
	}
	if deadline, ok := c.ctx.Deadline(); ok {
		// Both sides on the monotonic clock when the deadline has a reading
		// (context.WithTimeout's does); a wall-clock deadline is compared on
		// the wall clock since epoch.
		s.HasDeadline, s.Remaining = true, deadline.Sub(epoch)-c.decided
	}
	delay, stop := p.Next(s, d, c.rng.Uint64())
	if stop == policy.Continue && c.r.budget != nil && !c.r.budget.Allow() {
		stop = policy.StopBudget
	}
	return delay, stop
}

// Classify returns the decision the Retrier's loop makes about err: Stop for
// an error an inner loop already gave up on (retry in one layer); then the
// caller's classifiers and the built-ins; then the general or strict
// fallback. A circuit breaker uses it so that what opens the breaker is what
// the loop would retry. A Retrier that cannot run (nil, or refused options)
// classifies with the defaults.
func (r *Retrier) Classify(err error) classify.Decision {
	if r, _ = r.ready(); r == nil {
		r = defaultRetrier
	}
	if !r.plain { // classify.Default applies Final first; a caller's classifiers run before it
		if d := classify.Final(err); d.Verdict != classify.NoOpinion {
			return d
		}
	}
	d := r.classify(err)
	if d.Verdict == classify.NoOpinion {
		if r.p.Strict {
			return classify.Strict(err)
		}
		return classify.General(err)
	}
	return d
}

// outcome tells a retry budget what a classified failure says about the
// dependency.
func outcome(d classify.Decision) budget.Outcome {
	switch {
	case d.Verdict != classify.Retry:
		return budget.Other
	case d.Timeout:
		return budget.TimedOut
	}
	return budget.Failed
}

// record reports the attempt just made to the retry budget, if any.
func (c *call) record(o budget.Outcome) {
	if b := c.r.budget; b != nil {
		b.Record(budget.Attempt{Retry: c.stats.Attempts > 1, Outcome: o})
	}
}

// countClass counts one more failure of a limited class and returns the
// call's total for it.
func (c *call) countClass(reason string) int {
	for i := range c.classes {
		switch cl := &c.classes[i]; cl.reason {
		case reason:
			cl.n++
			return cl.n
		case "":
			*cl = classCount{reason, 1}
			return 1
		}
	}
	for i := range c.moreClass {
		if cl := &c.moreClass[i]; cl.reason == reason {
			cl.n++
			return cl.n
		}
	}
	c.moreClass = append(c.moreClass, classCount{reason, 1})
	return 1
}

// sleep waits d, reusing one timer for the whole call. It reports false if
// the context ended first. The wait runs from the decision, so a wait that
// has already passed (a tiny one) is not slept at all: parking the goroutine
// on a timer would cost far more than the wait. A context that can never end
// needs no timer of its own: time.Sleep reuses the goroutine's, and
// allocates nothing.
func (c *call) sleep(d time.Duration, err error) bool {
	if c.r.hook != nil {
		c.r.hook(c.ctx, Event{Kind: RetryScheduled, Attempt: c.stats.Attempts, Started: c.stats.Attempts, Err: err, Decision: c.last,
			Delay: d, Waited: c.stats.Waited, Elapsed: monoNow() - c.start})
	}
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

func (c *call) fails(f Failure) {
	if n := c.stats.Attempts - 1; n < inlineFailures {
		c.inline[n] = f
		return
	}
	c.spill = append(c.spill, f)
}

// failures returns the call's failures, each with its wall-clock time: now,
// less the monotonic time since the failure.
func (c *call) failures() []Failure {
	n := min(c.stats.Attempts, inlineFailures)
	out := make([]Failure, 0, n+len(c.spill))
	out = append(append(out, c.inline[:n]...), c.spill...)
	now := time.Now()
	nowMono := now.Sub(epoch)
	for i := range out {
		out[i].At = now.Add(out[i].mono - nowMono)
	}
	return out
}

func (c *call) fail(last, reason error, st *Stats) error {
	c.stats.Elapsed = monoNow() - c.start
	if st != nil {
		*st = c.stats
	}
	e := &Error{Stats: c.stats, Reason: reason, Last: last, Decision: c.last, RetryAfter: c.retryAfter, Failures: c.failures()}
	if c.r.hook != nil {
		c.r.hook(c.ctx, Event{Kind: GaveUp, Attempt: c.stats.Attempts, Started: c.stats.Attempts, Err: e, Decision: c.last, Waited: c.stats.Waited, Elapsed: c.stats.Elapsed})
	}
	return e
}
