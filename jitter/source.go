package jitter

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/retrykit/retry/internal/argerr"
)

// Source supplies uniformly distributed random numbers. It is satisfied by
// math/rand/v2's *Rand and Source types; implementations used by a shared
// retry.Retrier must be safe for concurrent use.
type Source interface {
	Uint64() uint64
}

// Runtime is the default Source: math/rand/v2's top-level generator, which
// keeps its state per thread and takes no lock. It cannot be seeded.
type Runtime struct{}

// Uint64 returns rand.Uint64().
func (Runtime) Uint64() uint64 { return rand.Uint64() }

// Seeded is a deterministic Source for tests: the same seed yields the same
// sequence. It is safe for concurrent use (one atomic add per number, no lock);
// concurrent callers then split the sequence between them in whatever order
// they run. The zero Seeded yields the sequence of seed 0; a nil *Seeded is
// invalid (Validate reports it) and draws from Runtime.
type Seeded struct {
	state atomic.Uint64
}

// NewSeeded returns a Source that yields the SplitMix64 sequence for seed.
func NewSeeded(seed uint64) *Seeded {
	s := new(Seeded)
	s.state.Store(seed)
	return s
}

// Uint64 returns the next number of the sequence.
func (s *Seeded) Uint64() uint64 {
	if s == nil {
		return rand.Uint64()
	}
	z := s.state.Add(0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Validate reports a nil *Seeded.
func (s *Seeded) Validate() error {
	if s == nil {
		return argerr.New("jitter.Seeded", nil, "must be made by NewSeeded")
	}
	return nil
}
