package retry

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
)

// ErrHedgeUnsafe: the Retrier hedges (WithHedging), which runs the operation
// more than once at the same time, and the call is neither idempotent nor
// keyed. Nothing was run.
var ErrHedgeUnsafe = errors.New("hedging runs the operation more than once at a time; " +
	"refused because it is neither idempotent nor keyed (mark it retry.Idempotent, or give the call an idempotency key)")

// WithHedging makes the Retrier's Hedge and HedgeValue calls hedge (its Do,
// Run and Value refuse to run: see Hedge). When an attempt has not finished
// after the delay d gives, another attempt starts alongside it, up to
// maxInFlight attempts at once (at least 2). The first success wins; the
// others' contexts are cancelled, and the call returns once they have
// returned, so no attempt outlives its call. A retryable failure starts the
// next attempt at once rather than after a backoff (a server's Retry-After is
// still waited). MaxAttempts counts hedges too; MaxElapsed, the context's
// deadline and the retry budget (each hedge asks Allow, and is recorded as a
// retry) still bound the call. Stats.Hedges and Stats.Winner say what
// happened, and hooks receive a HedgeStarted event. A rate limiter
// (WithLimiter) is asked for every attempt: for the first and for one that
// follows a failure as in a call without hedging, and for a hedge without
// waiting — a hedge it cannot let go at once is not sent, and the next hedge
// may come only after another attempt starts. Only the winner's AttemptDone
// event has a nil Err: a loser's carries the error it returned, or
// context.Canceled if it succeeded after the winner (its result is
// discarded), so a hook counts one success per call; the winner's Started is
// the call's attempts. An attempt that panics ends the call: the others are
// cancelled, and once they have returned the panic is raised again on the
// caller's goroutine, whichever goroutine it happened on.
//
// Hedging is for work that may run twice: a call that is neither idempotent
// (Idempotent) nor keyed (WithIdempotencyKey) fails with ErrHedgeUnsafe
// before its first attempt. Under a SingleAttempt context, a call makes one
// attempt and does not hedge.
//
// The first attempt runs on the calling goroutine; a hedge starts on a
// goroutine of its own when its delay passes, so a call that succeeds before
// the delay starts no goroutine. Its timer is kept for reuse by the
// Retrier's later calls: under testing/synctest, build the Retrier inside
// the bubble that uses it.
func WithHedging(d hedge.Delay, maxInFlight int) Option {
	return func(c *config) *InvalidError {
		if err := check("WithHedging", d); err != nil {
			return err
		}
		if maxInFlight < 2 {
			return invalid("WithHedging", maxInFlight, "at most in flight must be at least 2: an attempt and its hedge")
		}
		c.hedging = hedgeConfig{delay: d, max: maxInFlight}
		return nil
	}
}

type hedgeConfig struct {
	delay hedge.Delay
	max   int
}

// build returns the Retrier's hedging, or nil when WithHedging was not given.
func (hc hedgeConfig) build(p policy.Policy) *hedging {
	if hc.delay == nil {
		return nil
	}
	// A failure starts the next attempt at once: the policy decides whether
	// there is one, with no backoff; a server's Retry-After still counts.
	p.Backoff, p.Jitter = backoff.Constant(0), jitter.None{}
	_, fixed := hc.delay.(hedge.Fixed)
	return &hedging{hedgeConfig: hc, p: p, learns: !fixed}
}

// hedging is a Retrier's hedging configuration, and its calls' state kept
// for reuse: a hedged call whose first attempt succeeds before the delay
// allocates only its attempt's cancellable context.
type hedging struct {
	hedgeConfig
	p      policy.Policy
	learns bool      // the delay is not Fixed: it is told each success's latency
	pool   sync.Pool // *hedger
}

func (hg *hedging) get() *hedger {
	if h, ok := hg.pool.Get().(*hedger); ok {
		return h
	}
	h := &hedger{hg: hg}
	h.cond.L = &h.mu
	return h
}

// put keeps h for a later call; h has no attempt running, no pending timer.
func (hg *hedging) put(h *hedger) {
	if h.endLive != nil { // finish ends it; this is for safety's sake
		h.endLive()
		h.live, h.endLive = nil, nil
	}
	clear(h.slots[:cap(h.slots)])
	clear(h.failures)
	h.op, h.opCtx, h.r, h.ctx, h.due, h.slots, h.failures = nil, nil, nil, nil, 0, h.slots[:0], h.failures[:0]
	h.stats, h.last, h.retryAfter, h.dc = Stats{}, classify.Decision{}, 0, nil
	h.noMore, h.over, h.reason, h.lastErr, h.panicValue = false, false, nil, nil, nil
	hg.pool.Put(h)
}

// slot is an attempt in flight.
type slot struct {
	n      int
	start  time.Duration
	cancel context.CancelFunc
}

// hedger is the state of one hedged call, shared by the goroutines running
// its attempts: the caller's, and one per hedge. Every field after mu is
// guarded by it. Whichever goroutine an attempt ran on handles its result,
// and runs the next attempt when a failure calls for one.
type hedger struct {
	hg    *hedging
	op    func(context.Context) error
	opCtx context.Context // what each attempt's context derives from
	delay time.Duration   // the call's hedging delay

	r     *Retrier
	ctx   context.Context // the caller's
	start time.Duration

	mu         sync.Mutex
	cond       sync.Cond // signalled when the last attempt ends, or the timer lets go
	stats      Stats
	last       classify.Decision // the last failure's
	retryAfter time.Duration     // a server wait returned instead of waited
	dc         *call             // the policy's state, made at the first failure
	timer      *time.Timer
	armed      bool          // the timer is set, or its function about to run
	due        time.Duration // when the next hedge may start; 0: none
	slots      []slot
	pending    int                // goroutines waiting before an attempt: a Retry-After, the limiter
	live       context.Context    // ends with the call, or the caller's context; made for a wait
	endLive    context.CancelFunc // ends live
	noMore     bool               // a reason to stop: attempts in flight may still win
	over       bool               // a winner, or the call failed: no attempt starts
	reason     error
	panicValue any // what an attempt panicked with: re-panicked on the caller's goroutine
	lastErr    error
	failures   []Failure
}

// Hedge is Run with hedging (see WithHedging): op may be called by several
// goroutines at once. On a Retrier without WithHedging, and under a
// SingleAttempt context, it is Run.
//
// Do, Run and Value do not hedge, and fail with an *InvalidError on a
// Retrier WithHedging: the operation they are given may live on the
// caller's stack, where another goroutine must not call it, and keeping it
// there is what makes them allocate nothing. Hedge's operation is moved to
// the heap once (an allocation if it is a closure).
func (r *Retrier) Hedge(ctx context.Context, op func(context.Context) error) (Stats, error) {
	r, err := r.ready()
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	if r.hedging == nil || ctx != nil && nestedInOutermost(ctx) {
		err = r.run(ctx, op, &st)
	} else {
		err = r.hedge(ctx, op, &st)
	}
	return st, err
}

// Hedging reports whether the Retrier hedges (WithHedging), so that code
// handed a Retrier — a transport, say — knows to call Hedge. A nil Retrier
// does not.
func (r *Retrier) Hedging() bool { return r != nil && r.hedging != nil }

// HedgeValue is Value with hedging (see Hedge): it returns the value of the
// first attempt that succeeded, or the zero value if none did.
func HedgeValue[T any](ctx context.Context, r *Retrier, op func(context.Context) (T, error)) (T, Stats, error) {
	var v T
	if op == nil {
		return v, Stats{}, invalid("HedgeValue", nil, "the operation must not be nil")
	}
	var mu sync.Mutex
	set := false
	st, err := r.Hedge(ctx, func(ctx context.Context) error {
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

// useHedge refuses a call that would run a hedging Retrier's operation
// where it cannot hedge.
func useHedge(name string) error {
	return invalid(name, "a Retrier WithHedging", "call Hedge or HedgeValue, whose operation may run on several goroutines at once")
}

// hedge checks the call as run does, then runs it with hedging.
func (r *Retrier) hedge(ctx context.Context, op func(context.Context) error, st *Stats) error {
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
	return r.hedged(ctx, op, st)
}

// hedged runs a call with hedging (see WithHedging).
func (r *Retrier) hedged(ctx context.Context, op func(context.Context) error, st *Stats) error {
	if !r.p.Idempotent {
		if _, ok := IdempotencyKey(ctx); !ok {
			return r.notStarted(ctx, ErrHedgeUnsafe, st)
		}
	}
	start := monoNow()
	now := start
	if r.limiter != nil {
		if err := r.admitFirst(ctx, start); err != nil {
			return r.notStarted(ctx, err, st)
		}
		now = monoNow() // the hedging delay runs from the attempt's start
	}
	h := r.hedging.get()
	defer r.hedging.put(h)
	h.op, h.opCtx, h.delay = op, ctx, r.hedging.delay.Next()
	if r.outermost {
		h.opCtx = SingleAttempt(ctx)
	}
	h.r, h.ctx, h.start = r, ctx, start
	h.mu.Lock()
	n, actx := h.begin(false, now)
	h.mu.Unlock()
	h.work(n, actx)
	return h.end(st)
}

// begin starts attempt number n and arms the timer for its hedge.
func (h *hedger) begin(hedge bool, now time.Duration) (int, context.Context) {
	h.stats.Attempts++
	n := h.stats.Attempts
	if hedge {
		h.stats.Hedges++
	}
	var actx context.Context
	var cancel context.CancelFunc
	if t := h.r.p.AttemptTimeout; t > 0 {
		actx, cancel = context.WithTimeout(h.opCtx, t)
	} else {
		actx, cancel = context.WithCancel(h.opCtx)
	}
	h.slots = append(h.slots, slot{n, now, cancel})
	if len(h.slots) < h.hg.max && n < h.r.p.Attempts() {
		h.arm(now, now+h.delay)
	}
	return n, actx
}

// arm sets the timer to start a hedge at due. Due times only grow, so a
// timer already set fires early at worst, and its function sets it again.
func (h *hedger) arm(now, due time.Duration) {
	h.due = due
	if h.armed {
		return
	}
	h.armed = true
	if h.timer == nil {
		h.timer = time.AfterFunc(due-now, h.fire)
		return
	}
	h.timer.Reset(due - now)
}

// disarm cancels the coming hedge. If the timer's function is already
// under way, armed stays set until it has seen there is nothing to do.
func (h *hedger) disarm() {
	h.due = 0
	if h.armed && h.timer.Stop() {
		h.armed = false
	}
}

// fire is the timer's function: it starts a hedge, and runs it on the
// timer's goroutine.
func (h *hedger) fire() {
	h.mu.Lock()
	h.armed = false
	n, actx := h.hedge()
	if n == 0 {
		h.cond.Broadcast()
	}
	h.mu.Unlock()
	h.work(n, actx)
}

// hedge starts a hedge if the call, the policy and the budget allow one, and
// returns its number, or 0.
func (h *hedger) hedge() (int, context.Context) {
	if h.over || h.noMore || h.due == 0 || len(h.slots) == 0 {
		return 0, nil
	}
	now := monoNow()
	if now < h.due {
		h.armed = true
		h.timer.Reset(h.due - now)
		return 0, nil
	}
	p := &h.r.p
	switch {
	case len(h.slots) >= h.hg.max, h.stats.Attempts >= p.Attempts(), h.ctx.Err() != nil,
		p.MaxElapsed > 0 && now-h.start > p.MaxElapsed,
		h.r.budget != nil && !h.r.budget.Allow():
		return 0, nil
	}
	if h.r.limiter != nil {
		// A hedge is optional: one the limiter cannot let go now is not
		// sent, and the timer is not set again (see WithLimiter).
		if !h.admitHedge() {
			return 0, nil
		}
		now = monoNow() // the question may have made a round trip
	}
	n, actx := h.begin(true, now)
	h.emit(Event{Kind: HedgeStarted, Attempt: n, Started: n, Delay: h.delay, Waited: h.stats.Waited, Elapsed: now - h.start})
	return n, actx
}

// work runs attempt n, and the attempts that follow its failures, until the
// call needs no more of this goroutine.
func (h *hedger) work(n int, actx context.Context) {
	for n > 0 {
		p, err := h.try(actx)
		h.mu.Lock()
		if p != nil {
			h.panicked(n, p)
			h.mu.Unlock()
			return
		}
		wait, again := h.done(n, err)
		if again && wait > 0 {
			again = h.sleep(wait)
		}
		if again && h.r.limiter != nil {
			again = h.admit()
		}
		n = 0
		if again {
			n, actx = h.begin(false, monoNow())
		} else {
			h.settle()
		}
		h.mu.Unlock()
	}
}

// try calls the operation, and returns what it panicked with, if it did.
func (h *hedger) try(actx context.Context) (p any, err error) {
	defer func() { p = recover() }()
	return nil, h.op(actx)
}

// panicked ends the call after attempt n panicked with p: the others are
// cancelled, and once they have returned the caller's goroutine panics
// with p (end), whichever goroutine the attempt ran on.
func (h *hedger) panicked(n int, p any) {
	h.release(n)
	h.recordLimit(limit.Outcome{Result: limit.Other})
	if h.panicValue == nil {
		h.panicValue = p
	}
	h.stop(errPanicked, true)
	h.settle()
}

// errPanicked is the reason of a call whose attempt panicked; the caller
// never sees it, only the panic.
var errPanicked = errors.New("an attempt panicked")

// done handles attempt n's result: it reports whether another attempt
// follows, and after what wait.
func (h *hedger) done(n int, err error) (time.Duration, bool) {
	var now time.Duration // read only when needed: a clock read is 20-70ns
	if err != nil || h.r.hook != nil || h.hg.learns {
		now = monoNow()
	}
	oldest := h.release(n)
	if h.r.hook != nil {
		h.r.hook(h.ctx, Event{Kind: AttemptDone, Attempt: n, Started: h.stats.Attempts, Err: h.reported(err),
			Waited: h.stats.Waited, Elapsed: now - h.start})
	}
	switch {
	case err == nil:
		h.win(n, now-oldest)
		return 0, false
	case h.stats.Winner > 0: // a loser, cancelled
		h.record(n, budget.Other)
		h.recordLimit(limit.Outcome{Result: limit.Other})
		return 0, false
	}
	return h.failed(n, err, now)
}

// reported is the error an AttemptDone reports for an attempt that
// returned err: a success after another attempt won is a loser whose result
// was discarded, reported as context.Canceled, so that a hook sees one
// success per call.
func (h *hedger) reported(err error) error {
	if err == nil && h.stats.Winner > 0 {
		return context.Canceled
	}
	return err
}

// release ends attempt n's slot and returns when the oldest attempt in
// flight, n included, started.
func (h *hedger) release(n int) time.Duration {
	oldest, at := time.Duration(1<<63-1), 0
	for i, s := range h.slots {
		oldest = min(oldest, s.start)
		if s.n == n {
			at = i
		}
	}
	h.slots[at].cancel()
	h.slots = append(h.slots[:at], h.slots[at+1:]...)
	return oldest
}

// win makes attempt n the winner, unless another already won, and cancels
// the others.
func (h *hedger) win(n int, latency time.Duration) {
	h.record(n, budget.Succeeded)
	h.recordLimit(limit.Outcome{Result: limit.Accepted}) // a loser's success too: the server took it
	if h.stats.Winner > 0 {
		return
	}
	h.stats.Winner, h.reason = n, nil
	if h.hg.learns {
		h.hg.delay.Observe(latency)
	}
	h.finish()
}

// failed classifies attempt n's failure and asks the policy what follows.
func (h *hedger) failed(n int, err error, now time.Duration) (time.Duration, bool) {
	d := h.r.Classify(err)
	h.failures = append(h.failures, Failure{Attempt: n, Err: err, Decision: d, mono: now})
	switch {
	case h.over: // cancelled because the call stopped
		h.record(n, budget.Other)
		h.recordLimit(limit.Outcome{Result: limit.Other})
		return 0, false
	case h.ctx.Err() != nil:
		h.lastErr, h.last = err, d
		h.record(n, budget.Other)
		h.recordLimit(limit.OutcomeOf(err, d))
		h.stop(context.Cause(h.ctx), true)
		return 0, false
	}
	h.lastErr, h.last = err, d
	h.record(n, outcome(d))
	h.recordLimit(limit.OutcomeOf(err, d))
	if h.noMore {
		return 0, false
	}
	delay, stop := h.decide(d, now)
	if stop != policy.Continue {
		if d.RetryAfter > 0 && (stop == policy.StopWaitTooLong || stop == policy.StopDeadline) {
			h.retryAfter = d.RetryAfter
		}
		h.stop(stopErrors[stop], !waitable(stop))
		return 0, false
	}
	h.failures[len(h.failures)-1].Delay = delay
	h.emit(Event{Kind: RetryScheduled, Attempt: n, Started: h.stats.Attempts, Err: err, Decision: d, Delay: delay, Waited: h.stats.Waited, Elapsed: now - h.start})
	return delay, true
}

// decide asks the policy, with no backoff, and the budget what follows a
// failure classified d: the loop's own decision (call.decide), on a call
// made at the first failure so that a call that succeeds does not pay for it.
func (h *hedger) decide(d classify.Decision, now time.Duration) (time.Duration, policy.Stop) {
	if h.dc == nil {
		h.dc = &call{r: h.r, ctx: h.ctx, start: h.start, rng: jitter.NewRand(h.r.src.Uint64())}
	}
	h.dc.stats.Attempts, h.dc.decided = h.stats.Attempts, now
	return h.dc.decide(&h.hg.p, d)
}

// waitable reports a stop that forbids new attempts but leaves those in
// flight a chance to win; the others end the call.
func waitable(s policy.Stop) bool {
	switch s {
	case policy.StopAttempts, policy.StopElapsed, policy.StopDeadline, policy.StopBudget:
		return true
	}
	return false
}

// stop records why the call stops; now ends it at once, cancelling the
// attempts in flight.
func (h *hedger) stop(reason error, now bool) {
	if h.reason == nil {
		h.reason = reason
	}
	h.noMore = true
	h.disarm()
	if now {
		h.finish()
	}
}

// finish ends the call: no attempt starts, those in flight are cancelled.
func (h *hedger) finish() {
	h.over = true
	h.disarm()
	for _, s := range h.slots {
		s.cancel()
	}
	if h.endLive != nil {
		h.endLive()
		h.live, h.endLive = nil, nil
	}
}

// settle ends the call when nothing is left running or waiting, and wakes
// the caller.
func (h *hedger) settle() {
	if len(h.slots) > 0 || h.pending > 0 {
		return
	}
	if !h.over {
		if h.reason == nil {
			h.reason = ErrExhausted
		}
		h.finish()
	}
	h.cond.Broadcast()
}

// sleep waits out a server's Retry-After with h.mu held on entry and exit;
// it reports false if the call ended meanwhile.
func (h *hedger) sleep(d time.Duration) bool {
	live, idle := h.alive(), len(h.slots) == 0
	h.pending++
	h.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-live.Done():
	}
	t.Stop()
	h.mu.Lock()
	h.pending--
	if idle {
		h.stats.Waited += d
	}
	if !h.over && h.ctx.Err() != nil {
		h.stop(context.Cause(h.ctx), true)
	}
	return !h.over && !h.noMore
}

// alive returns a context that ends when the call does, for a wait before an
// attempt: it is made at the call's first such wait, and ended by finish.
func (h *hedger) alive() context.Context {
	if h.live == nil {
		h.live, h.endLive = context.WithCancel(h.ctx)
	}
	return h.live
}

// admit asks the limiter for the attempt that follows a failure, with h.mu
// held on entry and exit, as the plain loop does (call.admit), the wait
// counted as sleep counts it; it reports false if the limiter refused or the
// call ended meanwhile. A permission the call no longer uses is recorded as
// Other, so that the limiter hears of every permission it gave.
func (h *hedger) admit() bool {
	live, idle := h.alive(), len(h.slots) == 0
	h.pending++
	h.mu.Unlock()
	start := monoNow()
	ok := h.r.limiter.Acquire(live, h.r.maxLimitWait(h.ctx, h.start, start))
	now := monoNow()
	h.mu.Lock()
	h.pending--
	if idle {
		h.stats.Waited += now - start
	}
	switch {
	case !ok && h.over: // ended meanwhile, so was the wait
	case !ok && h.ctx.Err() != nil:
		h.stop(context.Cause(h.ctx), true)
	case !ok:
		h.stop(ErrLimited, false) // those in flight may still win
	case !h.room(): // ended, or hedges took what was left meanwhile
		h.recordLimit(limit.Outcome{Result: limit.Other})
		return false
	default:
		h.r.limiterWaited(h.ctx, Event{Attempt: h.stats.Attempts + 1, Started: h.stats.Attempts, Delay: now - start,
			Waited: h.stats.Waited, Elapsed: now - h.start})
	}
	return ok
}

// admitHedge asks the limiter to let a hedge go at once, with h.mu held on
// entry and exit but not while it asks: a limiter may make a round trip (the
// fleet's, in limit/redis), and the attempts in flight must not wait for it
// to end. It reports whether the hedge may start; a permission the call no
// longer has a use for, having changed meanwhile, is recorded as Other.
func (h *hedger) admitHedge() bool {
	live := h.alive()
	h.pending++
	h.mu.Unlock()
	ok := h.r.limiter.Acquire(live, 0)
	h.mu.Lock()
	h.pending--
	if ok && !h.room() {
		h.recordLimit(limit.Outcome{Result: limit.Other})
		ok = false
	}
	if !ok {
		h.settle() // the attempts in flight may have ended meanwhile
	}
	return ok
}

// room reports whether the call may start another attempt: it goes on,
// its policy allows one more, and it has a slot free.
func (h *hedger) room() bool {
	return !h.over && !h.noMore && h.stats.Attempts < h.r.p.Attempts() && len(h.slots) < h.hg.max
}

// recordLimit tells the limiter, if any, how an attempt it let go ended.
func (h *hedger) recordLimit(o limit.Outcome) {
	if l := h.r.limiter; l != nil {
		l.Record(h.ctx, o)
	}
}

// record tells the retry budget of attempt n's end; every attempt after the
// first, hedges included, counts as a retry.
func (h *hedger) record(n int, o budget.Outcome) {
	if b := h.r.budget; b != nil {
		b.Record(budget.Attempt{Retry: n > 1, Outcome: o})
	}
}

func (h *hedger) emit(e Event) {
	if h.r.hook != nil {
		h.r.hook(h.ctx, e)
	}
}

// end waits until no attempt runs and the timer has let go, then returns
// the call's result.
func (h *hedger) end(st *Stats) error {
	h.mu.Lock()
	for len(h.slots) > 0 || h.pending > 0 || h.armed {
		h.cond.Wait()
	}
	h.mu.Unlock()
	if h.panicValue != nil {
		panic(h.panicValue)
	}
	if h.stats.Winner > 0 && st == nil {
		return nil // nobody asked for Elapsed
	}
	h.stats.Elapsed = monoNow() - h.start
	if st != nil {
		*st = h.stats
	}
	if h.stats.Winner > 0 {
		return nil
	}
	return h.fail()
}

func (h *hedger) fail() error {
	failures := make([]Failure, len(h.failures))
	now := time.Now()
	nowMono := now.Sub(epoch)
	for i, f := range h.failures {
		f.At = now.Add(f.mono - nowMono)
		failures[i] = f
	}
	e := &Error{Stats: h.stats, Reason: h.reason, Last: h.lastErr, Decision: h.last, RetryAfter: h.retryAfter, Failures: failures}
	h.emit(Event{Kind: GaveUp, Attempt: h.stats.Attempts, Started: h.stats.Attempts, Err: e, Decision: h.last, Waited: h.stats.Waited, Elapsed: h.stats.Elapsed})
	return e
}

// logHedge logs a hedge at DEBUG: hedges are expected, a few per cent of
// calls, and worth seeing only when looking for them.
func logHedge(ctx context.Context, l *slog.Logger, e Event) {
	if l.Enabled(ctx, slog.LevelDebug) {
		l.LogAttrs(ctx, slog.LevelDebug, "retry: hedging: started another attempt alongside the one still running",
			slog.Int("attempt", e.Attempt),
			slog.Duration("delay", e.Delay),
			slog.Duration("elapsed", e.Elapsed))
	}
}
