package main

import (
	"math/rand/v2"
	"time"

	"github.com/retrykit/retry/limit"
)

// A strategy is what paces a run's attempts: nothing, or limiters shared by
// every client or one per client. make returns, for a run of n clients on
// the clock now, the limiter of each client (nil: none).
type strategy struct {
	name, scope string
	make        func(n int, now func() time.Duration, rng *rand.Rand) func(c int32) limit.Limiter
}

var strategies = []strategy{
	{"retry-only", "-", func(int, func() time.Duration, *rand.Rand) func(int32) limit.Limiter { return nil }},
	{"aws-port", "shared", shared(func(now func() time.Duration, _ *rand.Rand) limit.Limiter { return newAWSPort(now) })},
	{"aws-port", "per-client", perClient(func(now func() time.Duration, _ *rand.Rand) limit.Limiter { return newAWSPort(now) })},
	{"adaptive", "shared", shared(newAdaptive)},
	{"adaptive", "per-client", perClient(newAdaptive)},
	{"throttler", "shared", shared(newThrottler)},
	{"adaptive+start", "shared", shared(newStarting)}, // last: the rows before keep their seeds
}

func newAdaptive(now func() time.Duration, _ *rand.Rand) limit.Limiter {
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Now: now})
	if err != nil {
		panic(err) // the configuration is a constant
	}
	return a
}

// newStarting is the library's limit.Adaptive with a slow start: it begins
// at 10 attempts a second, a tenth of the limit, and doubles its rate every
// 100ms while nothing is throttled.
func newStarting(now func() time.Duration, _ *rand.Rand) limit.Limiter {
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Start: 10, Now: now})
	if err != nil {
		panic(err)
	}
	return a
}

func newThrottler(now func() time.Duration, rng *rand.Rand) limit.Limiter {
	t, err := limit.NewThrottler(limit.ThrottlerConfig{Now: now, Rand: rng.Uint64})
	if err != nil {
		panic(err)
	}
	return t
}

type maker func(now func() time.Duration, rng *rand.Rand) limit.Limiter

func shared(mk maker) func(int, func() time.Duration, *rand.Rand) func(int32) limit.Limiter {
	return func(_ int, now func() time.Duration, rng *rand.Rand) func(int32) limit.Limiter {
		l := mk(now, rng)
		return func(int32) limit.Limiter { return l }
	}
}

func perClient(mk maker) func(int, func() time.Duration, *rand.Rand) func(int32) limit.Limiter {
	return func(n int, now func() time.Duration, rng *rand.Rand) func(int32) limit.Limiter {
		ls := make([]limit.Limiter, n)
		for i := range ls {
			ls[i] = mk(now, rng)
		}
		return func(c int32) limit.Limiter { return ls[c] }
	}
}
