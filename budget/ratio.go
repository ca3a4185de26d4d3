package budget

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// ratioSlices is how many slices a Ratio's window is cut into: the
// window slides by a tenth of its length.
const ratioSlices = 10

// stripes spreads the counting of first attempts over cache lines, so that
// goroutines on different cores rarely write the same one.
const stripes = 8

// stripe is one counter alone on its cache line.
type stripe struct {
	v atomic.Uint64
	_ [56]byte
}

// RatioConfig configures a Ratio. Zero fields take the defaults
// of Finagle's RetryBudget.
type RatioConfig struct {
	// Percent is the share of recent first attempts that may be retried,
	// in (0, 1]. 0 means 0.2 (Finagle: 20%).
	Percent float64
	// Window is how far back "recent" goes. 0 means 10s (Finagle's TTL).
	Window time.Duration
	// MinPerSecond is a floor of retries per second, so a client with little
	// traffic can still retry. 0 means 10 (Finagle's minRetriesPerSec); a
	// negative value means no floor.
	MinPerSecond float64
}

// Ratio is a retry budget in the manner of Finagle's RetryBudget:
// retries within the window may be at most Percent of the first attempts
// within it, plus a floor of MinPerSecond retries per second.
//
// It counts first attempts by time, so Record reads the monotonic clock for
// every call's first attempt (under testing/synctest, the fake one).
// Counters are atomic, in slices of a tenth of the window.
//
// A Ratio not made by NewRatio — the zero value, or nil — has no window:
// Allow refuses every retry, Record counts nothing, State is zero, and
// Validate reports it.
type Ratio struct {
	base    time.Time // slices are counted from here
	percent float64
	slice   int64                        // nanoseconds per slice
	reserve int64                        // retries always available per window: the floor
	calls   [ratioSlices][stripes]stripe // first attempts, by slice, striped
	retries [ratioSlices]atomic.Uint64   // retries, by slice: counted exactly (see allowAt)
	denied  atomic.Uint64
}

// NewRatio returns an empty budget, or an error matching retry.ErrInvalid
// naming a field out of range.
func NewRatio(c RatioConfig) (*Ratio, error) {
	c = c.withDefaults()
	switch {
	case !(c.Percent > 0 && c.Percent <= 1):
		return nil, argerr.Field("budget.RatioConfig.Percent", c.Percent, "must be in (0, 1]")
	case c.Window < ratioSlices:
		return nil, argerr.Field("budget.RatioConfig.Window", c.Window, "must be positive (at least 10ns)")
	case math.IsNaN(c.MinPerSecond) || c.MinPerSecond > 1e9:
		return nil, argerr.Field("budget.RatioConfig.MinPerSecond", c.MinPerSecond, "must be a number of retries per second, at most 1e9")
	case c.MinPerSecond*c.Window.Seconds() > 1<<53:
		return nil, argerr.Field("budget.RatioConfig.MinPerSecond", c.MinPerSecond, "times Window ("+c.Window.String()+") must be at most 2^53 retries")
	}
	return &Ratio{
		base:    time.Now(),
		percent: c.Percent,
		slice:   int64(c.Window / ratioSlices),
		reserve: int64(math.Max(c.MinPerSecond, 0) * c.Window.Seconds()),
	}, nil
}

func (c RatioConfig) withDefaults() RatioConfig {
	if c.Percent == 0 {
		c.Percent = 0.2
	}
	if c.Window == 0 {
		c.Window = 10 * time.Second
	}
	if c.MinPerSecond == 0 {
		c.MinPerSecond = 10
	}
	return c
}

// Validate reports a budget not made by NewRatio: nil, or the zero value,
// which has no window.
func (b *Ratio) Validate() error {
	switch {
	case b == nil:
		return argerr.New("budget.Ratio", nil, "must be made by NewRatio")
	case b.slice == 0:
		return argerr.New("budget.Ratio", "{}", "must be made by NewRatio: the zero value has no window")
	}
	return nil
}

// made reports whether b was made by NewRatio: the other methods do nothing
// with a Ratio that was not.
func (b *Ratio) made() bool { return b != nil && b.slice > 0 }

// Record counts a call's first attempt at the current time; retries are
// counted by Allow. It reads only the monotonic clock (time.Since), which
// costs about half of time.Now.
func (b *Ratio) Record(a Attempt) {
	if !a.Retry && b.made() {
		b.call(int64(time.Since(b.base)) / b.slice)
	}
}

// recordAt is Record at time now.
func (b *Ratio) recordAt(now time.Time, a Attempt) {
	if !a.Retry && b.made() {
		b.call(b.epoch(now))
	}
}

// call counts a first attempt in slice e, on a stripe picked at random.
func (b *Ratio) call(e int64) {
	add(&b.calls[uint64(e)%ratioSlices][rand.Uint64()%stripes].v, e)
}

// callsIn counts the first attempts within the window ending at slice e.
func (b *Ratio) callsIn(e int64) int64 {
	var n int64
	for i := range b.calls {
		for j := range b.calls[i] {
			n += count(b.calls[i][j].v.Load(), e)
		}
	}
	return n
}

// Allow reports whether a retry fits in the budget now, and counts it if so.
func (b *Ratio) Allow() bool { return b.allowAt(time.Now()) }

// allowAt is Allow at time now. Concurrent callers never take more retries
// than the budget holds: the retry is counted with a compare-and-swap on the
// current slice, retried if another retry was counted meanwhile.
func (b *Ratio) allowAt(now time.Time) bool {
	if !b.made() {
		return false
	}
	e := b.epoch(now)
	slot := &b.retries[uint64(e)%ratioSlices]
	for {
		old := slot.Load()
		if b.allowed(e)-sum(&b.retries, e) < 1 {
			b.denied.Add(1)
			return false
		}
		next := pack(e, 1)
		if epochOf(old) == uint32(e) {
			next = old + 1
		}
		if slot.CompareAndSwap(old, next) {
			return true
		}
	}
}

// allowed is the number of retries the window allows: Percent of its first
// attempts plus the floor.
func (b *Ratio) allowed(e int64) int64 {
	return int64(b.percent*float64(b.callsIn(e))) + b.reserve
}

func (b *Ratio) epoch(now time.Time) int64 { return int64(now.Sub(b.base)) / b.slice }

// RatioState is a snapshot of a Ratio, for metrics.
type RatioState struct {
	Calls   uint64  // first attempts in the window
	Retries uint64  // retries allowed in the window
	Ratio   float64 // Retries / Calls; 0 without calls
	Left    int64   // retries still available in the window
	Denied  uint64  // retries refused since the budget was made
}

// State returns a snapshot of the budget now.
func (b *Ratio) State() RatioState { return b.stateAt(time.Now()) }

// stateAt returns a snapshot of the budget at time now.
func (b *Ratio) stateAt(now time.Time) RatioState {
	if !b.made() {
		return RatioState{}
	}
	e := b.epoch(now)
	s := RatioState{Calls: uint64(b.callsIn(e)), Retries: uint64(sum(&b.retries, e)), Denied: b.denied.Load()}
	if s.Calls > 0 {
		s.Ratio = float64(s.Retries) / float64(s.Calls)
	}
	s.Left = max(b.allowed(e)-int64(s.Retries), 0)
	return s
}

// A slice counter packs the slice's epoch (high 32 bits) with its count (low
// 32 bits), so that a stale slice is recognised and restarted atomically.
func pack(epoch int64, n uint64) uint64 { return uint64(uint32(epoch))<<32 | n }

func epochOf(v uint64) uint32 { return uint32(v >> 32) }

// add counts one event of epoch e in slot, restarting a stale slot.
func add(slot *atomic.Uint64, e int64) {
	for {
		old := slot.Load()
		next := pack(e, 1)
		if epochOf(old) == uint32(e) {
			next = old + 1
		}
		if slot.CompareAndSwap(old, next) {
			return
		}
	}
}

// sum counts the events of the slices within the window ending at epoch e.
func sum(slots *[ratioSlices]atomic.Uint64, e int64) int64 {
	var n int64
	for i := range slots {
		n += count(slots[i].Load(), e)
	}
	return n
}

// count is a slot's count if the slot lies within the window ending at
// epoch e, and 0 otherwise.
func count(v uint64, e int64) int64 {
	if age := uint32(e) - epochOf(v); age < ratioSlices && v != 0 {
		return int64(v & math.MaxUint32)
	}
	return 0
}
