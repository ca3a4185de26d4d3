package limit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newThrottler(t *testing.T, c *clock, k float64) *limit.Throttler {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	th, err := limit.NewThrottler(limit.ThrottlerConfig{K: k, Now: c.Now, Rand: r.Uint64})
	require.NoError(t, err)
	return th
}

func record(th *limit.Throttler, o limit.Outcome, n int) {
	for range n {
		th.Record(context.Background(), o)
	}
}

func TestThrottlerProbabilityIsTheSREFormula(t *testing.T) {
	tests := []struct {
		name             string
		k                float64
		accepts, refused int
		want             float64
	}{
		{"nothing yet", 2, 0, 0, 0},
		{"every request accepted", 2, 100, 0, 0},
		{"half accepted, at K = 2: still none refused", 2, 50, 50, 0},
		{"a quarter accepted", 2, 25, 75, (100 - 2*25) / 101.0},
		{"none accepted", 2, 0, 100, 100 / 101.0},
		{"a quarter accepted, at K = 1.1", 1.1, 25, 75, (100 - 1.1*25) / 101.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThrottler(t, &clock{}, tt.k)
			record(th, accepted, tt.accepts)
			record(th, throttled, tt.refused)
			assert.InDelta(t, tt.want, th.RejectProbability(), 1e-9)
		})
	}
}

func TestThrottlerRefusesWithItsProbabilityAndCountsRefusals(t *testing.T) {
	th := newThrottler(t, &clock{}, 2)
	record(th, throttled, 1000) // p = 1000/1001
	refused := 0
	for range 1000 {
		if !th.Acquire(context.Background(), time.Minute) {
			refused++
		}
	}
	assert.Greater(t, refused, 990, "nearly all refused")
	assert.InDelta(t, float64(1000+refused)/float64(2001), th.RejectProbability(), 0.01,
		"refusals count as requests: a client that retries them keeps itself locked out")
}

func TestThrottlerForgetsOutsideItsWindow(t *testing.T) {
	c := &clock{}
	th := newThrottler(t, c, 2)
	record(th, throttled, 100)
	require.Greater(t, th.RejectProbability(), 0.9)
	c.now += 5 * time.Second
	record(th, accepted, 1)
	assert.Greater(t, th.RejectProbability(), 0.9, "half a window later the throttles still count")
	c.now += 6 * time.Second
	record(th, accepted, 1)
	assert.Zero(t, th.RejectProbability(), "a window later they are forgotten")
}

func TestThrottlerIsDeterministicForASeed(t *testing.T) {
	run := func() []bool {
		th := newThrottler(t, &clock{}, 2)
		record(th, throttled, 10)
		var out []bool
		for range 20 {
			out = append(out, th.Acquire(context.Background(), 0))
		}
		return out
	}
	assert.Equal(t, run(), run())
}

func TestThrottlerConfigIsValidated(t *testing.T) {
	_, err := limit.NewThrottler(limit.ThrottlerConfig{K: 0.5})
	assert.EqualError(t, err, "limit.ThrottlerConfig.K = 0.5: must be in [1, 1e9]")
	_, err = limit.NewThrottler(limit.ThrottlerConfig{Window: -time.Second})
	assert.EqualError(t, err, "limit.ThrottlerConfig.Window = -1s: must be positive (at least 10ns)")
}

func TestThrottlerWorksOnAClockThatReadsBelowZero(t *testing.T) {
	c := &clock{now: -time.Hour}
	th := newThrottler(t, c, 2)
	record(th, throttled, 100)
	assert.Greater(t, th.RejectProbability(), 0.9)
	c.now += 11 * time.Second
	record(th, accepted, 1)
	assert.Zero(t, th.RejectProbability())
}
