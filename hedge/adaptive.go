package hedge

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Defaults for the zero fields of an AdaptiveConfig (the table of the
// package documentation).
const (
	defaultPercentile = 0.95
	defaultFloor      = time.Millisecond
	defaultCap        = time.Second
	defaultWindow     = 1024
)

// AdaptiveConfig configures an Adaptive delay. Zero fields take the defaults
// in the package documentation.
type AdaptiveConfig struct {
	// Percentile of recent latencies to hedge at, in (0, 1). 0 means 0.95:
	// about one call in twenty sends a hedge.
	Percentile float64
	// Floor is the shortest delay, so that a dependency that suddenly
	// answers in microseconds is not hedged on every hiccup. 0 means 1ms.
	Floor time.Duration
	// Cap is the longest delay, and the delay until the first estimate. 0
	// means 1s.
	Cap time.Duration
	// Window is how many calls pass between two estimates; each estimate also
	// halves the weight of older latencies, so the sketch follows the last
	// few windows. At least 16; 0 means 1024. Make it larger than the bursts
	// of calls that finish together (the keys of one fan-out): an estimate
	// made at the end of a burst sees its slow calls and few of its fast
	// ones, and comes out too high.
	Window int
}

// validate reports the first bad field, naming it and its value.
func (c AdaptiveConfig) validate() error {
	switch {
	case c.Percentile < 0 || c.Percentile >= 1 || c.Percentile != c.Percentile:
		return argerr.Field("hedge.AdaptiveConfig.Percentile", c.Percentile, "must be in (0, 1), or 0 for the default 0.95")
	case c.Floor < 0:
		return argerr.Field("hedge.AdaptiveConfig.Floor", c.Floor, "must not be negative")
	case c.Cap < 0:
		return argerr.Field("hedge.AdaptiveConfig.Cap", c.Cap, "must not be negative")
	case c.Window < 0 || c.Window > 0 && c.Window < minWindow:
		return argerr.Field("hedge.AdaptiveConfig.Window", c.Window, "must be at least 16, or 0 for the default 1024")
	}
	if c.withDefaults().Cap < c.withDefaults().Floor {
		return argerr.Field("hedge.AdaptiveConfig.Cap", c.Cap, "must not be below the floor")
	}
	return nil
}

const minWindow = 16

func (c AdaptiveConfig) withDefaults() AdaptiveConfig {
	if c.Percentile == 0 {
		c.Percentile = defaultPercentile
	}
	if c.Floor == 0 {
		c.Floor = defaultFloor
	}
	if c.Cap == 0 {
		c.Cap = defaultCap
	}
	if c.Window == 0 {
		c.Window = defaultWindow
	}
	return c
}

// The sketch counts latencies in log-spaced buckets of microseconds: eight
// buckets per power of two, so an estimate is within 1/16 (6%) of the true
// percentile, from 1µs to about 2^40µs (12 days), in 2.4 KiB.
const (
	subBits = 3
	subs    = 1 << subBits
	buckets = (40 - subBits + 1) * subs
)

// Adaptive hedges at a percentile of the latencies of recent successful
// calls, within a floor and a cap. Its sketch is lock-free: Observe costs a
// few arithmetic operations and two atomic additions; every Window calls, the
// one call that completes the window scans the buckets (about 300) to
// publish a new estimate, which Next reads with one atomic load.
//
// Hedging at the p95 is self-consistent: calls faster than the delay are not
// hedged, so the observed latencies below the delay are the unhedged ones,
// and the delay stays at the dependency's own p95 instead of drifting down.
// That holds while latencies are independent from call to call. A dependency
// slow in bursts longer than the sketch's memory (a few Windows of calls) is
// hedged more often: between bursts the delay falls, and the next burst is
// hedged nearly whole (bench/tail's queueing model: 17% of calls at the p95).
//
// Make one with NewAdaptive. A nil or zero Adaptive is invalid (Validate
// reports it); its Next returns 0 and its Observe does nothing.
type Adaptive struct {
	cfg    AdaptiveConfig
	delay  atomic.Int64 // the published estimate, in nanoseconds
	n      atomic.Uint64
	busy   atomic.Bool // an estimate is being made
	counts [buckets]atomic.Uint32
}

// NewAdaptive returns an Adaptive delay, or the first bad field of c as an
// *retry.InvalidError.
func NewAdaptive(c AdaptiveConfig) (*Adaptive, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	a := &Adaptive{cfg: c.withDefaults()}
	a.delay.Store(int64(a.cfg.Cap))
	return a, nil
}

// Validate reports an Adaptive not made by NewAdaptive.
func (a *Adaptive) Validate() error {
	if a == nil || a.cfg.Window == 0 {
		return argerr.New("hedge.Adaptive", nil, "must be made by hedge.NewAdaptive")
	}
	return nil
}

// Next returns the current estimate: the cap until the first estimate.
func (a *Adaptive) Next() time.Duration {
	if a == nil {
		return 0
	}
	return time.Duration(a.delay.Load())
}

// Observe counts one call's latency. The first estimates come early, after
// 16, 32, 64… calls, then every Window calls.
func (a *Adaptive) Observe(latency time.Duration) {
	if a == nil || a.cfg.Window == 0 {
		return
	}
	a.counts[bucket(latency)].Add(1)
	n := a.n.Add(1)
	w := uint64(a.cfg.Window)
	switch {
	case n%w == 0:
		a.estimate(true)
	case n < w && n >= minWindow && n&(n-1) == 0:
		a.estimate(false)
	}
}

// estimate publishes the percentile of the counts, then halves them when
// decay is set. Halving subtracts from each counter rather than storing, so
// that a concurrent Observe is never lost; a second estimate arriving while
// one runs is skipped.
func (a *Adaptive) estimate(decay bool) {
	if !a.busy.CompareAndSwap(false, true) {
		return
	}
	defer a.busy.Store(false)
	var total uint64
	for i := range a.counts {
		total += uint64(a.counts[i].Load())
	}
	target := uint64(a.cfg.Percentile*float64(total)) + 1
	var seen uint64
	for i := range a.counts {
		if seen += uint64(a.counts[i].Load()); seen >= target {
			a.delay.Store(int64(min(max(estimateOf(i), a.cfg.Floor), a.cfg.Cap)))
			break
		}
	}
	if decay {
		for i := range a.counts {
			if v := a.counts[i].Load(); v > 1 {
				a.counts[i].Add(^(v/2 - 1)) // subtract v/2
			}
		}
	}
}

// bucket returns the bucket of a latency: exact below 8µs, then eight per
// power of two.
func bucket(d time.Duration) int {
	us := uint64(max(d, 0) / time.Microsecond)
	if us < subs {
		return int(us)
	}
	e := bits.Len64(us) - 1 // us in [2^e, 2^(e+1))
	i := (e-subBits+1)*subs + int(us>>(e-subBits)&(subs-1))
	return min(i, buckets-1)
}

// estimateOf returns the middle of bucket i.
func estimateOf(i int) time.Duration {
	if i < subs {
		return time.Duration(i)*time.Microsecond + time.Microsecond/2
	}
	e := i/subs + subBits - 1
	lo := uint64(subs+i%subs) << (e - subBits)
	width := uint64(1) << (e - subBits)
	return time.Duration(lo)*time.Microsecond + time.Duration(width)*time.Microsecond/2
}
