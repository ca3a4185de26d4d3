package otelretry_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/otelretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInvalidArguments walks every constructor with the nil and zero
// arguments that mean nothing: each returns a *retry.InvalidError naming
// itself, and makes no instrument.
func TestInvalidArguments(t *testing.T) {
	s := newSDK(t)
	mp := otelretry.WithMeterProvider(s.mp)
	bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{})
	require.NoError(t, err)
	throttler, err := limit.NewThrottler(limit.ThrottlerConfig{})
	require.NoError(t, err)
	keyed, err := limit.NewKeyed(func(context.Context) (string, bool) { return "", false },
		func(string) (limit.Limiter, error) { return throttler, nil }, 0)
	require.NoError(t, err)
	for _, tc := range []struct {
		desc string
		call func() error
		name string
	}{
		{"NewRetrier with no name", func() error { _, err := otelretry.NewRetrier("", mp); return err }, "otelretry.NewRetrier"},
		{"NewRetrier with a nil option", func() error { _, err := otelretry.NewRetrier("r", nil); return err }, "otelretry.RetrierOption"},
		{"WithMeterProvider(nil)", func() error { _, err := otelretry.NewRetrier("r", otelretry.WithMeterProvider(nil)); return err }, "otelretry.WithMeterProvider"},
		{"WithTracerProvider(nil)", func() error { _, err := otelretry.NewRetrier("r", otelretry.WithTracerProvider(nil)); return err }, "otelretry.WithTracerProvider"},
		{"ObserveBudget with no name", func() error { _, err := otelretry.ObserveBudget("", bucket, mp); return err }, "otelretry.ObserveBudget"},
		{"ObserveBudget of nil", func() error { _, err := otelretry.ObserveBudget("b", nil, mp); return err }, "otelretry.ObserveBudget"},
		{"ObserveBudget of a nil bucket", func() error { _, err := otelretry.ObserveBudget("b", (*budget.TokenBucket)(nil), mp); return err }, "otelretry.ObserveBudget"},
		{"ObserveBudget of a zero bucket", func() error { _, err := otelretry.ObserveBudget("b", &budget.TokenBucket{}, mp); return err }, "otelretry.ObserveBudget"},
		{"ObserveBudget of a zero ratio", func() error { _, err := otelretry.ObserveBudget("b", &budget.Ratio{}, mp); return err }, "otelretry.ObserveBudget"},
		{"ObserveBudget with a nil option", func() error { _, err := otelretry.ObserveBudget("b", bucket, nil); return err }, "otelretry.Option"},
		{"ObserveLimiter with no name", func() error { _, err := otelretry.ObserveLimiter("", throttler, mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter of nil", func() error { _, err := otelretry.ObserveLimiter("l", nil, mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter of a nil Adaptive", func() error { _, err := otelretry.ObserveLimiter("l", (*limit.Adaptive)(nil), mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter of a zero Adaptive", func() error { _, err := otelretry.ObserveLimiter("l", &limit.Adaptive{}, mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter of a zero Throttler", func() error { _, err := otelretry.ObserveLimiter("l", &limit.Throttler{}, mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter of a limiter without figures", func() error { _, err := otelretry.ObserveLimiter("l", keyed, mp); return err }, "otelretry.ObserveLimiter"},
		{"ObserveLimiter with a nil option", func() error { _, err := otelretry.ObserveLimiter("l", throttler, nil); return err }, "otelretry.Option"},
		{"NewBreaker with no name", func() error { _, err := otelretry.NewBreaker("", mp); return err }, "otelretry.NewBreaker"},
		{"NewBreaker with a nil option", func() error { _, err := otelretry.NewBreaker("b", nil); return err }, "otelretry.Option"},
		{"NewCooldowns with no name", func() error { _, err := otelretry.NewCooldowns("", mp); return err }, "otelretry.NewCooldowns"},
		{"NewQueue with no name", func() error { _, err := otelretry.NewQueue("", mp); return err }, "otelretry.NewQueue"},
		{"NewServer with no name", func() error { _, err := otelretry.NewServer("", mp); return err }, "otelretry.NewServer"},
		{"NewHTTP with no name", func() error { _, err := otelretry.NewHTTP("", mp); return err }, "otelretry.NewHTTP"},
		{"NewHTTP with a nil meter provider", func() error { _, err := otelretry.NewHTTP("h", otelretry.WithMeterProvider(nil)); return err }, "otelretry.WithMeterProvider"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, retry.ErrInvalid)
			var ie *retry.InvalidError
			require.True(t, errors.As(err, &ie))
			assert.Equal(t, tc.name, ie.Name)
		})
	}
	assert.Empty(t, s.collect(t), "nothing was measured")
}

// TestZeroAndNilObserversDoNothing calls every method of every observer on
// a nil and a zero value, with zero arguments: none panics, none measures.
func TestZeroAndNilObserversDoNothing(t *testing.T) {
	ctx := context.Background()
	req := httptest.NewRequest("GET", "/", nil)
	ev := retry.Event{Kind: retry.GaveUp, Err: &retry.Error{Reason: retry.ErrExhausted}}
	for _, r := range []*otelretry.Retrier{nil, {}} {
		r.Hook(ctx, ev)
		r.Hook(nil, ev) //nolint:staticcheck // a nil context is what is tested
		assert.Nil(t, r.Traced(nil))
		assert.Empty(t, r.Name())
		assert.NoError(t, r.Unregister())
	}
	for _, b := range []*otelretry.Breaker{nil, {}} {
		b.OnStateChange("", breaker.StateClosed, breaker.StateOpen)
		b.Observe(ctx, breaker.ErrOpen)
		assert.NoError(t, b.Unregister())
	}
	for _, c := range []*otelretry.Cooldowns{nil, {}} {
		c.OnCooldown("", time.Time{}, nil)
		c.Observe(ctx, breaker.ErrCooldown)
		c.Watch(nil)
		assert.NoError(t, c.Unregister())
	}
	for _, q := range []*otelretry.Queue{nil, {}} {
		q.OnRecord(ctx, dlq.Letter{})
		q.OnReplay(ctx, "", nil)
		q.OnDepth(ctx, 0)
		assert.Equal(t, dlq.MonitorOptions{}, q.Hooks(dlq.MonitorOptions{}))
		assert.NoError(t, q.Unregister())
	}
	for _, sv := range []*otelretry.Server{nil, {}} {
		sv.Hook(req, idempotency.Event{})
		sv.Hook(nil, idempotency.Event{})
	}
	for _, h := range []*otelretry.HTTP{nil, {}} {
		h.Hook(ctx, httpretry.Attempt{})
	}
}
