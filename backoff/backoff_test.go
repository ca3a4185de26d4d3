package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

func TestSchedules(t *testing.T) {
	tests := []struct {
		name string
		b    backoff.Backoff
		want []time.Duration // Delay(1), Delay(2), ...
	}{
		{"constant waits the same after every attempt", backoff.Constant(50 * ms), []time.Duration{50 * ms, 50 * ms, 50 * ms}},
		{"linear adds the step", backoff.Linear{Base: 100 * ms, Step: 50 * ms, MaxDelay: 220 * ms}, []time.Duration{100 * ms, 150 * ms, 200 * ms, 220 * ms, 220 * ms}},
		{"linear without a step is constant", backoff.Linear{Base: 10 * ms}, []time.Duration{10 * ms, 10 * ms}},
		{"exponential doubles by default", backoff.Exponential{Base: 100 * ms, MaxDelay: time.Second}, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"exponential with factor 3", backoff.Exponential{Base: 10 * ms, Factor: 3, MaxDelay: time.Second}, []time.Duration{10 * ms, 30 * ms, 90 * ms, 270 * ms, 810 * ms, time.Second}},
		{"exponential with factor 1 is constant", backoff.Exponential{Base: 10 * ms, Factor: 1}, []time.Duration{10 * ms, 10 * ms, 10 * ms}},
		{"exponential with a cap below the first delay returns the cap", backoff.Exponential{Base: 0, MaxDelay: 5 * ms}, []time.Duration{0, 0}},
		{"func adapts a function", backoff.Func(func(n int) time.Duration { return time.Duration(n) * ms }), []time.Duration{ms, 2 * ms, 3 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				assert.Equal(t, want, tt.b.Delay(i+1), "Delay(%d)", i+1)
			}
		})
	}
}

func TestAttemptsBelowOneCountAsOne(t *testing.T) {
	e := backoff.Exponential{Base: 100 * ms, MaxDelay: time.Second}
	l := backoff.Linear{Base: 100 * ms, Step: ms}
	for _, n := range []int{0, -1, math.MinInt} {
		assert.Equal(t, 100*ms, e.Delay(n))
		assert.Equal(t, 100*ms, l.Delay(n))
	}
}

func TestHugeAttemptNumbersSaturateAtTheCap(t *testing.T) {
	caps := []time.Duration{30 * time.Second, 0}
	for _, c := range caps {
		want := c
		if c == 0 {
			want = math.MaxInt64
		}
		for _, n := range []int{62, 63, 64, 100, 10_000, math.MaxInt} {
			assert.Equal(t, want, backoff.Exponential{Base: 100 * ms, MaxDelay: c}.Delay(n), "factor 2, cap %v, n %d", c, n)
		}
		for _, n := range []int{200, 10_000, math.MaxInt} {
			assert.Equal(t, want, backoff.Exponential{Base: 100 * ms, Factor: 1.5, MaxDelay: c}.Delay(n), "factor 1.5, cap %v, n %d", c, n)
		}
		for _, n := range []int{3_000_000, math.MaxInt} {
			assert.Equal(t, want, backoff.Linear{Base: 100 * ms, Step: time.Hour, MaxDelay: c}.Delay(n), "linear, cap %v, n %d", c, n)
		}
	}
}

func TestAZeroBaseStaysZero(t *testing.T) {
	for _, n := range []int{1, 63, 64, 10_000, math.MaxInt} {
		assert.Zero(t, backoff.Exponential{MaxDelay: 5 * ms}.Delay(n), "n=%d", n)
		assert.Zero(t, backoff.Exponential{Factor: 3, MaxDelay: 5 * ms}.Delay(n), "n=%d", n)
	}
}

func TestDelaysNeverDecreaseAndNeverGoNegative(t *testing.T) {
	schedules := []backoff.Backoff{
		backoff.Exponential{Base: 1, Factor: 1.01},
		backoff.Exponential{Base: 7 * ms},
		backoff.Exponential{Base: time.Hour, Factor: 1e300},
		backoff.Linear{Base: 1, Step: math.MaxInt64 / 3},
	}
	for _, b := range schedules {
		prev := time.Duration(0)
		for n := 1; n <= 10_000; n++ {
			d := b.Delay(n)
			require.GreaterOrEqual(t, d, prev, "%#v at %d", b, n)
			prev = d
		}
	}
}

func TestValidate(t *testing.T) {
	type validator interface{ Validate() error }
	tests := []struct {
		name    string
		b       validator
		wantErr string
	}{
		{"a negative constant", backoff.Constant(-ms), "backoff.Constant(-1ms): must not be negative"},
		{"a negative exponential base", backoff.Exponential{Base: -ms}, "backoff.Exponential.Base = -1ms: must not be negative"},
		{"a factor below one", backoff.Exponential{Base: ms, Factor: 0.5}, "backoff.Exponential.Factor = 0.5: must be at least 1 (or 0 for the default 2)"},
		{"an infinite factor", backoff.Exponential{Base: ms, Factor: math.Inf(1)}, "backoff.Exponential.Factor = +Inf: must be at least 1 (or 0 for the default 2)"},
		{"a NaN factor", backoff.Exponential{Base: ms, Factor: math.NaN()}, "backoff.Exponential.Factor = NaN: must be at least 1 (or 0 for the default 2)"},
		{"a cap below the base", backoff.Exponential{Base: time.Second, MaxDelay: ms}, "backoff.Exponential.MaxDelay = 1ms: must not be below Base (1s)"},
		{"a negative cap", backoff.Linear{Base: ms, MaxDelay: -1}, "backoff.Linear.MaxDelay = -1ns: must not be negative (0 means no cap)"},
		{"a negative step", backoff.Linear{Step: -ms}, "backoff.Linear.Step = -1ms: must not be negative"},
		{"a nil func", backoff.Func(nil), "backoff.Func(<nil>): must not be nil"},
		{"a valid exponential", backoff.Exponential{Base: ms, Factor: 2, MaxDelay: time.Second}, ""},
		{"the zero exponential", backoff.Exponential{}, ""},
		{"the zero linear", backoff.Linear{}, ""},
		{"the zero constant", backoff.Constant(0), ""},
		{"a valid linear", backoff.Linear{Base: ms, Step: ms, MaxDelay: ms}, ""},
		{"a func", backoff.Func(func(int) time.Duration { return 0 }), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, argerr.ErrInvalid, "an invalid argument, as retry.ErrInvalid")
			var ae *argerr.Error
			assert.ErrorAs(t, err, &ae)
		})
	}
}

func TestZeroValuesAreUsable(t *testing.T) {
	// Every exported type's zero value has a documented meaning: no call panics.
	tests := []struct {
		name string
		b    backoff.Backoff
		want time.Duration
	}{
		{"the zero constant retries at once", backoff.Constant(0), 0},
		{"the zero linear retries at once", backoff.Linear{}, 0},
		{"the zero exponential retries at once", backoff.Exponential{}, 0},
		{"a nil func waits 0", backoff.Func(nil), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{math.MinInt, 0, 1, 2, 100, math.MaxInt} {
				assert.Equal(t, tt.want, tt.b.Delay(n), "Delay(%d)", n)
			}
		})
	}
}

var sink time.Duration

func BenchmarkExponential(b *testing.B) {
	b.ReportAllocs()
	e := backoff.Exponential{Base: 100 * ms, MaxDelay: 30 * time.Second}
	for i := range b.N {
		sink = e.Delay(i&7 + 1)
	}
}

func BenchmarkExponentialFactor(b *testing.B) {
	b.ReportAllocs()
	e := backoff.Exponential{Base: 100 * ms, Factor: 1.5, MaxDelay: 30 * time.Second}
	for i := range b.N {
		sink = e.Delay(i&7 + 1)
	}
}
