package limit_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
)

// TestNilAndZeroArgumentsAreRefusedWithoutPanicking walks every exported
// function and method of the package with nil or zero values.
func TestNilAndZeroArgumentsAreRefusedWithoutPanicking(t *testing.T) {
	var nilA *limit.Adaptive
	var nilT *limit.Throttler
	zeroA, zeroT := &limit.Adaptive{}, &limit.Throttler{}
	ctx := context.Background()
	invalid := []struct {
		name string
		err  error
	}{
		{"(*Adaptive)(nil).Validate", nilA.Validate()},
		{"Adaptive{}.Validate", zeroA.Validate()},
		{"(*Throttler)(nil).Validate", nilT.Validate()},
		{"Throttler{}.Validate", zeroT.Validate()},
		{"NewAdaptive with a NaN rate", second(limit.NewAdaptive(limit.AdaptiveConfig{MinRate: nan()}))},
		{"NewThrottler with a NaN K", second(limit.NewThrottler(limit.ThrottlerConfig{K: nan()}))},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.err, argerr.ErrInvalid)
		})
	}
	for _, l := range []limit.Limiter{nilA, zeroA, nilT, zeroT} {
		assert.False(t, l.Acquire(ctx, time.Second), "%T not made by its constructor refuses", l)
		assert.False(t, l.Acquire(nil, time.Second)) //nolint:staticcheck // a nil context is the point
		l.Record(ctx, accepted)
		l.Record(nil, throttled) //nolint:staticcheck
	}
	assert.Zero(t, nilA.Rate())
	assert.Zero(t, zeroA.Rate())
	assert.Equal(t, 1.0, nilT.RejectProbability())
	assert.Equal(t, 1.0, zeroT.RejectProbability())
	tk, w := nilA.Take()
	assert.Zero(t, tk)
	assert.Zero(t, w)
	assert.Zero(t, zeroA.Due(1))
	nilA.Return(1)
	zeroA.Return(1)
}

func TestAcquireWithANilContextDoesNotPanicWhenItMustWait(t *testing.T) {
	c := &clock{}
	a := newAdaptive(t, c)
	feed(a, c, 20, 2*time.Second)
	a.Record(context.Background(), throttled)
	assert.False(t, a.Acquire(nil, time.Second), "must wait, and cannot without a context") //nolint:staticcheck
}

func second[T any](_ T, err error) error { return err }

func nan() float64 { zero := 0.0; return zero / zero }
