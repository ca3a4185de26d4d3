package rng_test

import (
	"testing"

	"github.com/retrykit/retry/internal/rng"
	"github.com/stretchr/testify/assert"
)

func TestRandRepeatsItsSequenceAndHasNoShortCycle(t *testing.T) {
	a, b := rng.New(1), rng.New(1)
	seen := make(map[uint64]bool)
	for range 10_000 {
		x := a.Uint64()
		assert.Equal(t, x, b.Uint64(), "the same seed gives the same sequence")
		assert.False(t, seen[x], "repeated value within 10,000 draws")
		seen[x] = true
	}
	c, d := rng.New(2), rng.New(1)
	assert.NotEqual(t, c.Uint64(), d.Uint64())
}

func TestRandBitsAreBalanced(t *testing.T) {
	r := rng.New(42)
	var ones [64]int
	const n = 20_000
	for range n {
		x := r.Uint64()
		for i := range ones {
			ones[i] += int(x >> i & 1)
		}
	}
	for i, c := range ones {
		assert.InDelta(t, n/2, c, n/20, "bit %d", i)
	}
}

func TestTheZeroRandIsSeedZero(t *testing.T) {
	var zero rng.Rand
	first := rng.New(0)
	assert.Equal(t, first.Uint64(), zero.Uint64())
}
