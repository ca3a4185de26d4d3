// Package wyrand is the retry loop's per-call random generator: wyrand, a
// one-multiply generator whose whole state is one word, so it lives on the
// stack of the call that uses it and costs about a nanosecond a number.
// It is seeded once per call from a jitter.Source.
package wyrand

import "math/bits"

// Rand is a wyrand generator. The zero value is usable but every zero-seeded
// generator yields the same sequence; seed it with New.
type Rand struct{ s uint64 }

// New returns a generator seeded with seed.
func New(seed uint64) Rand { return Rand{s: seed} }

// Uint64 returns the next number.
func (r *Rand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}
