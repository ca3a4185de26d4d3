package retry

import (
	"context"
	"errors"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/rng"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// epoch anchors the loop's monotonic readings. monoNow reads only the
// monotonic clock (time.Since): about 24 ns on the development machine,
// against 50 ns for time.Now, which also reads the wall clock. Every call
// reads it once before its first attempt, so that Elapsed always covers the
// whole call.
var epoch = time.Now()

func monoNow() time.Duration { return time.Since(epoch) }

// The call keeps its first failures and its limited classes in arrays, so
// that a call that fails a few times before it succeeds allocates nothing:
// DoTwoRetries makes 0 allocations with them, and 2 (320 B) with a slice grown
// from the first failure.
const (
	inlineFailures = 3 // failures a call records without allocating: as many as the default policy allows
	inlineClasses  = 2 // limited classes a call counts without allocating
)

// classCount counts a call's failures of one class with a Limit.
type classCount struct {
	reason string
	n      int
}

// call is the state of one call, and every stage of the pipeline is a method
// of it: the plain loop (loop.go) runs them one after the other on the
// caller's stack, where the operation never escapes; a hedged call
// (hedge.go) schedules the same methods from several goroutines, under its
// lock. Times are monotonic readings (monoNow). The fields up to start are
// set when the call begins and never change, so a stage that blocks (gate)
// reads them without the lock.
type call struct {
	r      *Retrier
	pol    *policy.Policy  // the Retrier's, or its hedging form
	ctx    context.Context // the caller's
	opCtx  context.Context // what each attempt's context derives from
	key    breaker.Key     // the call's key, read when a stage needs it
	start  time.Duration   // before the first attempt
	nested int8            // 1: deferred to an enclosing Outermost loop; -1: not; 0: not yet known

	stats      Stats
	decided    time.Duration // when the last failure was seen: the coming wait runs from then
	rng        rng.Rand
	seeded     bool
	timer      *time.Timer
	prev       time.Duration     // the previous wait, for decorrelated jitter
	last       classify.Decision // the last failure's classification
	lastErr    error
	retryAfter time.Duration  // a server's wait, or a cooldown, returned instead of waited
	stop       policy.Stop    // why the call stopped; Continue while it goes on
	refusal    error          // what the stage that stopped the call before any attempt said
	permit     breaker.Permit // the call's breaker (around the whole call)
	running    breaker.Permit // the running attempt's breaker (per attempt), in the plain loop
	nfail      int
	inline     [inlineFailures]Failure
	spill      []Failure
	classes    [inlineClasses]classCount
	moreClass  []classCount
}

// init begins a call of r under ctx, deciding by p.
func (c *call) init(r *Retrier, ctx context.Context, p *policy.Policy) {
	c.r, c.pol, c.ctx, c.opCtx = r, p, ctx, ctx
	if r.outermost && !c.deferred() {
		c.opCtx = SingleAttempt(ctx)
	}
	if r.breakers != nil || r.cooldowns != nil {
		c.key, _ = breaker.KeyOf(ctx)
	}
	c.start = monoNow()
}

// deferred reports whether the call runs under a SingleAttempt context: one
// attempt, its error returned as it is, for the loop around to decide.
func (c *call) deferred() bool {
	if c.nested == 0 {
		c.nested = -1
		if nestedInOutermost(c.ctx) {
			c.nested = 1
		}
	}
	return c.nested > 0
}

// checkCall refuses a call that cannot run at all.
func checkCall(ctx context.Context, op func(context.Context) error) error {
	switch {
	case op == nil:
		return invalid("op", nil, "must not be nil")
	case ctx == nil:
		return invalid("ctx", nil, "must not be nil")
	}
	return nil
}

// open is the stages before the first attempt: the caller's context, the
// idempotency key the policy may require, and the breaker around the whole
// call. It reports false, with c.stop set, when the call may not start.
func (c *call) open() bool {
	switch {
	case c.ctx.Err() != nil:
		c.stop = policy.StopCanceled
		return false
	case c.pol.RequireKey:
		if _, ok := IdempotencyKey(c.ctx); !ok {
			c.stop = policy.StopKeyRequired
			return false
		}
	}
	if b := c.r.breakers; b != nil && !b.PerAttempt() {
		p, err := b.Allow(c.ctx, c.key, c.r.obs)
		if err != nil {
			c.stop, c.refusal = policy.StopOpen, err
			return false
		}
		c.permit = p
	}
	return true
}

// admission is what the stages before an attempt decided.
type admission struct {
	stop       policy.Stop    // Continue: the attempt may go
	err        error          // the refusal of the stage that stopped it, if it has one to say
	retryAfter time.Duration  // the cooldown the call would not wait
	permit     breaker.Permit // the attempt's breaker, per attempt
	cooled     time.Duration  // how long it waited for its key's cooldown
	limited    time.Duration  // how long the limiter held it
}

// gate is the stages before an attempt, in order: its key's cooldown, its
// breaker (per attempt), the limiter. It may block, and reads only what
// never changes during the call, so a hedged call runs it without its lock;
// live ends when the call does. A hedge waits for nothing: a key cooling
// down, a breaker or a limiter that would not let it go at once skips it.
func (c *call) gate(live context.Context, hedge bool) (a admission) {
	if c.r.cooldowns != nil {
		if a.stop = c.cool(live, hedge, &a); a.stop != policy.Continue {
			return a
		}
	}
	if b := c.r.breakers; b.PerAttempt() {
		p, err := b.Allow(c.ctx, c.key, c.r.obs)
		if err != nil {
			a.stop, a.err = policy.StopOpen, err
			return a
		}
		a.permit = p
	}
	if c.r.limiter != nil {
		if a.stop = c.limit(live, hedge, &a); a.stop != policy.Continue {
			a.permit.Done(c.ctx, breaker.Excluded)
		}
	}
	return a
}

// cool waits for the key's cooldown to end, if it can.
func (c *call) cool(live context.Context, hedge bool, a *admission) policy.Stop {
	err := c.r.cooldowns.Check(c.key)
	if err == nil {
		return policy.Continue
	}
	var left time.Duration
	if cd, ok := err.(*breaker.CooldownError); ok {
		left = cd.Left
	}
	if hedge {
		return policy.StopWaitTooLong
	}
	if most, bound := c.allowance(monoNow()); left > most {
		a.err, a.retryAfter = err, left
		return bound
	}
	if !wait(live, left) {
		return policy.StopCanceled
	}
	a.cooled = left
	return policy.Continue
}

// limit asks the limiter to let the attempt go.
func (c *call) limit(live context.Context, hedge bool, a *admission) policy.Stop {
	now := monoNow()
	var most time.Duration // a hedge is optional: sent at once, or not at all
	if !hedge {
		most, _ = c.allowance(now)
	}
	ok := c.r.limiter.Acquire(live, most)
	a.limited = monoNow() - now
	switch {
	case ok:
		return policy.Continue
	case c.ctx.Err() != nil:
		return policy.StopCanceled
	}
	return policy.StopLimited
}

// allowance is the longest the call may wait at now before its next
// attempt, and the reason it stops if it would wait longer: the policy's
// MaxDelay, cut to what is left of MaxElapsed and of the context's deadline.
func (c *call) allowance(now time.Duration) (time.Duration, policy.Stop) {
	most, bound := c.pol.MaxDelay, policy.StopWaitTooLong
	if most == 0 {
		most = policy.DefaultMaxDelay
	}
	if m := c.pol.MaxElapsed; m > 0 && m-(now-c.start) < most {
		most, bound = m-(now-c.start), policy.StopElapsed
	}
	if deadline, ok := c.ctx.Deadline(); ok {
		if left := deadline.Sub(epoch) - now - 1; left < most { // a wait that ends at the deadline is in vain
			most, bound = left, policy.StopDeadline
		}
	}
	return max(most, 0), bound
}

// wait waits d, or until ctx ends; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// minLimiterWait is the shortest hold reported as a LimiterWaited event. A
// limiter that grants at once still takes tens of nanoseconds on a real
// clock (under testing/synctest, none): that is no wait, and an event per
// attempt for it would be noise.
const minLimiterWait = time.Microsecond

// admitted takes an attempt the gates let go: their holds are reported, and
// count in Waited when no other attempt ran meanwhile (idle) and the call
// had already made one; a hold before the first attempt counts in Elapsed
// only.
func (c *call) admitted(a admission, idle bool) {
	if idle && c.stats.Attempts > 0 {
		c.stats.Waited += a.cooled + a.limited
	}
	if c.r.obs == nil {
		return
	}
	n := c.stats.Attempts + 1
	if a.cooled > 0 {
		c.emit(observe.Event{Kind: observe.CooldownWaited, Attempt: n, Delay: a.cooled})
	}
	if a.limited >= minLimiterWait {
		c.emit(observe.Event{Kind: observe.LimiterWaited, Attempt: n, Delay: a.limited})
	}
}

// admit runs the stages before the call's next attempt, which may wait for
// them, and takes what they granted. It reports false when a stage refused
// the attempt: the call stops.
func (c *call) admit() (admission, bool) {
	if !c.r.gated {
		return admission{}, true
	}
	a := c.gate(c.ctx, false)
	if a.stop != policy.Continue {
		c.refused(a)
		return a, false
	}
	c.admitted(a, true)
	return a, true
}

// refused ends a call whose next attempt a stage refused.
func (c *call) refused(a admission) {
	c.stop = a.stop
	if c.stats.Attempts == 0 {
		c.refusal = a.err
	}
	if a.retryAfter > 0 {
		c.retryAfter = a.retryAfter
	}
}

// attempt calls op once, with its own deadline when the policy sets one.
func (c *call) attempt(op func(context.Context) error) error {
	if c.pol.AttemptTimeout <= 0 {
		return op(c.opCtx)
	}
	actx, cancel := context.WithTimeout(c.opCtx, c.pol.AttemptTimeout)
	defer cancel()
	return op(actx)
}

// record takes attempt n's result and tells every stage and the observer:
// the budget, the limiter, the key's cooldown and breaker. lost says the
// call was decided while the attempt ran — another attempt won, or the call
// stopped and cancelled it — so its outcome says nothing of the dependency.
// It returns the failure's classification.
func (c *call) record(n int, err error, p breaker.Permit, lost bool) classify.Decision {
	if err == nil {
		c.succeeded(n, p, lost)
		return classify.Decision{}
	}
	d := c.r.classify(err)
	now := monoNow()
	c.fails(Failure{Attempt: n, Err: err, Decision: d, mono: now})
	if c.r.staged {
		c.failed(n, err, d, p, lost)
	}
	if !lost {
		c.last, c.lastErr, c.decided = d, err, now
	}
	if c.r.obs != nil {
		c.emit(observe.Event{Kind: observe.AttemptDone, Attempt: n, Err: err, Decision: d})
	}
	return d
}

// failed tells the stages of attempt n's failure, classified d.
func (c *call) failed(n int, err error, d classify.Decision, p breaker.Permit, lost bool) {
	canceled := c.ctx.Err() != nil // the caller gave up: nothing learnt of the dependency
	if b := c.r.budget; b != nil {
		o := outcome(d)
		if lost || canceled {
			o = budget.Other
		}
		b.Record(budget.Attempt{Retry: n > 1, Outcome: o})
	}
	if l := c.r.limiter; l != nil {
		o := limit.Outcome{Result: limit.Other}
		if !lost {
			o = limit.OutcomeOf(err, d)
		}
		l.Record(c.ctx, o)
	}
	if c.r.breakers != nil {
		o := breaker.Excluded
		if !lost && !canceled {
			o = breakerOutcome(err, d)
		}
		p.Done(c.ctx, o)
	}
	if !lost && !canceled {
		c.r.cooldowns.Observe(c.ctx, c.key, err, d, c.r.obs)
	}
}

// succeeded records attempt n's success. A success after another attempt
// won is a loser whose result is discarded: the server took it, but the
// observer hears of it as cancelled, so that it counts one success per call.
func (c *call) succeeded(n int, p breaker.Permit, lost bool) {
	if c.r.staged {
		c.tell(n, budget.Succeeded, limit.Outcome{Result: limit.Accepted}, p, nil)
	}
	if c.r.obs != nil {
		var reported error
		if lost {
			reported = context.Canceled
		}
		c.emit(observe.Event{Kind: observe.AttemptDone, Attempt: n, Err: reported})
	}
}

// tell reports attempt n's outcome to the budget, the limiter and the
// attempt's breaker.
func (c *call) tell(n int, b budget.Outcome, l limit.Outcome, p breaker.Permit, br error) {
	if c.r.budget != nil {
		c.r.budget.Record(budget.Attempt{Retry: n > 1, Outcome: b})
	}
	if c.r.limiter != nil {
		c.r.limiter.Record(c.ctx, l)
	}
	p.Done(c.ctx, br)
}

// classify returns the decision the Retrier makes about err: Stop for an
// error an inner loop already gave up on (retry in one layer); then the
// caller's classifiers, over which what the server said (classify.Server)
// prevails — its "do not retry" stops, its wait is the shortest wait; then
// the built-ins, which apply it themselves; then the general or strict
// fallback.
func (r *Retrier) classify(err error) classify.Decision {
	if r.classifier != nil { // classify.Default applies Final first; a caller's classifiers run before it
		if d := classify.Final(err); d.Verdict != classify.NoOpinion {
			return d
		}
		if d := r.classifier(err); d.Verdict != classify.NoOpinion {
			return server(err, d)
		}
	}
	d := defaultChain(err)
	switch {
	case d.Verdict == classify.NoOpinion && r.p.Strict: // only what is known to be transient
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonUnclassified}
	case d.Verdict == classify.NoOpinion: // retried, reported as unclassified
		return classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified, RetryAfter: d.RetryAfter}
	}
	return d
}

// server applies what the server said about err to a caller's decision d.
func server(err error, d classify.Decision) classify.Decision {
	if d.Verdict != classify.Retry {
		return d
	}
	switch s := classify.Server(err); {
	case s.Verdict == classify.Stop:
		return s
	case s.RetryAfter > d.RetryAfter:
		d.RetryAfter = s.RetryAfter
	}
	return d
}

// outcome tells a retry budget what a classified failure says about the
// dependency. A transaction's serialization failure or deadlock, or a key
// another request holds, says the dependency is working and the work
// contends: retrying it is the protocol, not a load the dependency cannot
// take, and does not spend the budget.
func outcome(d classify.Decision) budget.Outcome {
	switch {
	case d.Verdict != classify.Retry:
		return budget.Other
	case d.Reason == classify.ReasonSerialization, d.Reason == classify.ReasonDeadlock, d.Reason == classify.ReasonKeyInProgress:
		return budget.Other
	case d.Timeout:
		return budget.TimedOut
	}
	return budget.Failed
}

// breakerOutcome is what a breaker counts for a failure classified d: what
// the Retrier would retry (or does not recognise) is a failure; a call the
// caller cancelled is not counted; anything else — a 400 the caller caused, a
// permanent error — is the dependency answering, a success.
func breakerOutcome(err error, d classify.Decision) error {
	switch {
	case errors.Is(err, context.Canceled):
		return breaker.Excluded
	case d.Verdict == classify.Retry || d.Reason == classify.ReasonUnclassified:
		return err
	}
	return nil
}

// next decides what follows failure n (err, classified d): the wait before
// the next attempt, or why the call stops.
func (c *call) next(n int, err error, d classify.Decision) (time.Duration, policy.Stop) {
	if c.ctx.Err() != nil { // the caller's own cancellation or deadline comes first
		return 0, policy.StopCanceled
	}
	delay, stop := c.decide(d)
	if stop != policy.Continue {
		if d.RetryAfter > 0 && (stop == policy.StopWaitTooLong || stop == policy.StopDeadline) {
			c.retryAfter = d.RetryAfter
		}
		return delay, stop
	}
	c.lastFailure().Delay = delay
	if c.r.obs != nil {
		c.emit(observe.Event{Kind: observe.RetryScheduled, Attempt: n, Err: err, Decision: d, Delay: delay})
	}
	return delay, policy.Continue
}

// decide asks the policy, then the shared budget, about a failure
// classified d, seen at c.decided.
func (c *call) decide(d classify.Decision) (time.Duration, policy.Stop) {
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
	if !c.seeded {
		c.rng, c.seeded = rng.New(c.r.src.Uint64()), true
	}
	delay, stop := c.pol.Next(s, d, c.rng.Uint64())
	if stop == policy.Continue && c.r.budget != nil && !c.r.budget.Allow() {
		stop = policy.StopBudget
	}
	return delay, stop
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

func (c *call) fails(f Failure) {
	if c.nfail < inlineFailures {
		c.inline[c.nfail] = f
	} else {
		c.spill = append(c.spill, f)
	}
	c.nfail++
}

func (c *call) lastFailure() *Failure {
	if c.nfail <= inlineFailures {
		return &c.inline[c.nfail-1]
	}
	return &c.spill[c.nfail-inlineFailures-1]
}

// failures returns the call's failures, each with its wall-clock time: now,
// less the monotonic time since the failure.
func (c *call) failures() []Failure {
	if c.nfail == 0 {
		return nil
	}
	n := min(c.nfail, inlineFailures)
	out := make([]Failure, 0, n+len(c.spill))
	out = append(append(out, c.inline[:n]...), c.spill...)
	now := time.Now()
	nowMono := now.Sub(epoch)
	for i := range out {
		out[i].At = now.Add(out[i].mono - nowMono)
	}
	return out
}

// emit sends e to the observer, with what the call knows: the attempts
// started, the time waited and elapsed, whether it is deferred.
func (c *call) emit(e observe.Event) {
	if c.r.obs == nil {
		return
	}
	if e.Started == 0 {
		e.Started = c.stats.Attempts
	}
	e.Waited, e.Elapsed, e.Deferred = c.stats.Waited, monoNow()-c.start, c.deferred()
	c.r.obs.Observe(c.ctx, e)
}

// end finishes the call: it tells the breaker around it how the call went,
// reports the Stats if asked, and returns nil or the *Error.
func (c *call) end(st *Stats) error {
	c.stopTimer()
	if c.r.breakers != nil {
		c.release(c.outcome())
	}
	if c.stats.Winner > 0 && st == nil {
		return nil // nobody asked for Elapsed
	}
	c.stats.Elapsed = monoNow() - c.start
	if st != nil {
		*st = c.stats
	}
	if c.stats.Winner > 0 {
		return nil
	}
	return c.fail()
}

// release tells the breaker around the call how it went, once: a call that
// panics after it told the breaker (in an observer) must not count twice.
func (c *call) release(outcome error) {
	p := c.permit
	c.permit = breaker.Permit{}
	p.Done(c.ctx, outcome)
}

// outcome is what the breaker around the call counts: a success, or the
// last failure's outcome, or nothing for a call the caller cancelled or that
// sent nothing.
func (c *call) outcome() error {
	switch {
	case c.stats.Winner > 0:
		return nil
	case c.stats.Attempts == 0 || c.stop == policy.StopCanceled || c.lastErr == nil:
		return breaker.Excluded
	}
	return breakerOutcome(c.lastErr, c.last)
}

// fail returns the call's *Error, and tells the observer.
func (c *call) fail() error {
	reason := stopErrors[c.stop]
	if c.stop == policy.StopCanceled {
		reason = context.Cause(c.ctx)
	}
	last := c.lastErr
	if last == nil {
		last = c.refusal
	}
	e := &Error{Stats: c.stats, Stop: c.stop, Reason: reason, Last: last, Decision: c.last, RetryAfter: c.retryAfter, Failures: c.failures()}
	if c.r.obs != nil {
		c.emit(observe.Event{Kind: observe.GaveUp, Attempt: c.stats.Attempts, Err: e, Decision: c.last, Stop: c.stop})
	}
	return e
}
