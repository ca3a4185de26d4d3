package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dependency counts the calls it receives and fails every one of them while
// down.
type dependency struct {
	calls atomic.Int64
	down  atomic.Bool
}

func (d *dependency) call(context.Context) error {
	d.calls.Add(1)
	if d.down.Load() {
		return errReset
	}
	return nil
}

// storm makes callers concurrent calls of a Retrier to dep and counts how
// each ended.
func storm(t *testing.T, callers int, r *retry.Retrier, dep *dependency) (exhausted, denied int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			err := r.Do(t.Context(), dep.call)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, retry.ErrBudget):
				denied++
			case errors.Is(err, retry.ErrExhausted):
				exhausted++
			default:
				t.Errorf("unexpected result: %v", err)
			}
		})
	}
	wg.Wait()
	return exhausted, denied
}

func retrier(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{retry.WithMaxAttempts(4), retry.WithBackoff(backoff.Constant(ms)), retry.WithJitterSource(jitter.NewSeeded(1))}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

func TestBudgetsBoundTheCallsToADeadDependency(t *testing.T) {
	const callers = 1000 // each with 3 retries
	t.Run("without a budget every caller retries: 4 calls each", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			exhausted, denied := storm(t, callers, retrier(t, retry.WithoutBudget()), dep)
			assert.Equal(t, int64(4*callers), dep.calls.Load())
			assert.Equal(t, callers, exhausted)
			assert.Zero(t, denied)
		})
	})
	t.Run("a token bucket allows first attempts plus its retries", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{}) // 500 tokens, 5 a failure, no retry at 250
			require.NoError(t, err)
			dep := &dependency{}
			dep.down.Store(true)
			exhausted, denied := storm(t, callers, retrier(t, retry.WithBudget(bucket)), dep)
			// Every failure costs 5 tokens, so only the first (500-250)/5 = 50
			// failures leave the bucket above its threshold: at most 50 retries.
			assert.LessOrEqual(t, dep.calls.Load(), int64(callers+50))
			assert.GreaterOrEqual(t, dep.calls.Load(), int64(callers))
			assert.Equal(t, callers, exhausted+denied)
			assert.GreaterOrEqual(t, denied, callers-50, "the rest stop at once, told the budget is exhausted")
			assert.Equal(t, uint64(denied), bucket.State().Denied)
			t.Logf("token bucket: %d calls for %d callers (%d without a budget); %d denied", dep.calls.Load(), callers, 4*callers, denied)
		})
	})
	t.Run("a ratio budget allows a share of first attempts plus its floor", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ratio, err := budget.NewRatio(budget.RatioConfig{}) // 20%, 10s, 10/s
			require.NoError(t, err)
			dep := &dependency{}
			dep.down.Store(true)
			exhausted, denied := storm(t, callers, retrier(t, retry.WithBudget(ratio)), dep)
			bound := int64(callers + callers/5 + 10*10)
			assert.LessOrEqual(t, dep.calls.Load(), bound, "first attempts + 20%% + the floor")
			assert.Equal(t, callers, exhausted+denied)
			assert.Positive(t, denied)
			t.Logf("ratio budget: %d calls for %d callers (bound %d, %d without a budget); %d denied", dep.calls.Load(), callers, bound, 4*callers, denied)
		})
	})
	t.Run("one budget is shared by several retriers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
			require.NoError(t, err)
			dep := &dependency{}
			dep.down.Store(true)
			a, b := retrier(t, retry.WithBudget(bucket)), retrier(t, retry.WithBudget(bucket))
			storm(t, callers/2, a, dep)
			storm(t, callers/2, b, dep)
			assert.LessOrEqual(t, dep.calls.Load(), int64(callers+50))
		})
	})
}

func TestTokenBucketRecoversWhenTheDependencyDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 1, Refund: 1})
		require.NoError(t, err)
		dep := &dependency{}
		dep.down.Store(true)
		r := retrier(t, retry.WithBudget(bucket))
		for range 20 {
			_ = r.Do(t.Context(), dep.call)
		}
		assert.False(t, bucket.Allow(), "drained")
		dep.down.Store(false)
		for range 10 {
			require.NoError(t, r.Do(t.Context(), dep.call))
		}
		assert.True(t, bucket.Allow(), "successes refilled it")
	})
}

func TestBudgetRefusalIsDistinctFromExhaustion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 2, Cost: 1, Threshold: 1})
		require.NoError(t, err)
		s := always(errReset)
		err = retrier(t, retry.WithBudget(bucket)).Do(t.Context(), s.op)
		assert.Equal(t, 1, s.calls, "the first failure takes the bucket to its threshold")
		assert.ErrorIs(t, err, retry.ErrBudget)
		assert.NotErrorIs(t, err, retry.ErrExhausted)
		assert.ErrorIs(t, err, errReset, "the last error is kept")
		assert.Equal(t, "retry: retry budget exhausted after 1 attempt(s) in 0s: connection reset by peer", err.Error())
	})
}

func TestPermanentFailuresDoNotDrainTheBudget(t *testing.T) {
	bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	require.NoError(t, err)
	r := retrier(t, retry.WithBudget(bucket))
	for range 100 {
		_ = r.Do(t.Context(), always(httpErr(400, -1)).op)
	}
	assert.Equal(t, 500.0, bucket.State().Tokens, "a 400 says the dependency is up")
}

func TestUpstreamErrorRule(t *testing.T) {
	upstream := &classify.StatusError{Code: 502, Kind: classify.KindUpstreamError}
	t.Run("not retried by default", func(t *testing.T) {
		s := always(upstream)
		err := retrier(t, retry.WithMaxAttempts(10)).Do(t.Context(), s.op)
		assert.Equal(t, 1, s.calls)
		assert.ErrorIs(t, err, retry.ErrPermanent)
		assert.ErrorIs(t, err, classify.ErrUpstream)
	})
	t.Run("the opt-in allows one extra attempt whatever MaxAttempts says", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := always(upstream)
			err := retrier(t, retry.WithMaxAttempts(10), retry.WithClassifier(classify.UpstreamOnce)).Do(t.Context(), s.op)
			assert.Equal(t, 2, s.calls)
			assert.ErrorIs(t, err, retry.ErrClassLimit)
		})
	})
	t.Run("a spend cap is never retried, not even in general mode", func(t *testing.T) {
		s := always(&classify.StatusError{Code: 429, Kind: classify.KindInsufficientQuota})
		err := retrier(t).Do(t.Context(), s.op)
		assert.Equal(t, 1, s.calls)
		assert.ErrorIs(t, err, retry.ErrPermanent)
		assert.ErrorIs(t, err, classify.ErrSpendCap)
	})
}

func TestAPolicyAfterABudgetKeepsTheBudget(t *testing.T) {
	// The budget is not part of the policy: a preset given after it does not
	// silently drop it.
	bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 10, Threshold: 5})
	require.NoError(t, err)
	r, err := retry.New(retry.WithBudget(bucket), retry.WithPolicy(policy.DBWrite()), retry.WithBackoff(backoff.Constant(0)))
	require.NoError(t, err)
	s := always(errReset)
	err = r.Do(t.Context(), s.op)
	assert.ErrorIs(t, err, retry.ErrBudget, "the first failure emptied the bucket")
	assert.Equal(t, 1, s.calls)
}

// Every Retrier has a retry budget of its own unless told otherwise: a token
// bucket with package budget's defaults (500 tokens; a transient failure
// takes 5, a success puts 1 back; no retry at or below 250).
func TestEveryRetrierHasADefaultBudget(t *testing.T) {
	sequential := func(t *testing.T, r *retry.Retrier, dep *dependency, calls int) (refused int) {
		t.Helper()
		for range calls {
			if errors.Is(r.Do(t.Context(), dep.call), retry.ErrBudget) {
				refused++
			}
		}
		return refused
	}
	t.Run("a dependency that is down stops being retried within a few dozen failures", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			r := retrier(t) // 4 attempts a call
			refused := sequential(t, r, dep, 100)
			// 50 failures take the bucket from 500 to 250: the 12 calls
			// before make 4 attempts each, the 13th 2 (its second failure
			// reaches 250), and the 87 after it one each.
			assert.Equal(t, int64(12*4+2+87), dep.calls.Load(), "against 400 without a budget")
			assert.Equal(t, 88, refused)
		})
	})
	t.Run("WithoutBudget retries whatever the share of failures", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			refused := sequential(t, retrier(t, retry.WithoutBudget()), dep, 100)
			assert.Equal(t, int64(400), dep.calls.Load())
			assert.Zero(t, refused)
		})
	})
	t.Run("successes refill it: retries come back once the dependency does", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			r := retrier(t)
			require.Positive(t, sequential(t, r, dep, 200), "drained")
			dep.down.Store(false)
			assert.Zero(t, sequential(t, r, dep, 300), "each success puts a token back: 300 from empty")
			dep.down.Store(true)
			before := dep.calls.Load()
			assert.Zero(t, sequential(t, r, dep, 1), "above the threshold again: the call is retried")
			assert.Equal(t, int64(4), dep.calls.Load()-before)
		})
	})
	t.Run("a Retrier derived with With shares it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			r := retrier(t)
			once, err := r.With(retry.WithMaxAttempts(2))
			require.NoError(t, err)
			sequential(t, once, dep, 50) // 50 failures through the derived Retrier
			before := dep.calls.Load()
			assert.Equal(t, 1, sequential(t, r, dep, 1), "the original's budget is drained too")
			assert.Equal(t, int64(1), dep.calls.Load()-before)
		})
	})
	t.Run("WithBudget replaces it, and a later WithoutBudget removes that", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dep := &dependency{}
			dep.down.Store(true)
			sequential(t, retrier(t, retry.WithBudget(refuseAll{}), retry.WithoutBudget()), dep, 10)
			assert.Equal(t, int64(40), dep.calls.Load())
		})
	})
}

// refuseAll is a budget that refuses every retry.
type refuseAll struct{}

func (refuseAll) Allow() bool           { return false }
func (refuseAll) Record(budget.Attempt) {}
