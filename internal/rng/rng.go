// Package rng is the retry loop's per-call random number generator.
package rng

import "math/bits"

// Rand is a small, fast generator (wyrand) for one goroutine: its whole state
// is one word, so it lives on the stack and yields a number in about a
// nanosecond. The retry loop seeds one per failing call from its Source, so
// the Source is asked once per call rather than once per delay. It is not
// safe for concurrent use; the zero value is usable but unseeded.
type Rand struct{ s uint64 }

// New returns a generator seeded with seed.
func New(seed uint64) Rand { return Rand{s: seed} }

// Uint64 returns the next number.
func (r *Rand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}
