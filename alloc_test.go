package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func succeed(context.Context) error { return nil }

func TestFirstAttemptSuccessAllocatesNothing(t *testing.T) {
	r, err := retry.New()
	require.NoError(t, err)
	ctx := t.Context()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = r.Do(ctx, succeed) }), "(*Retrier).Do")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_, _, _ = retry.Value(ctx, r, func(context.Context) (int, error) { return 1, nil })
	}), "Value")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_, _ = retry.DoValue(ctx, func(context.Context) (int, error) { return 1, nil })
	}), "DoValue without options")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = retry.Do(ctx, succeed) }), "Do without options")
}

func TestRetriesAllocateOnlyTheTimer(t *testing.T) {
	// Without a budget: every call of this test fails twice, which a budget
	// would soon refuse (it would measure the refusals).
	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Nanosecond)), retry.WithJitter(jitter.None{}), retry.WithoutBudget())
	require.NoError(t, err)
	transient := errors.New("transient")
	twoRetries := func(ctx context.Context) float64 {
		return testing.AllocsPerRun(200, func() {
			n := 0
			_ = r.Do(ctx, func(context.Context) error {
				if n++; n <= 2 {
					return transient
				}
				return nil
			})
		})
	}
	assert.Zero(t, twoRetries(context.Background()), "a context that never ends needs no timer")
	// time.NewTimer allocates the timer, its channel and the channel's buffer:
	// once per call, however many attempts.
	assert.LessOrEqual(t, twoRetries(t.Context()), 3.0, "one timer per call, reused across attempts")
}

func TestComputingADelayAllocatesNothing(t *testing.T) {
	p := policy.Policy{Backoff: backoff.Exponential{Base: 100 * time.Millisecond, MaxDelay: 30 * time.Second}}
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = p.Delay(3, 0, 0, 12345) }))
}

var errBench = errors.New("transient")

func BenchmarkDoSuccess(b *testing.B) {
	r, _ := retry.New()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Do(ctx, succeed)
	}
}

func BenchmarkDoParallel(b *testing.B) {
	r, _ := retry.New()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = r.Do(ctx, succeed)
		}
	})
}

func BenchmarkDoTwoRetries(b *testing.B) {
	// Without a budget, which would refuse the retries of a call that always
	// fails twice.
	r, _ := retry.New(retry.WithBackoff(backoff.Constant(time.Nanosecond)), retry.WithJitter(jitter.None{}), retry.WithoutBudget())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_ = r.Do(ctx, func(context.Context) error {
			if n++; n <= 2 {
				return errBench
			}
			return nil
		})
	}
}

func BenchmarkValueSuccess(b *testing.B) {
	r, _ := retry.New()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = retry.Value(ctx, r, func(context.Context) (int, error) { return 1, nil })
	}
}

func BenchmarkDelay(b *testing.B) {
	p := policy.Policy{Backoff: backoff.Exponential{Base: 100 * time.Millisecond, MaxDelay: 30 * time.Second}, Jitter: jitter.Full{}}
	b.ReportAllocs()
	var sink time.Duration
	r := uint64(0x9e3779b97f4a7c15)
	i := 0
	for b.Loop() {
		r = r*6364136223846793005 + 1442695040888963407
		sink += p.Delay(i&7+1, 0, 0, r)
		i++
	}
	_ = sink
}

func TestALimiterThatNeedNotWaitAllocatesNothing(t *testing.T) {
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{})
	require.NoError(t, err)
	th, err := limit.NewThrottler(limit.ThrottlerConfig{})
	require.NoError(t, err)
	ctx := t.Context()
	for _, l := range []limit.Limiter{a, th} {
		r, err := retry.New(retry.WithLimiter(l))
		require.NoError(t, err)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = r.Do(ctx, succeed) }), "%T", l)
	}
}
