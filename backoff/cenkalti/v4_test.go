package cenkalti_test

// Test cases of cenkalti/backoff v4.3.0 (exponential_test.go, retry_test.go),
// ported: the same configuration through From, Classify and retry.Do, and the
// same expectations, except where a comment says how and why this library
// differs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"testing/synctest"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff/cenkalti"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exponential_test.go, TestBackOff: 500ms doubling to 5s, each wait within
// ±10% of the interval.
func TestV4BackOff(t *testing.T) {
	v4 := cbackoff.NewExponentialBackOff()
	v4.InitialInterval = 500 * ms
	v4.RandomizationFactor = 0.1
	v4.Multiplier = 2
	v4.MaxInterval = 5 * time.Second
	v4.MaxElapsedTime = 15 * time.Minute
	s, j, err := cenkalti.From(v4)
	require.NoError(t, err)
	expected := []time.Duration{500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000, 5000}
	for i, e := range expected {
		e *= ms
		assert.Equal(t, e, s.Delay(i+1), "the interval of attempt %d", i+1)
		lo, hi := e-e/10, e+e/10
		for _, r := range []uint64{0, 1 << 63, math.MaxUint64} {
			d := j.Apply(s.Delay(i+1), 0, r)
			assert.True(t, lo <= d && d <= hi, "attempt %d: %v not in [%v, %v]", i+1, d, lo, hi)
		}
	}
}

// exponential_test.go, TestGetRandomizedInterval: v4 draws from [1, 3] for an
// interval of 2ns and a factor of 0.5, each third of its random number giving
// 1, 2 or 3. Proportional draws from [1, 3): the same bounds but the upper one
// excluded, so at this scale only 1 and 2 — a nanosecond no caller can see.
func TestV4RandomizedInterval(t *testing.T) {
	j := jitter.Proportional(0.5)
	at := func(u float64) time.Duration { return j.Apply(2, 0, uint64(u*(1<<63))*2) }
	tests := []struct {
		u      float64
		v4, us time.Duration
	}{
		{0, 1, 1}, {0.33, 1, 1},
		{0.34, 2, 1}, {0.66, 2, 2},
		{0.67, 3, 2}, {0.99, 3, 2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.us, at(tt.u), "random %v (v4: %v)", tt.u, tt.v4)
	}
}

// exponential_test.go, TestMaxElapsedTime: once the elapsed time plus the next
// wait passes MaxElapsedTime, v4 stops. retry.WithMaxElapsed does the same,
// in the policy.
func TestV4MaxElapsedTime(t *testing.T) {
	v4 := cbackoff.NewExponentialBackOff()
	s, j, err := cenkalti.From(v4)
	require.NoError(t, err)
	p := policy.Policy{MaxAttempts: 100, Backoff: s, Jitter: j, MaxElapsed: v4.MaxElapsedTime}
	transient := classify.Decision{Verdict: classify.Retry, Reason: "x"}
	_, stop := p.Next(policy.State{Attempt: 1, Elapsed: 10000 * time.Second}, transient, 0)
	assert.Equal(t, policy.StopElapsed, stop)
	_, stop = p.Next(policy.State{Attempt: 1, Elapsed: time.Second}, transient, 0)
	assert.Equal(t, policy.Continue, stop)
}

// exponential_test.go, TestBackOffOverflow: an interval that would overflow
// is the max interval.
func TestV4BackOffOverflow(t *testing.T) {
	v4 := cbackoff.NewExponentialBackOff()
	v4.InitialInterval = math.MaxInt64 / 2
	v4.Multiplier = 2.1
	v4.MaxInterval = math.MaxInt64
	s, _, err := cenkalti.From(v4)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(math.MaxInt64), s.Delay(2))
}

// retry_test.go, TestRetry: an operation that succeeds on its third call,
// with v4's default exponential backoff.
func TestV4Retry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, j, err := cenkalti.From(cbackoff.NewExponentialBackOff())
		require.NoError(t, err)
		const successOn = 3
		i := 0
		err = retry.Do(t.Context(), func(context.Context) error {
			if i++; i == successOn {
				return nil
			}
			return errors.New("error")
		}, retry.WithBackoff(s), retry.WithJitter(j), retry.WithMaxAttempts(successOn))
		assert.NoError(t, err)
		assert.Equal(t, successOn, i)
	})
}

// retry_test.go, TestRetryContext: the operation cancels the context on its
// third call; the call ends with context.Canceled after three calls.
func TestV4RetryContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const cancelOn = 3
		i := 0
		err := retry.Do(ctx, func(context.Context) error {
			if i++; i == cancelOn {
				cancel()
			}
			return fmt.Errorf("error (%d)", i)
		}, retry.WithBackoff(must(cenkalti.From(cbackoff.NewConstantBackOff(ms)))), retry.WithMaxAttempts(10))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, cancelOn, i)
	})
}

// retry_test.go, TestRetryPermanent: with at most one retry, an operation is
// retried only if its error is not marked permanent. v4's Retry returns the
// error a PermanentError wraps; retry.Do returns a *retry.Error whose Last is
// the marked error, and both match errors.Is(err, io.EOF).
func TestV4RetryPermanent(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		shouldRetry bool
	}{
		{"io.EOF", io.EOF, true},
		{"Permanent(io.EOF)", cbackoff.Permanent(io.EOF), false},
		{"Wrapped: Permanent(io.EOF)", fmt.Errorf("Wrapped error: %w", cbackoff.Permanent(io.EOF)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				err := retry.Do(t.Context(), func(context.Context) error { calls++; return tt.err },
					retry.WithClassifier(cenkalti.Classify), retry.WithMaxAttempts(2))
				assert.Equal(t, tt.shouldRetry, calls > 1, "calls: %d", calls)
				assert.ErrorIs(t, err, io.EOF)
				if !tt.shouldRetry {
					assert.ErrorIs(t, err, retry.ErrPermanent)
					var re *retry.Error
					require.ErrorAs(t, err, &re)
					assert.Equal(t, classify.ReasonMarkedPermanent, re.Decision.Reason)
				}
			})
		})
	}
	t.Run("nil test", func(t *testing.T) {
		calls := 0
		assert.NoError(t, retry.Do(t.Context(), func(context.Context) error { calls++; return nil }, retry.WithClassifier(cenkalti.Classify)))
		assert.Equal(t, 1, calls)
	})
}

func must[S, J any](s S, _ J, err error) S {
	if err != nil {
		panic(err)
	}
	return s
}
