package cenkalti_test

import (
	"context"
	"errors"
	"testing"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/backoff/cenkalti"
	"github.com/retrykit/retry/jitter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

func TestBackOffFollowsTheSchedule(t *testing.T) {
	b := cenkalti.BackOff(backoff.Exponential{Base: 10 * ms, MaxDelay: 50 * ms}, nil)
	want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms}
	for i, w := range want {
		assert.Equal(t, w, b.NextBackOff(), "call %d", i+1)
	}
	b.Reset()
	assert.Equal(t, 10*ms, b.NextBackOff(), "Reset starts over")
}

func TestBackOffAppliesTheJitter(t *testing.T) {
	b := cenkalti.BackOff(backoff.Constant(100*ms), jitter.Full{})
	for range 100 {
		d := b.NextBackOff()
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.Less(t, d, 100*ms)
	}
}

func TestBackOffDrivesV4Retry(t *testing.T) {
	calls := 0
	op := func() error {
		calls++
		if calls < 3 {
			return errors.New("transient")
		}
		return nil
	}
	b := cbackoff.WithMaxRetries(cenkalti.BackOff(backoff.Constant(ms), nil), 5)
	require.NoError(t, cbackoff.Retry(op, b))
	assert.Equal(t, 3, calls)
}

func TestFromMatchesV4Sequence(t *testing.T) {
	v4 := cbackoff.NewExponentialBackOff()
	v4.RandomizationFactor = 0 // compare the nominal sequences
	v4.MaxElapsedTime = 0
	v4.Reset()
	s, j, err := cenkalti.From(v4)
	require.NoError(t, err)
	assert.Equal(t, jitter.Proportional(0), j)
	for n := 1; n <= 20; n++ {
		// v4 truncates at every step; the pure schedule does not.
		assert.InDelta(t, float64(v4.NextBackOff()), float64(s.Delay(n)), float64(time.Microsecond), "attempt %d", n)
	}
}

func TestFromKeepsTheRandomizationFactor(t *testing.T) {
	v4 := cbackoff.NewExponentialBackOff()
	_, j, err := cenkalti.From(v4)
	require.NoError(t, err)
	assert.Equal(t, jitter.Proportional(cbackoff.DefaultRandomizationFactor), j)
}

func TestFromOtherTypes(t *testing.T) {
	s, j, err := cenkalti.From(cbackoff.NewConstantBackOff(time.Second))
	require.NoError(t, err)
	assert.Equal(t, backoff.Constant(time.Second), s)
	assert.Equal(t, jitter.None{}, j)

	s, _, err = cenkalti.From(&cbackoff.ZeroBackOff{})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), s.Delay(5))

	zeroMultiplier := &cbackoff.ExponentialBackOff{InitialInterval: ms, MaxInterval: time.Second}
	s, _, err = cenkalti.From(zeroMultiplier)
	require.NoError(t, err)
	assert.Equal(t, ms, s.Delay(10), "a zero v4 multiplier is constant")
}

func TestFromRejectsWhatItCannotConvert(t *testing.T) {
	tests := []struct {
		name    string
		b       cbackoff.BackOff
		wantErr string
	}{
		{"stop", &cbackoff.StopBackOff{}, "never retries: use retry.WithMaxAttempts(1)"},
		{"a wrapper", cbackoff.WithMaxRetries(cbackoff.NewExponentialBackOff(), 3), "unsupported BackOff type"},
		{"a context wrapper", cbackoff.WithContext(cbackoff.NewExponentialBackOff(), context.Background()), "unsupported BackOff type"},
		{"nil", nil, "nil BackOff"},
		{"a shrinking multiplier", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 0.5}, "Factor = 0.5"},
		{"a randomization factor above one", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 2, RandomizationFactor: 2}, "RandomizationFactor"},
		{"a negative constant", cbackoff.NewConstantBackOff(-time.Second), "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := cenkalti.From(tt.b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
