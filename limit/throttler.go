package limit

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Throttler defaults (see ThrottlerConfig).
const (
	defaultK              = 2 // Google SRE's "Handling Overload"
	defaultThrottleWindow = 10 * time.Second
)

// throttleSlices is how many slices a Throttler's window is cut into: the
// window slides by a tenth of its length.
const throttleSlices = 10

// ThrottlerConfig configures a Throttler. Zero fields take the defaults
// noted.
type ThrottlerConfig struct {
	// K is how many requests per accepted one the throttler lets through
	// before it starts refusing, at least 1. 0 means 2 (Google SRE).
	// Smaller is more aggressive.
	K float64
	// Window is how far back requests and accepts are counted. 0 means
	// 10s.
	Window time.Duration
	// Rand, if set, draws the uniform random numbers the refusals are
	// drawn with; it must be safe for concurrent use. The default is
	// math/rand/v2's Uint64, which takes no lock. Tests pass a seeded one.
	Rand func() uint64
	// Now, if set, is the throttler's clock: a monotonic reading that never
	// goes back. It lets a simulation run the throttler in virtual time.
	// The default reads the monotonic clock.
	Now func() time.Duration
}

// Throttler is Google SRE's client-side throttling ("Handling Overload",
// Site Reliability Engineering, chapter 21): it refuses attempts locally,
// without sending them, with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// over a sliding window, where requests counts every attempt asked for —
// those it refused included — and accepts those the server accepted (an
// answer that was neither throttled nor a failure of the connection). While
// the server accepts at least one request in K, it refuses nothing.
//
// It never waits: an attempt goes at once or is refused. Because refused
// attempts count as requests, a caller that retries its refusals keeps the
// probability up and can lock itself out; the retry loop never retries them
// (retry.ErrLimited).
//
// Share one Throttler among every caller of one dependency: its methods are
// safe for concurrent use, and Acquire is one atomic load while the
// probability is zero.
//
// A Throttler not made by NewThrottler — nil, or the zero value — refuses
// every attempt, and Validate reports it.
type Throttler struct {
	c     ThrottlerConfig
	slice time.Duration
	pBits atomic.Uint64 // the refusal probability (float64 bits)
	ring  [throttleSlices]slot
	mu    sync.Mutex // taken to move to a new slice
}

// slot counts one slice of the window.
type slot struct {
	n                  atomic.Int64 // which slice of time it counts
	requests, accepted atomic.Int64
	_                  [40]byte // alone on its cache line
}

// NewThrottler returns a throttler that refuses nothing yet, or an error
// matching retry.ErrInvalid naming a field out of range.
func NewThrottler(c ThrottlerConfig) (*Throttler, error) {
	c = c.withDefaults()
	switch {
	case !(c.K >= 1 && c.K <= 1e9):
		return nil, argerr.Field("limit.ThrottlerConfig.K", c.K, "must be in [1, 1e9]")
	case c.Window < throttleSlices:
		return nil, argerr.Field("limit.ThrottlerConfig.Window", c.Window, "must be positive (at least 10ns)")
	}
	t := &Throttler{c: c, slice: c.Window / throttleSlices}
	for i := range t.ring {
		t.ring[i].n.Store(math.MinInt64) // counts no slice of time yet
	}
	return t, nil
}

func (c ThrottlerConfig) withDefaults() ThrottlerConfig {
	c.K = orDefault(c.K, defaultK)
	c.Window = orDefault(c.Window, defaultThrottleWindow)
	if c.Rand == nil {
		c.Rand = rand.Uint64
	}
	if c.Now == nil {
		c.Now = monoNow
	}
	return c
}

// Validate reports a throttler not made by NewThrottler.
func (t *Throttler) Validate() error {
	if t == nil || t.c.Now == nil {
		return argerr.New("limit.Throttler", nil, "must be made by limit.NewThrottler")
	}
	return nil
}

// RejectProbability returns the probability with which the next attempt is
// refused: max(0, (requests − K·accepts) / (requests + 1)) over the window,
// as of the last Record or refusal. A throttler not made by NewThrottler
// returns 1.
func (t *Throttler) RejectProbability() float64 {
	if t == nil || t.c.Now == nil {
		return 1
	}
	return math.Float64frombits(t.pBits.Load())
}

// Acquire refuses the attempt with the current probability, counting the
// refusal as a request; it never waits, so maxWait is not used.
func (t *Throttler) Acquire(context.Context, time.Duration) bool {
	if t == nil || t.c.Now == nil {
		return false
	}
	p := t.RejectProbability()
	if p <= 0 || float64(t.c.Rand()>>11)/(1<<53) >= p {
		return true // counted as a request by Record
	}
	t.count(1, 0)
	return false
}

// Record counts the attempt as a request, and as accepted if the server
// accepted it: an Accepted outcome. Throttled and Other outcomes are
// requests the server did not accept.
func (t *Throttler) Record(_ context.Context, o Outcome) {
	if t == nil || t.c.Now == nil {
		return
	}
	var acc int64
	if o.Result == Accepted {
		acc = 1
	}
	t.count(1, acc)
}

// count adds to the current slice and updates the probability.
func (t *Throttler) count(requests, accepted int64) {
	n := int64(t.c.Now() / t.slice)
	s := &t.ring[(n%throttleSlices+throttleSlices)%throttleSlices] // the clock may read below 0 (a synctest bubble)
	if s.n.Load() != n {
		t.turn(s, n)
	}
	s.requests.Add(requests)
	s.accepted.Add(accepted)
	t.update(n)
}

// turn makes s count slice n, forgetting the slice it counted.
func (t *Throttler) turn(s *slot, n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.n.Load() < n {
		s.requests.Store(0)
		s.accepted.Store(0)
		s.n.Store(n)
	}
}

// update recomputes the probability over the slices of the window ending
// with slice n.
func (t *Throttler) update(n int64) {
	var req, acc int64
	for i := range t.ring {
		s := &t.ring[i]
		if k := s.n.Load(); k > n-throttleSlices && k <= n {
			req += s.requests.Load()
			acc += s.accepted.Load()
		}
	}
	p := max(0, (float64(req)-t.c.K*float64(acc))/float64(req+1))
	t.pBits.Store(math.Float64bits(p))
}
