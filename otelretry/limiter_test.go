package otelretry_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/otelretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

var (
	accepted  = limit.Outcome{Result: limit.Accepted}
	throttled = limit.Outcome{Result: limit.Throttled}
)

// fakeClock is the limiters' injectable clock.
type fakeClock struct{ now time.Duration }

func (c *fakeClock) Now() time.Duration { return c.now }

// zeroRand draws 0 every time: a throttler with it refuses every attempt
// while its probability is above zero.
func zeroRand() uint64 { return 0 }

// refusingThrottler returns a throttler whose probability is 1/2 after one
// throttled answer, and which then refuses every attempt.
func refusingThrottler(t *testing.T) *limit.Throttler {
	t.Helper()
	th, err := limit.NewThrottler(limit.ThrottlerConfig{Rand: zeroRand})
	require.NoError(t, err)
	return th
}

func TestALimiterRefusalIsCountedAsLimited(t *testing.T) {
	t.Run("the first attempt refused: nothing sent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSDK(t)
			th := refusingThrottler(t)
			th.Record(t.Context(), throttled)
			r, _ := observed(t, s, retry.WithLimiter(th))
			ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
			calls := 0
			err := r.Do(ctx, func(context.Context) error { calls++; return nil })
			span.End()
			require.ErrorIs(t, err, retry.ErrLimited)
			assert.Zero(t, calls)

			assert.Equal(t, map[string]point{
				"retry.call.duration{" + name + ",retry.outcome=limited}": {Count: 1, Sum: 0},
			}, s.collect(t))
			events := s.spans.Ended()[0].Events()
			require.Len(t, events, 1)
			assert.Equal(t, "retry.gave_up", events[0].Name)
			assert.Contains(t, events[0].Attributes, attribute.String("retry.outcome", "limited"))
		})
	})
	t.Run("a retry refused after a 429", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSDK(t)
			r, _ := observed(t, s, retry.WithLimiter(refusingThrottler(t)))
			require.ErrorIs(t, r.Do(t.Context(), failThen(httpErr(429, -1))), retry.ErrLimited)
			assert.Equal(t, map[string]point{
				"retry.call.duration{" + name + ",retry.outcome=limited}":               {Count: 1, Sum: 0.1},
				"retry.attempts{retry.class=http 429," + name + ",retry.verdict=retry}": {Value: 1},
			}, s.collect(t), "one attempt, its 100ms backoff, then the refusal")
		})
	})
}

// holding is a limiter that holds every attempt for hold.
type holding struct{ hold time.Duration }

func (h holding) Acquire(ctx context.Context, _ time.Duration) bool {
	time.Sleep(h.hold)
	return true
}
func (holding) Record(context.Context, limit.Outcome) {}

func TestALimiterHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		r, _ := observed(t, s, retry.WithLimiter(holding{50 * time.Millisecond}))
		ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
		require.NoError(t, r.Do(ctx, failThen()))
		span.End()
		assert.Equal(t, map[string]point{"retry.limit.wait.duration{" + name + "}": {Count: 1, Sum: 0.05}},
			only(s.collect(t), "retry.limit.wait.duration"))
		events := s.spans.Ended()[0].Events()
		require.Len(t, events, 1)
		assert.Equal(t, "retry.limiter_waited", events[0].Name)
		assert.Contains(t, events[0].Attributes, attribute.Float64("retry.delay", 0.05))
	})
}

// limitSeries returns the limiter series collected now.
func limitSeries(t *testing.T, s *sdk) map[string]point {
	t.Helper()
	return only(s.collect(t), "retry.limit.rate", "retry.limit.reject_probability")
}

func TestWatchedLimiters(t *testing.T) {
	t.Run("an Adaptive's rate, once it limits", func(t *testing.T) {
		s := newSDK(t)
		c := &fakeClock{}
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{Beta: 0.5, Now: c.Now})
		require.NoError(t, err)
		require.NoError(t, newObserver(t, s, otelretry.Config{}).Watch(a))
		assert.Empty(t, limitSeries(t, s), "no point while the rate is +Inf")

		c.now += limit.AdaptiveConfig{}.WithDefaults().Hold
		a.Record(t.Context(), throttled) // a 429, nothing accepted yet: the least rate
		assert.Equal(t, map[string]point{"retry.limit.rate{" + name + "}": {Value: limit.AdaptiveConfig{}.WithDefaults().MinRate}},
			limitSeries(t, s))

		c.now += 10 * time.Second
		for range 200 { // the server accepts 100 a second for 2s
			c.now += 10 * time.Millisecond
			a.Record(t.Context(), accepted)
		}
		a.Record(t.Context(), throttled)
		assert.InDelta(t, 50, a.Rate(), 1e-9, "Beta of the accepted rate")
		assert.Equal(t, map[string]point{"retry.limit.rate{" + name + "}": {Value: a.Rate()}}, limitSeries(t, s))
	})
	t.Run("a Throttler's rejection probability", func(t *testing.T) {
		s := newSDK(t)
		c := &fakeClock{}
		th, err := limit.NewThrottler(limit.ThrottlerConfig{Now: c.Now, Rand: zeroRand})
		require.NoError(t, err)
		require.NoError(t, newObserver(t, s, otelretry.Config{}).Watch(th))
		assert.Equal(t, map[string]point{"retry.limit.reject_probability{" + name + "}": {Value: 0}}, limitSeries(t, s))

		th.Record(t.Context(), accepted)
		for range 3 {
			th.Record(t.Context(), throttled)
		}
		assert.Equal(t, map[string]point{"retry.limit.reject_probability{" + name + "}": {Value: 0.4}},
			limitSeries(t, s), "(4 − 2·1)/(4 + 1)")

		require.False(t, th.Acquire(t.Context(), 0))
		assert.Equal(t, map[string]point{"retry.limit.reject_probability{" + name + "}": {Value: 0.5}},
			limitSeries(t, s), "a refusal is a request: (5 − 2)/(5 + 1)")
	})
	t.Run("any limiter with a Rate: limit/redis's fleet Limiter, until unregistered", func(t *testing.T) {
		s := newSDK(t)
		f := &fleet{rate: math.Inf(1)}
		o, err := otelretry.New("payments", otelretry.Config{MeterProvider: s.mp})
		require.NoError(t, err)
		require.NoError(t, o.Watch(f))
		assert.Empty(t, limitSeries(t, s), "the fleet does not limit yet")
		f.rate = 12.5
		assert.Equal(t, map[string]point{"retry.limit.rate{" + name + "}": {Value: 12.5}}, limitSeries(t, s))
		require.NoError(t, o.Unregister())
		assert.Empty(t, limitSeries(t, s), "unregistered")
	})
	t.Run("two limiters, two observers, two series", func(t *testing.T) {
		s := newSDK(t)
		for _, n := range []string{"a", "b"} {
			o, err := otelretry.New(n, otelretry.Config{MeterProvider: s.mp})
			require.NoError(t, err)
			defer func() { _ = o.Unregister() }()
			require.NoError(t, o.Watch(&fleet{rate: 3}))
		}
		assert.Equal(t, map[string]point{
			"retry.limit.rate{retry.name=a}": {Value: 3},
			"retry.limit.rate{retry.name=b}": {Value: 3},
		}, limitSeries(t, s))
	})
}

// fleet stands for limit/redis's *Limiter, which this module does not
// import: a limit.Limiter with a Rate method.
type fleet struct{ rate float64 }

func (f *fleet) Acquire(context.Context, time.Duration) bool { return true }
func (f *fleet) Record(context.Context, limit.Outcome)       {}
func (f *fleet) Rate() float64                               { return f.rate }
