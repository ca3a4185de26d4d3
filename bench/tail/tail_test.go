package main

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// TestAdaptiveP95CutsTheHeavyTail checks the hedging target on the
// heavy-tailed model: hedging at the adaptive p95 cuts the p99.9 of single
// calls at least tenfold for at most 6% more requests.
func TestAdaptiveP95CutsTheHeavyTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		none := run(heavy{}, strategies[0], 20000, 1, 1)
		p95 := run(heavy{}, strategies[2], 20000, 1, 1)
		assert.Equal(t, "adaptive p95", p95.strategy)
		assert.GreaterOrEqual(t, none.p999/p95.p999, 10.0, "p99.9 %vms → %vms", none.p999, p95.p999)
		assert.LessOrEqual(t, p95.extraPct, 6.0)
	})
}

func TestARunIsDeterministicForASeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := func() model { return &queueing{servers: 100} }
		a := run(q(), strategies[3], 3, 1000, 7)
		b := run(q(), strategies[3], 3, 1000, 7)
		assert.Equal(t, a, b)
	})
}
