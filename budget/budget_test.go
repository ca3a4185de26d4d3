package budget_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	success = budget.Attempt{Outcome: budget.Succeeded}
	failure = budget.Attempt{Outcome: budget.Failed}
	timeOut = budget.Attempt{Outcome: budget.TimedOut}
	other   = budget.Attempt{Outcome: budget.Other}
)

func TestTokenBucketDefaults(t *testing.T) {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	require.NoError(t, err)
	assert.Equal(t, budget.TokenBucketState{Tokens: 500, Capacity: 500, Threshold: 250}, b.State())
	b.Record(failure)
	assert.Equal(t, 495.0, b.State().Tokens, "a failure costs 5")
	b.Record(timeOut)
	assert.Equal(t, 485.0, b.State().Tokens, "a timeout costs 10")
	b.Record(success)
	assert.Equal(t, 486.0, b.State().Tokens, "a success refunds 1")
	b.Record(other)
	assert.Equal(t, 486.0, b.State().Tokens, "a permanent failure says nothing of the dependency")
}

func TestTokenBucketStopsRetriesAtItsThresholdAndRecovers(t *testing.T) {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 1, Refund: 0.5})
	require.NoError(t, err)
	for i := range 5 {
		assert.True(t, b.Allow(), "above the threshold after %d failures", i)
		b.Record(failure)
	}
	assert.False(t, b.Allow(), "at the threshold (5 of 10)")
	assert.False(t, b.Allow())
	assert.Equal(t, uint64(2), b.State().Denied)
	for range 100 {
		b.Record(failure)
	}
	assert.Equal(t, 0.0, b.State().Tokens, "never below zero")
	for range 11 {
		b.Record(success)
	}
	assert.True(t, b.Allow(), "5.5 tokens after 11 successes")
	for range 100 {
		b.Record(success)
	}
	assert.Equal(t, 10.0, b.State().Tokens, "never above the capacity")
}

func TestTokenBucketConfigIsValidated(t *testing.T) {
	tests := []struct {
		name    string
		c       budget.TokenBucketConfig
		wantErr string
	}{
		{"negative capacity", budget.TokenBucketConfig{Capacity: -1}, "budget.TokenBucketConfig.Capacity = -1: must be a non-negative, finite number of tokens"},
		{"negative cost", budget.TokenBucketConfig{Cost: -5}, "budget.TokenBucketConfig.Cost = -5: must be a non-negative, finite number of tokens"},
		{"a threshold at the capacity", budget.TokenBucketConfig{Capacity: 10, Threshold: 10}, "budget.TokenBucketConfig.Threshold = 10: must be below Capacity (10)"},
		{"an infinite refund", budget.TokenBucketConfig{Refund: 1e300}, "budget.TokenBucketConfig.Refund = 1e+300: must be a non-negative, finite number of tokens"},
		{"a NaN timeout cost", budget.TokenBucketConfig{TimeoutCost: nan()}, "budget.TokenBucketConfig.TimeoutCost = NaN: must be a non-negative, finite number of tokens"},
		{"a capacity below a thousandth", budget.TokenBucketConfig{Capacity: 0.0001}, "budget.TokenBucketConfig.Capacity = 0.0001: must be at least 0.001 (tokens are counted in thousandths)"},
		{"a threshold that rounds to the capacity", budget.TokenBucketConfig{Capacity: 0.001, Threshold: 0.0009}, "budget.TokenBucketConfig.Threshold = 0.0009: must be below Capacity (0.001)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := budget.NewTokenBucket(tt.c)
			assert.True(t, b == nil, "no budget")
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
		})
	}
}

func TestTokenBucketIsSafeForConcurrentUse(t *testing.T) {
	b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 1000, Cost: 1, Refund: 1})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Record(failure)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 200.0, b.State().Tokens, "no update lost: 800 failures of 1 token")
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestRatioBudgetAllowsAShareOfRecentCalls(t *testing.T) {
	b, err := budget.NewRatio(budget.RatioConfig{Percent: 0.2, Window: 10 * time.Second, MinPerSecond: -1})
	require.NoError(t, err)
	for range 100 {
		b.RecordAt(t0, success)
	}
	b.RecordAt(t0, budget.Attempt{Retry: true, Outcome: budget.Failed}) // retries are counted by Allow, not Record
	allowed := 0
	for b.AllowAt(t0.Add(time.Second)) {
		allowed++
	}
	assert.Equal(t, 20, allowed, "20% of 100 first attempts")
	st := b.StateAt(t0.Add(time.Second))
	assert.Equal(t, budget.RatioState{Calls: 100, Retries: 20, Ratio: 0.2, Left: 0, Denied: 1}, st)

	later := t0.Add(11 * time.Second)
	assert.False(t, b.AllowAt(later), "the calls left the window with the retries: nothing to take a share of")
	for range 10 {
		b.RecordAt(later, success)
	}
	assert.True(t, b.AllowAt(later), "10 new calls allow 2 retries")
	assert.True(t, b.AllowAt(later))
	assert.False(t, b.AllowAt(later))
}

func TestRatioBudgetKeepsAFloorForQuietClients(t *testing.T) {
	b, err := budget.NewRatio(budget.RatioConfig{MinPerSecond: 1, Window: 10 * time.Second})
	require.NoError(t, err)
	allowed := 0
	for b.AllowAt(t0) {
		allowed++
	}
	assert.Equal(t, 10, allowed, "1 retry a second over a 10s window, without any call")
	assert.False(t, b.AllowAt(t0.Add(9*time.Second)), "still within the window")
	assert.True(t, b.AllowAt(t0.Add(11*time.Second)), "the window slid past the retries")
}

func TestRatioBudgetDefaults(t *testing.T) {
	b, err := budget.NewRatio(budget.RatioConfig{})
	require.NoError(t, err)
	for range 1000 {
		b.RecordAt(t0, success)
	}
	assert.Equal(t, int64(300), b.StateAt(t0).Left, "20% of 1000, plus 10 a second over 10s")
}

func TestRatioBudgetNeverOverspendsUnderConcurrency(t *testing.T) {
	b, err := budget.NewRatio(budget.RatioConfig{Percent: 0.5, MinPerSecond: -1})
	require.NoError(t, err)
	for range 200 {
		b.RecordAt(t0, success)
	}
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if b.AllowAt(t0) {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(100), granted.Load(), "exactly 50% of 200, whatever the interleaving")
	assert.Equal(t, uint64(700), b.StateAt(t0).Denied)
}

func TestRatioBudgetConfigIsValidated(t *testing.T) {
	tests := []struct {
		name    string
		c       budget.RatioConfig
		wantErr string
	}{
		{"a percent above one", budget.RatioConfig{Percent: 1.5}, "budget.RatioConfig.Percent = 1.5: must be in (0, 1]"},
		{"a negative percent", budget.RatioConfig{Percent: -0.1}, "budget.RatioConfig.Percent = -0.1: must be in (0, 1]"},
		{"a negative window", budget.RatioConfig{Window: -time.Second}, "budget.RatioConfig.Window = -1s: must be positive (at least 10ns)"},
		{"a NaN floor", budget.RatioConfig{MinPerSecond: nan()}, "budget.RatioConfig.MinPerSecond = NaN: must be a number of retries per second, at most 1e9"},
		{"a floor too large over the window", budget.RatioConfig{MinPerSecond: 1e9, Window: 1000 * 24 * time.Hour},
			"budget.RatioConfig.MinPerSecond = 1e+09: times Window (24000h0m0s) must be at most 2^53 retries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := budget.NewRatio(tt.c)
			assert.True(t, b == nil, "no budget")
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
		})
	}
}

// TestBudgetsNotMadeByTheirConstructor walks every method of a zero and a
// nil budget: none panics, none allows a retry, none counts anything, and
// Validate reports them.
func TestBudgetsNotMadeByTheirConstructor(t *testing.T) {
	var nilBucket *budget.TokenBucket
	var nilRatio *budget.Ratio
	zeroBucket, zeroRatio := new(budget.TokenBucket), new(budget.Ratio)
	tests := []struct {
		name string
		call func() any
		want any
	}{
		{"TokenBucket{}.Validate", func() any { return zeroBucket.Validate().Error() }, "budget.TokenBucket({}): must be made by NewTokenBucket: the zero value has no capacity"},
		{"(*TokenBucket)(nil).Validate", func() any { return nilBucket.Validate().Error() }, "budget.TokenBucket(<nil>): must be made by NewTokenBucket"},
		{"Ratio{}.Validate", func() any { return zeroRatio.Validate().Error() }, "budget.Ratio({}): must be made by NewRatio: the zero value has no window"},
		{"(*Ratio)(nil).Validate", func() any { return nilRatio.Validate().Error() }, "budget.Ratio(<nil>): must be made by NewRatio"},
		{"TokenBucket{}.Record", func() any { zeroBucket.Record(success); zeroBucket.Record(failure); return zeroBucket.State().Tokens }, 0.0},
		{"TokenBucket{}.Allow", func() any { return zeroBucket.Allow() }, false},
		{"(*TokenBucket)(nil).Record", func() any { nilBucket.Record(success); return nilBucket.State() }, budget.TokenBucketState{}},
		{"(*TokenBucket)(nil).Allow", func() any { return nilBucket.Allow() }, false},
		{"Ratio{}.Record", func() any { zeroRatio.Record(success); return zeroRatio.State() }, budget.RatioState{}},
		{"Ratio{}.RecordAt", func() any { zeroRatio.RecordAt(t0, success); return zeroRatio.StateAt(t0) }, budget.RatioState{}},
		{"Ratio{}.Allow", func() any { return zeroRatio.Allow() }, false},
		{"Ratio{}.AllowAt", func() any { return zeroRatio.AllowAt(t0) }, false},
		{"(*Ratio)(nil).Record", func() any { nilRatio.Record(success); nilRatio.RecordAt(t0, success); return nilRatio.State() }, budget.RatioState{}},
		{"(*Ratio)(nil).Allow", func() any { return [2]bool{nilRatio.Allow(), nilRatio.AllowAt(t0)} }, [2]bool{false, false}},
		{"(*Ratio)(nil).StateAt", func() any { return nilRatio.StateAt(t0) }, budget.RatioState{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.call())
		})
	}
	for _, v := range []interface{ Validate() error }{zeroBucket, nilBucket, zeroRatio, nilRatio} {
		assert.ErrorIs(t, v.Validate(), argerr.ErrInvalid, "%#v", v)
	}
	made := []interface{ Validate() error }{must(budget.NewTokenBucket(budget.TokenBucketConfig{})), must(budget.NewRatio(budget.RatioConfig{}))}
	for _, v := range made {
		assert.NoError(t, v.Validate(), "%T made by its constructor", v)
	}
}

// retry.WithBudget(new(budget.Ratio)) divided by zero inside retry.Do. Now
// WithBudget refuses it (Validate) before any attempt, and the budget's own
// methods would not panic either (TestBudgetsNotMadeByTheirConstructor).
func TestAZeroBudgetIsRefusedByTheRetryLoop(t *testing.T) {
	for _, b := range []budget.Budget{new(budget.Ratio), new(budget.TokenBucket), (*budget.Ratio)(nil), (*budget.TokenBucket)(nil)} {
		calls := 0
		err := retry.Do(t.Context(), func(context.Context) error { calls++; return errors.New("transient") },
			retry.WithBudget(b), retry.WithBackoff(backoff.Constant(0)))
		assert.ErrorIs(t, err, retry.ErrInvalid, "%T", b)
		assert.Zero(t, calls, "%T: nothing ran", b)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func nan() float64 { zero := 0.0; return zero / zero }

func BenchmarkBudget(b *testing.B) {
	b.Run("token-bucket/success", func(b *testing.B) {
		bucket, _ := budget.NewTokenBucket(budget.TokenBucketConfig{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				bucket.Record(success)
			}
		})
	})
	b.Run("token-bucket/allow", func(b *testing.B) {
		bucket, _ := budget.NewTokenBucket(budget.TokenBucketConfig{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				bucket.Allow()
			}
		})
	})
	b.Run("ratio/first-attempt", func(b *testing.B) {
		ratio, _ := budget.NewRatio(budget.RatioConfig{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ratio.Record(success)
			}
		})
	})
	b.Run("ratio/first-attempt-at", func(b *testing.B) {
		ratio, _ := budget.NewRatio(budget.RatioConfig{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ratio.RecordAt(t0, success)
			}
		})
	})
}
