package jitter_test

import (
	"testing"

	"github.com/retrykit/retry/jitter"
	"github.com/stretchr/testify/assert"
)

func TestRandRepeatsItsSequenceAndHasNoShortCycle(t *testing.T) {
	a, b := jitter.NewRand(1), jitter.NewRand(1)
	seen := make(map[uint64]bool)
	for range 10_000 {
		x := a.Uint64()
		assert.Equal(t, x, b.Uint64(), "the same seed gives the same sequence")
		assert.False(t, seen[x], "repeated value within 10,000 draws")
		seen[x] = true
	}
	c, d := jitter.NewRand(2), jitter.NewRand(1)
	assert.NotEqual(t, c.Uint64(), d.Uint64())
}

func TestRandBitsAreBalanced(t *testing.T) {
	r := jitter.NewRand(42)
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
