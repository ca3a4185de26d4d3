package retry

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// Hedger runs calls through a Retrier's pipeline with hedging: when an
// attempt has not finished after the delay d gives, another attempt starts
// alongside it, up to maxInFlight at once. The first success wins; the
// others' contexts are cancelled, and the call returns once they have
// returned, so no attempt outlives its call. Build it with NewHedger; it is
// immutable and safe for concurrent use.
//
// Every stage of the Retrier applies to every attempt, hedges included (see
// the package documentation): MaxAttempts counts hedges; MaxElapsed, the
// context's deadline and the retry budget still bound the call (each hedge
// asks the budget, and is recorded as a retry); a hedge to a key cooling
// down, or that the breaker (per attempt) or the limiter would not let go
// at once, is not sent (observe.HedgeSkipped), and no hedge follows until
// another attempt starts. A retryable failure starts the next attempt at
// once rather than after a backoff; a server's wait (Retry-After, a gRPC
// pushback) is still waited, and delays the next hedge too. A failure the
// classifier says is permanent ends the call and cancels the attempts in
// flight; a stop that only forbids new attempts — MaxAttempts, a class's
// limit, MaxElapsed, the deadline, the budget, the limiter, the breaker, or
// the server saying not to retry — lets those in flight still win.
//
// Hedging runs the operation more than once at the same time: a call that is
// neither idempotent (Idempotent) nor keyed (WithIdempotencyKey) makes its
// attempts one at a time, as the Retrier alone would, and so does a call
// under a SingleAttempt context.
//
// Only the winner's AttemptDone event has a nil Err: a loser's carries the
// error it returned, or context.Canceled if it succeeded after the winner
// (its result is discarded). An attempt that panics ends the call: the
// others are cancelled, and once they have returned the panic is raised
// again on the caller's goroutine, whichever goroutine it happened on. An
// attempt that exits its goroutine (runtime.Goexit, as t.FailNow does) ends
// the call the same way, and the caller's goroutine exits too.
//
// The first attempt runs on the calling goroutine; a hedge starts on a
// goroutine of its own when its delay passes, so a call that succeeds before
// the delay starts no goroutine. A call's state and timer are kept for reuse
// by the Hedger's later calls: under testing/synctest, build the Hedger inside
// the bubble that uses it.
type Hedger struct {
	r      *Retrier
	p      policy.Policy // the Retrier's, without backoff
	delay  hedge.Delay
	max    int
	learns bool // the delay is not Fixed: it is told each success's latency
	err    error
	pool   sync.Pool // *hedger
}

// NewHedger returns a Hedger that runs calls through r with hedging: d
// gives the hedging delay (hedge.Fixed, or hedge.NewAdaptive to follow the
// latencies), and at most maxInFlight attempts (at least 2) run at once. It
// returns an *InvalidError for a nil or refused r, a nil or invalid d, or a
// maxInFlight below 2, and then a Hedger that fails every call with it.
func NewHedger(r *Retrier, d hedge.Delay, maxInFlight int) (*Hedger, error) {
	r, err := r.ready()
	if err != nil {
		return &Hedger{err: err}, err
	}
	if bad := checkHedging(d, maxInFlight); bad != nil {
		return &Hedger{err: bad}, bad
	}
	p := r.p
	p.Backoff, p.Jitter = backoff.Constant(0), jitter.None{}
	_, fixed := d.(hedge.Fixed)
	return &Hedger{r: r, p: p, delay: d, max: maxInFlight, learns: !fixed}, nil
}

func checkHedging(d hedge.Delay, maxInFlight int) *InvalidError {
	if err := check("NewHedger", d); err != nil {
		return err
	}
	if maxInFlight < 2 {
		return invalid("NewHedger", maxInFlight, "at most in flight must be at least 2: an attempt and its hedge")
	}
	return nil
}

// Do is Run without the Stats.
func (h *Hedger) Do(ctx context.Context, op func(context.Context) error) error {
	return h.run(ctx, op, nil)
}

// Run calls op, with hedging, until an attempt succeeds or the policy says
// stop, and returns the call's Stats and nil or an *Error. op may be called
// by several goroutines at once. It is moved to the heap (an allocation if it
// is a closure): the attempts running on other goroutines call it.
func (h *Hedger) Run(ctx context.Context, op func(context.Context) error) (Stats, error) {
	var st Stats
	err := h.run(ctx, op, &st)
	return st, err
}

// HedgeValue is Value with hedging: it returns the value of the attempt
// that won, the call's Stats, and nil or an *Error.
func HedgeValue[T any](ctx context.Context, h *Hedger, op func(context.Context) (T, error)) (T, Stats, error) {
	var v T
	if op == nil {
		return v, Stats{}, invalid("op", nil, "must not be nil")
	}
	var mu sync.Mutex
	set := false
	st, err := h.Run(ctx, func(ctx context.Context) error {
		x, err := op(ctx)
		if err == nil {
			mu.Lock()
			if !set {
				v, set = x, true
			}
			mu.Unlock()
		}
		return err
	})
	return v, st, err
}

func (h *Hedger) run(ctx context.Context, op func(context.Context) error, st *Stats) (err error) {
	switch {
	case h == nil:
		return invalid("Hedger", nil, "must not be nil (build one with retry.NewHedger)")
	case h.err != nil:
		return h.err
	case h.r == nil:
		return invalid("Hedger", "the zero Hedger", "build one with retry.NewHedger")
	}
	if err := checkCall(ctx, op); err != nil {
		return err
	}
	if !h.p.Idempotent && !keyed(ctx) || nestedInOutermost(ctx) {
		return h.r.run(ctx, op, st) // may not run twice at once: one attempt at a time
	}
	x := h.get()
	x.c.init(h.r, ctx, &h.p)
	x.op = op
	ended := false
	defer func() { x.leave(ended) }()
	err = x.call(st)
	ended = true
	return err
}

func keyed(ctx context.Context) bool { _, ok := IdempotencyKey(ctx); return ok }

func (h *Hedger) get() *hedger {
	if x, ok := h.pool.Get().(*hedger); ok {
		return x
	}
	x := &hedger{h: h}
	x.cond.L = &x.mu
	return x
}

// slot is an attempt in flight.
type slot struct {
	n      int
	start  time.Duration
	cancel context.CancelFunc
	permit breaker.Permit
}

// hedger schedules the attempts of one hedged call over its call state, from
// the goroutines running them: the caller's, and one per hedge. Every field
// after mu, and c once the first attempt has started, is guarded by it.
// Whichever goroutine an attempt ran on handles its result, and runs the
// next attempt when a failure calls for one.
type hedger struct {
	h     *Hedger
	op    func(context.Context) error
	delay time.Duration // the call's hedging delay

	mu         sync.Mutex
	c          call
	cond       sync.Cond // signalled when the last attempt ends, or the timer lets go
	timer      *time.Timer
	armed      bool          // the timer is set, or its function about to run
	due        time.Duration // when the next hedge may start; 0: none
	slots      []slot
	pending    int                // goroutines outside the lock before an attempt: a wait, a gate
	live       context.Context    // ends with the call, or the caller's context; made for a wait
	endLive    context.CancelFunc // ends live
	noMore     bool               // no attempt starts; those in flight may still win
	over       bool               // a winner, or the call failed: those in flight are cancelled
	panicValue any                // what an attempt panicked with: raised again on the caller's goroutine
	exited     bool               // an attempt exited its goroutine: so does the caller's
}

// call runs the call: the stages before its first attempt, on the caller's
// goroutine, then the attempts, then its end.
func (x *hedger) call(st *Stats) error {
	c := &x.c
	if !c.open() {
		return c.end(st)
	}
	a, ok := c.admit()
	if !ok {
		return c.end(st)
	}
	x.delay = x.h.delay.Next()
	x.mu.Lock()
	n, actx := x.begin(false, monoNow(), a.permit)
	x.mu.Unlock()
	x.work(n, actx)
	x.wait()
	if x.panicValue != nil {
		panic(x.panicValue)
	}
	if x.exited {
		runtime.Goexit()
	}
	return c.end(st)
}

// begin starts attempt number n and arms the timer for its hedge.
func (x *hedger) begin(hedge bool, now time.Duration, p breaker.Permit) (int, context.Context) {
	c := &x.c
	c.stats.Attempts++
	n := c.stats.Attempts
	if hedge {
		c.stats.Hedges++
	}
	var actx context.Context
	var cancel context.CancelFunc
	if t := c.pol.AttemptTimeout; t > 0 {
		actx, cancel = context.WithTimeout(c.opCtx, t)
	} else {
		actx, cancel = context.WithCancel(c.opCtx)
	}
	x.slots = append(x.slots, slot{n, now, cancel, p})
	if len(x.slots) < x.h.max && n < c.pol.Attempts() {
		x.arm(now, now+x.delay)
	}
	return n, actx
}

// work runs attempt n, and the attempts that follow its failures, until the
// call needs no more of this goroutine.
func (x *hedger) work(n int, actx context.Context) {
	running := n
	defer func() {
		if running > 0 { // the attempt exited its goroutine
			x.abort(running, nil, true)
		}
	}()
	for n > 0 {
		err, p, panicked := x.try(actx)
		running = 0
		if panicked {
			x.abort(n, p, false)
			return
		}
		x.mu.Lock()
		n, actx = x.after(n, err)
		x.mu.Unlock()
		running = n
	}
}

// try calls the operation, and returns what it panicked with, if it did.
func (x *hedger) try(actx context.Context) (err error, p any, panicked bool) {
	panicked = true
	defer func() {
		if panicked {
			p = recover()
		}
	}()
	err = x.op(actx)
	panicked = false
	return err, nil, false
}

// abort ends the call after attempt n panicked with p, or exited its
// goroutine: the others are cancelled, and once they have returned the
// caller's goroutine does the same (see call).
func (x *hedger) abort(n int, p any, exited bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.release(n)
	x.c.tell(n, budget.Other, limit.Outcome{Result: limit.Other}, s.permit, errAborted)
	if p != nil && x.panicValue == nil {
		x.panicValue = p
	}
	x.exited = x.exited || exited
	x.halt(policy.StopPermanent, true)
	x.settle()
}

// after handles attempt n's result, and returns the next attempt this
// goroutine runs, if any.
func (x *hedger) after(n int, err error) (int, context.Context) {
	wait, again := x.done(n, err)
	if !again {
		x.settle()
		return 0, nil
	}
	return x.again(wait)
}

// done takes attempt n's result: it reports whether another attempt follows
// its failure, and after what wait.
func (x *hedger) done(n int, err error) (time.Duration, bool) {
	c := &x.c
	s, oldest := x.release(n), x.oldest()
	lost := err == nil && c.stats.Winner > 0 || err != nil && x.over
	d := c.record(n, err, s.permit, lost)
	switch {
	case err == nil && !lost:
		x.win(n, monoNow()-min(oldest, s.start))
		return 0, false
	case lost || x.noMore:
		return 0, false
	}
	delay, stop := c.next(n, err, d)
	if stop != policy.Continue {
		x.halt(stop, !waitable(stop, err))
		return 0, false
	}
	if d.RetryAfter > 0 && x.due > 0 { // the server's wait delays the next hedge too
		x.due = max(x.due, c.decided+delay)
	}
	return delay, true
}

// waitable reports a stop that forbids new attempts but leaves those in
// flight a chance to win; the others end the call.
func waitable(s policy.Stop, err error) bool {
	switch s {
	case policy.StopAttempts, policy.StopClassLimit, policy.StopElapsed, policy.StopDeadline, policy.StopBudget,
		policy.StopLimited, policy.StopOpen, policy.StopWaitTooLong:
		return true
	case policy.StopPermanent: // the server's "do not retry" is about new attempts (gRFC A6)
		return classify.Server(err).Verdict == classify.Stop
	}
	return false
}

// again readies the attempt that follows a failure: it waits the server's
// wait and the stages, with the lock released, then starts the attempt if
// the call still has room for it.
func (x *hedger) again(d time.Duration) (int, context.Context) {
	idle, live := len(x.slots) == 0, x.alive()
	x.pending++
	x.mu.Unlock()
	slept := d <= 0 || wait(live, d)
	a := admission{stop: policy.StopCanceled}
	if slept {
		a = x.c.gate(live, false)
	}
	x.mu.Lock()
	x.pending--
	if slept && idle {
		x.c.stats.Waited += d
	}
	switch {
	case a.stop == policy.Continue && x.room():
		x.c.admitted(a, idle)
		return x.begin(false, monoNow(), a.permit)
	case a.stop == policy.Continue: // ended, or hedges took what was left meanwhile
		x.unused(a)
	case !x.over && x.c.ctx.Err() != nil:
		x.halt(policy.StopCanceled, true)
	case !x.over:
		x.halt(a.stop, a.stop == policy.StopCanceled) // those in flight may still win
		if x.c.retryAfter == 0 {
			x.c.retryAfter = a.retryAfter
		}
	}
	x.settle()
	return 0, nil
}

// unused gives back what the stages granted an attempt that the call,
// changed meanwhile, will not send: the limiter and the breaker hear of it.
func (x *hedger) unused(a admission) {
	if x.c.r.limiter != nil {
		x.c.r.limiter.Record(x.c.ctx, limit.Outcome{Result: limit.Other})
	}
	a.permit.Done(x.c.ctx, breaker.Excluded)
}

// fire is the timer's function: it starts a hedge, and runs it on the
// timer's goroutine.
func (x *hedger) fire() {
	x.mu.Lock()
	x.armed = false
	n, actx := x.hedge()
	if n == 0 {
		x.settle()
		x.cond.Broadcast()
	}
	x.mu.Unlock()
	x.work(n, actx)
}

// hedge starts a hedge if the call, the policy and the stages allow one,
// and returns its number, or 0.
func (x *hedger) hedge() (int, context.Context) {
	c := &x.c
	if x.over || x.noMore || x.due == 0 || len(x.slots) == 0 {
		return 0, nil
	}
	now := monoNow()
	if now < x.due {
		x.armed = true
		x.timer.Reset(x.due - now)
		return 0, nil
	}
	switch {
	case !x.room(), c.ctx.Err() != nil, c.pol.MaxElapsed > 0 && now-c.start > c.pol.MaxElapsed:
		return 0, nil
	case c.r.budget != nil && !c.r.budget.Allow():
		x.skipped(policy.StopBudget)
		return 0, nil
	}
	a := x.gateHedge()
	switch {
	case a.stop != policy.Continue:
		x.skipped(a.stop)
		return 0, nil
	case !x.room():
		x.unused(a)
		return 0, nil
	}
	n, actx := x.begin(true, monoNow(), a.permit)
	c.emit(observe.Event{Kind: observe.HedgeStarted, Attempt: n, Delay: x.delay})
	return n, actx
}

// gateHedge runs the stages for a hedge, with the lock released when there
// is a stage to ask: a limiter may make a round trip (the fleet's, in
// limit/redis), and the attempts in flight must not wait for it.
func (x *hedger) gateHedge() admission {
	c := &x.c
	if c.r.cooldowns == nil && c.r.limiter == nil && !c.r.breakers.PerAttempt() {
		return admission{}
	}
	live := x.alive()
	x.pending++
	x.mu.Unlock()
	a := c.gate(live, true)
	x.mu.Lock()
	x.pending--
	return a
}

// skipped reports a hedge that was due and not sent.
func (x *hedger) skipped(stop policy.Stop) {
	x.c.emit(observe.Event{Kind: observe.HedgeSkipped, Attempt: x.c.stats.Attempts + 1, Stop: stop, Delay: x.delay})
}

// room reports whether the call may start another attempt: it goes on, its
// policy allows one more, and it has a slot free.
func (x *hedger) room() bool {
	return !x.over && !x.noMore && x.c.stats.Attempts < x.c.pol.Attempts() && len(x.slots) < x.h.max
}

// release ends attempt n's slot and returns it.
func (x *hedger) release(n int) slot {
	for i, s := range x.slots {
		if s.n == n {
			s.cancel()
			x.slots = append(x.slots[:i], x.slots[i+1:]...)
			return s
		}
	}
	return slot{}
}

// oldest returns when the oldest attempt still in flight started; past the
// end of time when none is.
func (x *hedger) oldest() time.Duration {
	oldest := time.Duration(1<<63 - 1)
	for _, s := range x.slots {
		oldest = min(oldest, s.start)
	}
	return oldest
}

// win makes attempt n the winner, unless another already won, and cancels
// the others.
func (x *hedger) win(n int, latency time.Duration) {
	if x.c.stats.Winner > 0 {
		return
	}
	x.c.stats.Winner, x.c.stop = n, policy.Continue
	if x.h.learns {
		x.h.delay.Observe(latency)
	}
	x.finish()
}

// halt records why the call stops; fatal ends it at once, cancelling the
// attempts in flight.
func (x *hedger) halt(stop policy.Stop, fatal bool) {
	if x.c.stop == policy.Continue && x.c.stats.Winner == 0 {
		x.c.stop = stop
	}
	x.noMore = true
	x.disarm()
	if fatal {
		x.finish()
	}
}

// finish ends the call: no attempt starts, those in flight are cancelled.
func (x *hedger) finish() {
	x.over = true
	x.disarm()
	for _, s := range x.slots {
		s.cancel()
	}
	if x.endLive != nil {
		x.endLive()
		x.live, x.endLive = nil, nil
	}
}

// settle ends the call when nothing is left running or waiting, and wakes
// the caller.
func (x *hedger) settle() {
	if len(x.slots) > 0 || x.pending > 0 {
		return
	}
	if !x.over {
		if x.c.stop == policy.Continue && x.c.stats.Winner == 0 {
			x.c.stop = policy.StopAttempts
		}
		x.finish()
	}
	x.cond.Broadcast()
}

// alive returns a context that ends when the call does, for a wait before an
// attempt: it is made at the call's first such wait, and ended by finish.
func (x *hedger) alive() context.Context {
	if x.live == nil {
		x.live, x.endLive = context.WithCancel(x.c.ctx)
	}
	return x.live
}

// arm sets the timer to start a hedge at due. Due times only grow, so a
// timer already set fires early at worst, and its function sets it again.
func (x *hedger) arm(now, due time.Duration) {
	x.due = due
	if x.armed {
		return
	}
	x.armed = true
	if x.timer == nil {
		x.timer = time.AfterFunc(due-now, x.fire)
		return
	}
	x.timer.Reset(due - now)
}

// disarm cancels the coming hedge. If the timer's function is already
// under way, armed stays set until it has seen there is nothing to do.
func (x *hedger) disarm() {
	x.due = 0
	if x.armed && x.timer.Stop() {
		x.armed = false
	}
}

// wait returns once no attempt runs and the timer has let go.
func (x *hedger) wait() {
	x.mu.Lock()
	for len(x.slots) > 0 || x.pending > 0 || x.armed {
		x.cond.Wait()
	}
	x.mu.Unlock()
}

// leave ends the caller's part in the call, and keeps its state for a later
// call. A caller that did not return normally — an attempt panicked, or
// exited its goroutine — first ends the call, waits for the others, and
// tells the breaker around the call that it failed: a half-open breaker
// would otherwise wait for its probe forever.
func (x *hedger) leave(ended bool) {
	if !ended {
		x.mu.Lock()
		x.halt(policy.StopPermanent, true)
		x.settle()
		x.mu.Unlock()
		x.wait()
		x.c.release(errAborted)
	}
	if x.endLive != nil {
		x.endLive()
	}
	clear(x.slots[:cap(x.slots)])
	x.slots, x.op, x.live, x.endLive, x.due = x.slots[:0], nil, nil, nil, 0
	x.noMore, x.over, x.panicValue, x.exited = false, false, nil, false
	x.c = call{}
	x.h.pool.Put(x)
}
