package limit

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Adaptive defaults (see AdaptiveConfig).
const (
	defaultMinRate = 0.5                    // AWS minFillRate
	defaultBeta    = 0.9                    // of the measured accepted rate, not AWS's 0.7 of the sent rate
	defaultScale   = 0.4                    // AWS scaleConstant (CUBIC's C)
	defaultProbe   = 0.02                   // of the last accepted rate per second, where CUBIC grows as the cube
	defaultBurst   = 100 * time.Millisecond // tokens the bucket holds: this long at the current rate
	defaultHold    = 100 * time.Millisecond // a few round trips
	defaultWindow  = time.Second
)

// Patience is how long past its return to the last accepted rate an
// Adaptive limiter probes linearly, after a throttled answer, before it
// grows again as CUBIC does. After a timeout (AdaptiveConfig.Timeouts) it
// grows as CUBIC does at once.
const Patience = 10 * time.Second

// milli is the fixed-point scale of the token count: a thousandth of a token.
const milli = 1000

// AdaptiveConfig configures an Adaptive limiter. Zero fields take the
// defaults noted.
type AdaptiveConfig struct {
	// MinRate is the lowest rate, in attempts per second, a cut can set. 0
	// means 0.5 (the AWS SDKs' minimum fill rate).
	MinRate float64
	// Beta is the share of the server's measured accepted rate that a
	// throttled answer sets the rate to, in (0, 1). 0 means 0.9.
	Beta float64
	// Scale is CUBIC's C: how fast the rate grows back, in attempts per
	// second per second cubed. 0 means 0.4 (the AWS SDKs' value).
	Scale float64
	// Probe is how fast the rate grows beyond the accepted rate of the last
	// cut, once back at it: a share of that rate per second. 0 means 0.02.
	Probe float64
	// Burst is how many attempts an idle limiter lets through at once,
	// given as time at the current rate. 0 means 100ms.
	Burst time.Duration
	// Hold is how long after a cut further throttled answers are taken for
	// answers to attempts sent before it, and ignored. 0 means 100ms.
	Hold time.Duration
	// Window is how far back the accepted and sent rates are measured.
	// 0 means 1s.
	Window time.Duration
	// Timeouts takes an attempt that timed out (TimedOut) as a throttled
	// answer: a cut to Beta times the rate answered in time — next to
	// nothing while the dependency stalls. A dependency that stops
	// answering in time is overloaded more often than it is down, and the
	// attempts that time out are what keep it so: with Timeouts, a limiter
	// shared by the callers of a dependency sheds their load when it
	// stalls, instead of filling its queue with work whose clients have
	// given up. Once answers come in time again, the rate returns along
	// CUBIC's curve to what the dependency accepted before the timeouts
	// began, and grows past it as the cube at once (no Patience): a
	// capacity comes back, where a rate limit seldom moves. false (the
	// default): a timeout says nothing of the rate.
	Timeouts bool
	// Start, if set, is the rate, in attempts per second, at which the
	// limiter begins: it limits from the first attempt, and doubles its
	// rate every Window/10 while its callers use at least half of it and
	// nothing is throttled, as TCP's slow start does, until the first
	// throttled answer cuts it as usual. Without it, a burst of new
	// callers goes out at once: in bench/ratelimit, 1,000 callers sharing
	// a limit of 100 a second see 16% of their calls throttled, against
	// 1.3% with a Start of 10 (and 1.5% at 100 callers, 0.5% at 10, the
	// goodput at 99–101% of the limit). Pick a rate well below the limit
	// you expect: each doubling takes Window/10. 0 (the default): no limit
	// until the first throttled answer.
	Start float64
	// Now, if set, is the limiter's clock: a monotonic reading that never
	// goes back. It lets a simulation run the limiter in virtual time. The
	// default reads the monotonic clock.
	Now func() time.Duration
}

// Adaptive is a client-side rate limiter whose rate follows the server's:
// the AWS SDKs' adaptive retry mode (a token bucket whose fill rate follows
// a CUBIC curve), made to waste less of the server's capacity.
//
// It lets every attempt through until the first throttled answer (an HTTP
// 429). From then on attempts take tokens from a bucket filled at the
// current rate, in line: Acquire waits for the attempt's token, and a cut
// slows the tokens still to come, those already promised included. A
// throttled answer cuts the rate to Beta times the rate at which the server
// accepted attempts in the last Window — the server's own measure of its
// limit — where the AWS SDKs cut to 0.7 times the rate sent, which, sent
// above the limit, is still above it, and cut again on every throttled
// answer in flight. Throttled answers within Hold of a cut do not cut again.
// Without throttling the rate grows back along CUBIC's curve towards the
// accepted rate of the last cut, not before the server's Retry-After has
// passed; beyond it, by Probe a second, and as CUBIC's cube again only after
// Patience; never above twice the rate sent. No cut is made before Hold of
// measurement: a 429 at once says nothing of the server's rate. With
// Timeouts, a timeout is a throttled answer whose curve returns to the rate
// accepted before the timeouts began (see AdaptiveConfig.Timeouts).
//
// A caller that gives its ticket back (Return; Acquire does when its turn
// would come after maxWait, or its context ends) leaves the line: the last
// place is taken back, another one is skipped when its turn comes.
//
// Share one Adaptive among every caller of one rate limit (an API key, a
// host): its methods are safe for concurrent use. Acquire is lock-free and
// allocates nothing while it need not wait: one atomic load while the
// server has not throttled, one atomic add and two loads while tokens are
// available. Its wait takes a lock and a timer.
//
// An Adaptive not made by NewAdaptive — nil, or the zero value — refuses
// every attempt, and Validate reports it.
type Adaptive struct {
	// Read on every Acquire, written seldom.
	enabled  atomic.Bool
	produced atomic.Int64  // tokens earned at the rate, in thousandths, cumulative
	rateBits atomic.Uint64 // the fill rate, attempts per second (float64 bits)
	_        [40]byte
	// Written by every Acquire that limits: alone on its cache line.
	issued atomic.Int64 // tokens handed out, in thousandths, cumulative
	_      [56]byte
	// Written by every Record.
	accepted atomic.Int64 // answers counted by Record, cumulative
	answered atomic.Int64
	nextTick atomic.Int64 // when Record next takes a measurement

	c  AdaptiveConfig
	mu sync.Mutex // guards what follows
	m  meter
	// the CUBIC curve: rate(t) = wmax + Scale·(t − cut − k)³
	wmax, k  float64
	cut      time.Duration
	refilled time.Duration // when the bucket was last filled
	// peak is the rate the server accepted over the last Window measured
	// a Window or more after any cut: what it took before its latest
	// trouble, the level a timeout's curve returns to.
	peak float64
	// gone holds, in order, the tickets given back while they waited,
	// other than the last: their places are skipped when their turn
	// comes (skip), and counted out of the waits of those behind them
	// (Due).
	gone    []int64
	hasGone atomic.Bool // len(gone) > 0, read without the lock
	// patience is how long past wmax the last cut waits to grow as the
	// cube: Patience after a throttled answer, none after a timeout.
	patience float64
	// slow is set from a Start until the first cut: the rate doubles
	// every step since doubled while the callers use it.
	slow    bool
	doubled time.Duration
}

// NewAdaptive returns a limiter that lets every attempt through until the
// first throttled answer, or an error matching retry.ErrInvalid naming a
// field out of range.
func NewAdaptive(c AdaptiveConfig) (*Adaptive, error) {
	c = c.WithDefaults()
	switch {
	case !(c.MinRate > 0 && c.MinRate <= 1e9):
		return nil, argerr.Field("limit.AdaptiveConfig.MinRate", c.MinRate, "must be in (0, 1e9] attempts per second")
	case !(c.Beta > 0 && c.Beta < 1):
		return nil, argerr.Field("limit.AdaptiveConfig.Beta", c.Beta, "must be in (0, 1)")
	case !(c.Scale > 0 && c.Scale <= 1e9):
		return nil, argerr.Field("limit.AdaptiveConfig.Scale", c.Scale, "must be in (0, 1e9]")
	case !(c.Probe > 0 && c.Probe <= 1e3):
		return nil, argerr.Field("limit.AdaptiveConfig.Probe", c.Probe, "must be in (0, 1000]")
	case c.Burst < 0:
		return nil, argerr.Field("limit.AdaptiveConfig.Burst", c.Burst, "must not be negative")
	case c.Hold < 0:
		return nil, argerr.Field("limit.AdaptiveConfig.Hold", c.Hold, "must not be negative")
	case c.Window < 10*time.Millisecond:
		return nil, argerr.Field("limit.AdaptiveConfig.Window", c.Window, "must be at least 10ms")
	case !(c.Start >= 0 && c.Start <= 1e9):
		return nil, argerr.Field("limit.AdaptiveConfig.Start", c.Start, "must be in [0, 1e9] attempts per second")
	}
	a := &Adaptive{c: c}
	now := c.Now()
	a.m.init(c.Window)
	a.m.add(now, 0, 0, true)
	a.setRate(math.Inf(1))
	if c.Start > 0 {
		// Slow start: a full bucket at the starting rate, and a "cut" now,
		// so that throttled answers within Hold of it only hold the rate.
		a.slow, a.cut, a.doubled, a.refilled = true, now, now, now
		a.setRate(c.Start)
		a.produced.Store(a.burst())
		a.enabled.Store(true)
	}
	return a, nil
}

// WithDefaults returns c with every zero field set to its default (the
// table of the package documentation), as NewAdaptive applies them: what a
// limiter of the same model built elsewhere — limit/redis's fleet form —
// starts from.
func (c AdaptiveConfig) WithDefaults() AdaptiveConfig {
	c.MinRate = orDefault(c.MinRate, defaultMinRate)
	c.Beta = orDefault(c.Beta, defaultBeta)
	c.Scale = orDefault(c.Scale, defaultScale)
	c.Probe = orDefault(c.Probe, defaultProbe)
	c.Burst = orDefault(c.Burst, defaultBurst)
	c.Hold = orDefault(c.Hold, defaultHold)
	c.Window = orDefault(c.Window, defaultWindow)
	if c.Now == nil {
		c.Now = monoNow
	}
	return c
}

func orDefault[T float64 | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// Validate reports a limiter not made by NewAdaptive.
func (a *Adaptive) Validate() error {
	if a == nil || a.c.Now == nil {
		return argerr.New("limit.Adaptive", nil, "must be made by limit.NewAdaptive")
	}
	return nil
}

// Rate returns the current rate in attempts per second: +Inf until the
// server first throttled (every attempt goes through), 0 for a limiter not
// made by NewAdaptive.
func (a *Adaptive) Rate() float64 {
	if a == nil || a.c.Now == nil {
		return 0
	}
	return math.Float64frombits(a.rateBits.Load())
}

func (a *Adaptive) setRate(r float64) { a.rateBits.Store(math.Float64bits(r)) }

// Acquire waits for the attempt's turn: it returns true at once while
// tokens are available, or after waiting, at most maxWait, for its token;
// false if its token would come later than maxWait (after waiting in vain if
// a cut pushed it back) or if ctx ended first. Waiting callers go in the
// order they came; a cut slows the turns still to come.
func (a *Adaptive) Acquire(ctx context.Context, maxWait time.Duration) bool {
	if a == nil || a.c.Now == nil {
		return false
	}
	if !a.enabled.Load() {
		return true // the hot path until the server first throttles
	}
	t, wait := a.Take()
	if wait == 0 {
		return true
	}
	if ctx == nil {
		a.Return(t)
		return false
	}
	return a.wait(ctx, t, wait, maxWait)
}

// wait sleeps until ticket t, due after wait, is due, within maxWait.
func (a *Adaptive) wait(ctx context.Context, t Ticket, wait, maxWait time.Duration) bool {
	var timer *time.Timer
	for waited := time.Duration(0); wait > 0; wait = a.Due(t) {
		if waited+wait > maxWait || ctx.Err() != nil {
			a.Return(t)
			return false
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
			waited += wait
		case <-ctx.Done():
			a.Return(t)
			return false
		}
	}
	return true
}

// Ticket is an attempt's place in an Adaptive limiter's line: the count of
// tokens, in thousandths, handed out up to and including its own.
type Ticket int64

// Take is the explicit form of Acquire, for a loop of one's own or a
// simulation: it takes a ticket for one attempt and returns it with the
// wait until it is due at the current rate (0: at once). Ask Due again
// after waiting — a cut since may have pushed the ticket back — and Return
// a ticket that will not be used.
func (a *Adaptive) Take() (Ticket, time.Duration) {
	if a == nil || a.c.Now == nil {
		return 0, 0
	}
	t := Ticket(a.issued.Add(milli))
	if !a.enabled.Load() || int64(t) <= a.produced.Load() {
		return t, 0
	}
	return t, a.Due(t)
}

// Due returns how long ticket t must still wait at the current rate: 0 once
// it may go.
func (a *Adaptive) Due(t Ticket) time.Duration {
	if a == nil || a.c.Now == nil || int64(t) <= a.produced.Load() || !a.enabled.Load() {
		return 0
	}
	a.mu.Lock()
	now := a.c.Now()
	a.refill(now)
	a.grow(now)
	short := int64(t) - a.produced.Load() - milli*int64(a.ahead(int64(t)))
	slow := a.slow
	a.mu.Unlock()
	if short <= 0 {
		return 0
	}
	s := float64(short) / milli / a.Rate()
	if slow {
		// At a rate doubling every step T, s seconds of tokens at the
		// current rate come in T·log2(1 + s·ln2/T): a long line of new
		// callers is not refused for a wait the start will not make.
		T := seconds(a.m.step)
		s = T * math.Log2(1+s*math.Ln2/T)
	}
	return max(duration(s), 1)
}

// Return gives back ticket t, which will not be used. A ticket already due
// gives its token to the next in line. The last ticket handed out is taken
// back, as if it had never been asked for: a caller refused at once, its
// turn beyond its maxWait, leaves the line as it was. Any other ticket's
// place is skipped when its turn comes: the turns behind it come one
// earlier, and only those.
//
// (Giving a waiting ticket's token to the head of the line at once would
// move every turn up, those ahead of it too, and leave its place to be
// paid for by whoever comes last. When a cut pushes a long line past its
// callers' maxWait, they all give their tickets back: the head would be
// served in a burst at the moment the server can least take it, and the
// places left at the end would refuse every new caller until the rate
// had paid for them — minutes, at a rate cut to its minimum.)
func (a *Adaptive) Return(t Ticket) {
	switch {
	case a == nil || a.c.Now == nil:
	case int64(t) <= a.produced.Load():
		a.produced.Add(milli)
	case a.issued.CompareAndSwap(int64(t), int64(t)-milli):
		if a.hasGone.Load() {
			a.mu.Lock()
			a.trim()
			a.mu.Unlock()
		}
	default:
		a.mu.Lock()
		a.leave(int64(t))
		a.mu.Unlock()
	}
}

// leave records that waiting ticket t will not be used. a.mu is held.
func (a *Adaptive) leave(t int64) {
	i, _ := slices.BinarySearch(a.gone, t)
	a.gone = slices.Insert(a.gone, i, t)
	a.hasGone.Store(true)
	a.skip()
}

// skip passes the places given back whose turn has come, and forgets
// those passed. a.mu is held.
func (a *Adaptive) skip() {
	for len(a.gone) > 0 {
		p, h := a.produced.Load(), a.gone[0]
		if h-milli > p {
			return // its turn is still to come
		}
		if a.gone = a.gone[1:]; h > p {
			a.produced.Add(milli) // what was produced towards it goes to the next
		}
		a.hasGone.Store(len(a.gone) > 0)
	}
}

// trim takes back the places given back at the end of the line. a.mu is
// held.
func (a *Adaptive) trim() {
	for n := len(a.gone); n > 0; n-- {
		last := a.gone[n-1]
		if !a.issued.CompareAndSwap(last, last-milli) {
			return // not at the end: a ticket was taken after it
		}
		a.gone = a.gone[:n-1]
		a.hasGone.Store(n > 1)
	}
}

// ahead counts the places given back in front of ticket t. a.mu is held.
func (a *Adaptive) ahead(t int64) int {
	i, _ := slices.BinarySearch(a.gone, t)
	return i
}

// refill produces the tokens earned since the last refill at the current
// rate, leaving at most a burst's worth unclaimed. a.mu is held.
func (a *Adaptive) refill(now time.Duration) {
	elapsed := now - a.refilled
	if elapsed <= 0 {
		return
	}
	rate, burst := a.Rate(), a.burst()
	gain := int64(min(seconds(elapsed)*rate*milli, float64(burst)))
	// Count as refilled only the time the whole thousandths were earned
	// in, so that refills microseconds apart add up; an idle bucket is
	// simply full.
	a.refilled = now
	if gain < burst {
		a.refilled = min(a.refilled-elapsed+duration(float64(gain)/milli/rate), now)
	}
	a.produce(gain, a.issued.Load()+a.burst())
}

// produce adds gain thousandths of a token to those produced, up to full,
// skipping the places given back. a.mu is held.
func (a *Adaptive) produce(gain, full int64) {
	for a.skip(); len(a.gone) > 0 && gain > 0; a.skip() {
		p := a.produced.Load()
		step := min(gain, a.gone[0]-milli-p, full-p) // up to the next place given back
		if step <= 0 {
			break
		}
		if a.produced.CompareAndSwap(p, p+step) {
			gain -= step
		}
	}
	a.setProduced(func(p int64) int64 { return max(min(p+gain, full), p) })
}

// setProduced applies f to the produced count, racing only Return.
func (a *Adaptive) setProduced(f func(int64) int64) {
	for {
		old := a.produced.Load()
		if a.produced.CompareAndSwap(old, f(old)) {
			return
		}
	}
}

// Record learns from one attempt's end: a throttled answer cuts the rate;
// the others feed the measured rates, from which the rate grows back.
func (a *Adaptive) Record(_ context.Context, o Outcome) {
	if a == nil || a.c.Now == nil {
		return
	}
	a.answered.Add(1)
	switch {
	case o.Result == Accepted:
		a.accepted.Add(1)
	case o.Result == Throttled, o.Result == TimedOut && a.c.Timeouts:
		a.throttled(o.RetryAfter, o.Result == TimedOut)
		return
	}
	now := a.c.Now()
	if now >= time.Duration(a.nextTick.Load()) && a.mu.TryLock() {
		a.tick(now)
		a.mu.Unlock()
	}
}

// tick takes a measurement and moves the rate along its curve. a.mu is
// held.
func (a *Adaptive) tick(now time.Duration) {
	acc, ans := a.accepted.Load(), a.answered.Load()
	a.m.add(now, acc, ans, false)
	a.nextTick.Store(int64(now + a.m.step))
	enabled := a.enabled.Load()
	if !enabled || now-a.cut >= a.m.window {
		a.peak, _, _ = a.m.rates(now, now-a.m.window, acc, ans)
	}
	if !enabled {
		return
	}
	a.refill(now)
	if a.slow {
		a.grow(now)
		return
	}
	t := seconds(now - a.cut)
	rate := a.wmax + a.c.Scale*math.Pow(min(t-a.k, 0), 3) // CUBIC's concave return to wmax
	if x := t - a.k; x > 0 {
		// Beyond it, a slow linear probe where CUBIC grows as the cube at
		// once: a rate limit seldom moves, and the server's bucket, filled
		// while the rate was below it, hides an overshoot for seconds. The
		// cube comes back after Patience, so that a limit measured far too
		// low (nothing accepted before a first 429) is soon outgrown.
		// A timeout's cut grows as the cube at once (patience 0): a
		// server's capacity comes back, a rate limit seldom does.
		rate += a.c.Probe*a.wmax*x + a.c.Scale*math.Pow(max(x-a.patience, 0), 3)
	}
	if _, sent, _ := a.m.rates(now, now-a.m.window, acc, ans); sent > 0 && t > a.k {
		rate = min(rate, max(2*sent, a.wmax)) // no growth the callers do not use
	}
	a.setRate(max(rate, a.c.MinRate))
}

// throttled cuts the rate after a throttled answer, or a timeout, that
// came later than Hold after the last cut.
func (a *Adaptive) throttled(retryAfter time.Duration, timedOut bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.c.Now()
	enabled := a.enabled.Load()
	if a.slow {
		a.doubled = now // no doubling while throttled
	}
	if enabled && now < a.cut+a.c.Hold {
		return // an answer to an attempt sent before the last cut
	}
	acc, ans := a.accepted.Load(), a.answered.Load()
	from := a.cut
	if a.slow {
		// A rate that doubled until now is measured over its last Hold:
		// over the whole start, it would be measured far too low.
		from = now - a.c.Hold
	}
	accepted, _, span := a.m.rates(now, from, acc, ans)
	if !enabled && span < a.c.Hold {
		// Too little measured to tell the server's rate (a 429 at once,
		// say): the next throttled answer will tell.
		return
	}
	a.m.add(now, acc, ans, true)
	if enabled {
		a.refill(now)
	} else {
		a.refilled = now
		issued := a.issued.Load()
		a.setProduced(func(int64) int64 { return issued }) // an empty bucket
		a.gone = a.gone[:0]
		a.hasGone.Store(false)
	}
	a.wmax = max(accepted, a.c.MinRate)
	rate := max(a.c.Beta*a.wmax, a.c.MinRate)
	if timedOut {
		// The cut empties the server's queue: the attempts it answers
		// late are all that it answers, and a stalled one answers none.
		// The curve back runs to what it accepted before, for a server
		// that answers late is more often one whose queue is full than
		// one whose capacity is gone; it is taken only once answers come
		// in time again (tick).
		a.wmax = max(a.wmax, a.peak)
	}
	// CUBIC's plateau: the rate is back at wmax k seconds after the cut,
	// and not before the server's Retry-After has passed.
	a.k = max(math.Cbrt(a.wmax*(1-a.c.Beta)/a.c.Scale), seconds(retryAfter))
	a.patience = seconds(Patience)
	if timedOut {
		a.patience = 0
	}
	a.cut, a.slow = now, false
	a.setRate(rate)
	a.clamp()
	a.enabled.Store(true)
}

// grow doubles the rate in slow start, once a step has passed since the
// last doubling, if the callers answered in the last step used at least
// half of it, or wait in line for it. a.mu is held.
func (a *Adaptive) grow(now time.Duration) {
	if !a.slow || now-a.doubled < a.m.step {
		return
	}
	rate := a.Rate()
	_, sent, _ := a.m.rates(now, now-a.m.step, a.accepted.Load(), a.answered.Load())
	if sent < rate/2 && a.issued.Load() <= a.produced.Load() {
		return
	}
	a.doubled = now
	a.setRate(min(2*rate, 1e9))
}

// burst is the most thousandths of a token the bucket holds at the current
// rate.
func (a *Adaptive) burst() int64 {
	return int64(max(seconds(a.c.Burst)*a.Rate(), 1) * milli)
}

// clamp empties the bucket down to the burst of the current rate, so that
// tokens earned at a rate just cut are not spent at once. a.mu is held.
func (a *Adaptive) clamp() {
	full := a.issued.Load() + a.burst()
	a.setProduced(func(p int64) int64 { return min(p, full) })
}
