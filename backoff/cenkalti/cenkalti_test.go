package cenkalti_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/backoff/cenkalti"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
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

func TestBackOffNilAndZeroValues(t *testing.T) {
	defaults := []time.Duration{100 * ms, 200 * ms, 400 * ms}
	var zero cenkalti.Stateful
	nilSchedule := cenkalti.BackOff(nil, nil)
	for i, want := range defaults {
		assert.Equal(t, want, zero.NextBackOff(), "the zero Stateful, call %d", i+1)
		assert.Equal(t, want, nilSchedule.NextBackOff(), "a nil schedule, call %d", i+1)
	}
	var none *cenkalti.Stateful
	assert.Equal(t, cbackoff.Stop, none.NextBackOff(), "a nil *Stateful never retries")
	none.Reset()
}

// v4 as it runs: the nominal intervals of a v4 ExponentialBackOff, without
// randomization or time limit.
func v4Intervals(b *cbackoff.ExponentialBackOff, n int) []time.Duration {
	c := *b
	c.RandomizationFactor, c.MaxElapsedTime, c.Clock = 0, 0, cbackoff.SystemClock
	c.Reset()
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = c.NextBackOff()
	}
	return out
}

func TestFromMakesV4sWaits(t *testing.T) {
	tests := []struct {
		name  string
		v4    *cbackoff.ExponentialBackOff
		exact bool // no truncation drift: every interval a whole number of nanoseconds
	}{
		{"v4's defaults", cbackoff.NewExponentialBackOff(), false},
		{"doubling", &cbackoff.ExponentialBackOff{InitialInterval: 100 * ms, Multiplier: 2, MaxInterval: 10 * time.Second}, true},
		{"doubling from an odd number of nanoseconds", &cbackoff.ExponentialBackOff{InitialInterval: 7, Multiplier: 2, MaxInterval: time.Hour}, true},
		{"a factor of three", &cbackoff.ExponentialBackOff{InitialInterval: 10 * ms, Multiplier: 3, MaxInterval: time.Minute}, true},
		{"a factor of 1.1 from a prime", &cbackoff.ExponentialBackOff{InitialInterval: 1_000_003, Multiplier: 1.1, MaxInterval: time.Hour}, false},
		{"a multiplier of one is constant", &cbackoff.ExponentialBackOff{InitialInterval: 3 * ms, Multiplier: 1, MaxInterval: time.Second}, true},
		{"an interval too small to move is constant", &cbackoff.ExponentialBackOff{InitialInterval: 1, Multiplier: 1.5, MaxInterval: time.Second}, true},
		{"a zero interval stays zero", &cbackoff.ExponentialBackOff{}, true},
		{"a cap equal to the interval is constant", &cbackoff.ExponentialBackOff{InitialInterval: time.Second, Multiplier: 2, MaxInterval: time.Second}, true},
	}
	const n = 40
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := cenkalti.From(tt.v4)
			require.NoError(t, err)
			for i, want := range v4Intervals(tt.v4, n) {
				got := s.Delay(i + 1)
				if tt.exact {
					require.Equal(t, want, got, "attempt %d", i+1)
					continue
				}
				// v4 truncates to a nanosecond at every step, the schedule once:
				// a relative difference below 1/(InitialInterval·(Multiplier-1)).
				bound := 1 / (float64(tt.v4.InitialInterval) * (tt.v4.Multiplier - 1))
				require.InEpsilon(t, float64(want), float64(got), bound, "attempt %d", i+1)
			}
		})
	}
}

func TestFromRefusesWhatItCannotExpress(t *testing.T) {
	tests := []struct {
		name    string
		b       cbackoff.BackOff
		wantErr string
	}{
		{"a zero multiplier", &cbackoff.ExponentialBackOff{InitialInterval: ms, MaxInterval: time.Second},
			"cenkalti.From(ExponentialBackOff{Multiplier: 0}): v4 would wait InitialInterval once, then 0 before every later attempt: set it (v4's default is 1.5)"},
		{"a zero max interval", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 2},
			"cenkalti.From(ExponentialBackOff{MaxInterval: 0s}): v4 would wait InitialInterval once, then 0 before every later attempt: set it (v4's default is 60s)"},
		{"a shrinking multiplier", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 0.5, MaxInterval: time.Second},
			"cenkalti.From(ExponentialBackOff{Multiplier: 0.5}): v4's waits would shrink: use at least 1"},
		{"a max interval below the initial one", &cbackoff.ExponentialBackOff{InitialInterval: time.Second, Multiplier: 2, MaxInterval: ms},
			"cenkalti.From(ExponentialBackOff{MaxInterval: 1ms}): v4 would wait InitialInterval (1s) once, then MaxInterval: use at least InitialInterval"},
		{"a randomization factor above one", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 2, RandomizationFactor: 2},
			"cenkalti.From(ExponentialBackOff{RandomizationFactor: 2}): must be in [0, 1]: v4 would wait less than 0"},
		{"a negative interval", &cbackoff.ExponentialBackOff{InitialInterval: -ms, Multiplier: 2, MaxInterval: time.Second},
			"cenkalti.From(ExponentialBackOff{InitialInterval: -1ms}): must not be negative"},
		{"a negative max interval", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 2, MaxInterval: -1},
			"cenkalti.From(ExponentialBackOff{MaxInterval: -1ns}): must not be negative"},
		{"a NaN multiplier", &cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: math.NaN(), MaxInterval: time.Second},
			"cenkalti.From(ExponentialBackOff{Multiplier: NaN}): must be a finite number, not negative"},
		{"a nil exponential", (*cbackoff.ExponentialBackOff)(nil), "cenkalti.From((*backoff.ExponentialBackOff)(nil)): must not be nil"},
		{"a nil constant", (*cbackoff.ConstantBackOff)(nil), "cenkalti.From((*backoff.ConstantBackOff)(nil)): must not be nil"},
		{"a negative constant", cbackoff.NewConstantBackOff(-time.Second), "cenkalti.From(ConstantBackOff{Interval: -1s}): must not be negative"},
		{"stop", &cbackoff.StopBackOff{}, "cenkalti.From(*backoff.StopBackOff): never retries: use retry.WithMaxAttempts(1)"},
		{"a wrapper", cbackoff.WithMaxRetries(cbackoff.NewExponentialBackOff(), 3), "cenkalti.From(*backoff.backOffTries): unsupported BackOff type"},
		{"a context wrapper", cbackoff.WithContext(cbackoff.NewExponentialBackOff(), context.Background()), "cenkalti.From(*backoff.backOffContext): unsupported BackOff type"},
		{"nil", nil, "cenkalti.From(<nil>): must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, j, err := cenkalti.From(tt.b)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Nil(t, s)
			assert.Nil(t, j)
		})
	}
}

// The refusals are v4's behaviour, not a guess: its own NextBackOff, run.
func TestTheRefusedConfigurationsAreWhatV4Does(t *testing.T) {
	initialThenZero := []time.Duration{ms, 0, 0, 0}
	assert.Equal(t, initialThenZero, v4Intervals(&cbackoff.ExponentialBackOff{InitialInterval: ms, MaxInterval: time.Second}, 4), "no Multiplier")
	assert.Equal(t, initialThenZero, v4Intervals(&cbackoff.ExponentialBackOff{InitialInterval: ms, Multiplier: 2}, 4), "no MaxInterval")
	assert.Equal(t, []time.Duration{time.Second, ms, ms}, v4Intervals(&cbackoff.ExponentialBackOff{InitialInterval: time.Second, Multiplier: 2, MaxInterval: ms}, 3), "MaxInterval below InitialInterval")
	assert.Equal(t, []time.Duration{4 * ms, 2 * ms, ms}, v4Intervals(&cbackoff.ExponentialBackOff{InitialInterval: 4 * ms, Multiplier: 0.5, MaxInterval: time.Second}, 3), "a multiplier below one")
}

func TestFromOtherTypes(t *testing.T) {
	s, j, err := cenkalti.From(cbackoff.NewConstantBackOff(time.Second))
	require.NoError(t, err)
	assert.Equal(t, backoff.Constant(time.Second), s)
	assert.Equal(t, jitter.None{}, j)

	s, j, err = cenkalti.From(&cbackoff.ZeroBackOff{})
	require.NoError(t, err)
	assert.Equal(t, backoff.Constant(0), s)
	assert.Equal(t, jitter.None{}, j)

	_, j, err = cenkalti.From(cbackoff.NewExponentialBackOff())
	require.NoError(t, err)
	assert.Equal(t, jitter.Proportional(cbackoff.DefaultRandomizationFactor), j, "the randomization factor is kept")
}

func TestClassifyRecognisesV4sPermanentMarker(t *testing.T) {
	stop := classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonMarkedPermanent}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a marked error", cbackoff.Permanent(io.EOF), true},
		{"a wrapped marked error", fmt.Errorf("step 2: %w", cbackoff.Permanent(io.EOF)), true},
		{"a marked error in a join", errors.Join(errors.New("a"), fmt.Errorf("b: %w", cbackoff.Permanent(io.EOF))), true},
		{"a marker made by hand", &cbackoff.PermanentError{Err: io.EOF}, true},
		{"an unmarked error", io.EOF, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := classify.Decision{}
			if tt.want {
				want = stop
			}
			assert.Equal(t, want, cenkalti.Classify(tt.err))
		})
	}
	err := fmt.Errorf("x: %w", cbackoff.Permanent(io.EOF))
	assert.Zero(t, testing.AllocsPerRun(100, func() { cenkalti.Classify(err) }), "classifying allocates nothing")
}
