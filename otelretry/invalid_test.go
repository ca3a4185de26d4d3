package otelretry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func requireInvalid(t *testing.T, err error, name string) {
	t.Helper()
	require.ErrorIs(t, err, retry.ErrInvalid)
	var ie *retry.InvalidError
	require.True(t, errors.As(err, &ie))
	assert.Equal(t, name, ie.Name)
}

func TestNewWithoutANameIsRefused(t *testing.T) {
	s := newSDK(t)
	o, err := otelretry.New("", otelretry.Config{MeterProvider: s.mp})
	assert.Nil(t, o)
	requireInvalid(t, err, "otelretry.New")
	assert.Empty(t, s.collect(t), "nothing was measured")
}

// TestWatchRefusesWhatItCannotRead walks the values Watch cannot report:
// each is a *retry.InvalidError naming Watch, and reports nothing.
func TestWatchRefusesWhatItCannotRead(t *testing.T) {
	throttler, err := limit.NewThrottler(limit.ThrottlerConfig{})
	require.NoError(t, err)
	keyed, err := limit.NewKeyed(func(context.Context) (string, bool) { return "", false },
		func(string) (limit.Limiter, error) { return throttler, nil }, 0)
	require.NoError(t, err)
	for _, tc := range []struct {
		desc string
		v    any
	}{
		{"nil", nil},
		{"a nil bucket", (*budget.TokenBucket)(nil)},
		{"a zero bucket", &budget.TokenBucket{}},
		{"a zero ratio", &budget.Ratio{}},
		{"a nil Adaptive", (*limit.Adaptive)(nil)},
		{"a zero Adaptive", &limit.Adaptive{}},
		{"a zero Throttler", &limit.Throttler{}},
		{"a nil cooldown registry", (*breaker.Cooldowns)(nil)},
		{"a limiter without figures", keyed},
		{"a string", "budget"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			s := newSDK(t)
			o := newObserver(t, s, otelretry.Config{})
			requireInvalid(t, o.Watch(tc.v), "otelretry.Observer.Watch")
			assert.Empty(t, s.collect(t))
		})
	}
}

func TestWatchRefusesASecondOfAKind(t *testing.T) {
	bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	require.NoError(t, err)
	ratio, err := budget.NewRatio(budget.RatioConfig{})
	require.NoError(t, err)
	cooldowns, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	require.NoError(t, err)
	for _, tc := range []struct {
		desc          string
		first, second any
	}{
		{"two budgets", bucket, ratio},
		{"two limiters with a rate", &fleet{}, &fleet{}},
		{"two throttlers", refusingThrottler(t), refusingThrottler(t)},
		{"two cooldown registries", cooldowns, cooldowns},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			o := newObserver(t, newSDK(t), otelretry.Config{})
			require.NoError(t, o.Watch(tc.first))
			requireInvalid(t, o.Watch(tc.second), "otelretry.Observer.Watch")
		})
	}
	t.Run("a budget, a limiter and a registry together", func(t *testing.T) {
		o := newObserver(t, newSDK(t), otelretry.Config{})
		for _, v := range []any{bucket, &fleet{}, refusingThrottler(t), cooldowns} {
			require.NoError(t, o.Watch(v))
		}
	})
}

// TestZeroAndNilObserversDoNothing calls every method on a nil and a zero
// Observer, with zero arguments: none panics, none measures.
func TestZeroAndNilObserversDoNothing(t *testing.T) {
	ctx := context.Background()
	ev := observe.Event{Kind: observe.GaveUp, Stop: policy.StopAttempts, Err: &retry.Error{Reason: retry.ErrExhausted}}
	for _, o := range []*otelretry.Observer{nil, {}} {
		for k := observe.Kind(0); k <= observe.Request+1; k++ {
			ev.Kind = k
			o.Observe(ctx, ev)
			o.Observe(nil, ev) //nolint:staticcheck // a nil context is what is tested
		}
		assert.Nil(t, o.Traced(nil))
		assert.NoError(t, o.Unregister())
		requireInvalid(t, o.Watch(refusingThrottler(t)), "otelretry.Observer.Watch")
	}
}

// TestANilContextIsIgnored: a made Observer given a nil context records
// nothing and does not panic.
func TestANilContextIsIgnored(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	for k := observe.AttemptDone; k <= observe.Request; k++ {
		o.Observe(nil, observe.Event{Kind: k}) //nolint:staticcheck // a nil context is what is tested
	}
	assert.Empty(t, s.collect(t))
}

// TestEveryEventKindOfAZeroEventIsSafe: a made Observer given each kind
// with every other field zero does not panic.
func TestEveryEventKindOfAZeroEventIsSafe(t *testing.T) {
	o := newObserver(t, newSDK(t), otelretry.Config{HTTP: true})
	for k := observe.AttemptDone; k <= observe.Request; k++ {
		assert.NotPanics(t, func() { o.Observe(t.Context(), observe.Event{Kind: k}) }, k.String())
	}
}
