package otelretry_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/otelretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

// hedging returns a Hedger that hedges after 10ms, inFlight attempts in
// flight at most, observed as "payments" on s.
func hedging(t *testing.T, s *sdk, inFlight int, opts ...retry.Option) *retry.Hedger {
	t.Helper()
	o := newObserver(t, s, otelretry.Config{})
	r, err := retry.New(append([]retry.Option{retry.Idempotent(), retry.WithMaxAttempts(3), retry.WithObserver(o)}, opts...)...)
	require.NoError(t, err)
	h, err := retry.NewHedger(r, hedge.Fixed(10*time.Millisecond), inFlight)
	require.NoError(t, err)
	return h
}

// slow takes lat[n-1] for attempt n, and returns nil then; with honour set
// it returns early with its context's error when the context ends.
func slow(honour bool, lat ...time.Duration) func(context.Context) error {
	var n atomic.Int32 // hedges run on goroutines of their own
	return func(ctx context.Context) error {
		t := time.NewTimer(lat[n.Add(1)-1])
		defer t.Stop()
		if !honour {
			<-t.C
			return nil
		}
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func TestAHedgeThatWins(t *testing.T) {
	for _, tc := range []struct {
		desc    string
		honour  bool
		elapsed time.Duration // until the call returns: once every attempt has
	}{
		{"the slow first attempt is cancelled", true, 15 * time.Millisecond},
		// The call's duration is measured to its winner: the loser's return
		// is the operation's business.
		{"the slow first attempt ignores its cancellation and succeeds too", false, time.Second},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSDK(t)
				h := hedging(t, s, 2)
				ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
				st, err := h.Run(ctx, slow(tc.honour, time.Second, 5*time.Millisecond))
				span.End()
				require.NoError(t, err)
				require.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: tc.elapsed}, st)

				assert.Equal(t, map[string]point{
					"retry.call.duration{" + name + "," + success + "}":    {Count: 1, Sum: 0.015},
					"retry.call.retries{" + name + "," + success + "}":     {Count: 1, Sum: 1},
					"retry.call.retry_delay{" + name + "," + success + "}": {Count: 1, Sum: 0},
					"retry.attempts{" + name + ",retry.verdict=success}":   {Value: 1},
					"retry.hedges{" + name + "}":                           {Value: 1},
				}, s.collect(t), "one call, one success, one hedge counted with the retries")

				events := s.spans.Ended()[0].Events()
				require.Len(t, events, 1)
				assert.Equal(t, "retry.hedge_started", events[0].Name)
				assert.Contains(t, events[0].Attributes, attribute.Int("retry.attempt", 2))
				assert.Contains(t, events[0].Attributes, attribute.Float64("retry.delay", 0.01))
			})
		})
	}
}

func TestAHedgedCallThatFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		h := hedging(t, s, 2)
		var n atomic.Int32
		// Attempt 1 hangs until cancelled; its hedge (2) fails at once with
		// a 503, which starts attempt 3 at once; it fails with a 404.
		st, err := h.Run(t.Context(), func(ctx context.Context) error {
			switch n.Add(1) {
			case 1:
				<-ctx.Done()
				return ctx.Err()
			case 2:
				return httpErr(503, -1)
			}
			return httpErr(404, -1)
		})
		require.ErrorIs(t, err, retry.ErrPermanent)
		require.Equal(t, 3, st.Attempts)
		require.Equal(t, 1, st.Hedges)

		assert.Equal(t, map[string]point{
			"retry.call.duration{" + name + ",retry.outcome=permanent}":             {Count: 1, Sum: 0.01},
			"retry.call.retries{" + name + ",retry.outcome=permanent}":              {Count: 1, Sum: 2},
			"retry.call.retry_delay{" + name + ",retry.outcome=permanent}":          {Count: 1, Sum: 0},
			"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1},
			"retry.attempts{retry.class=http 4xx," + name + ",retry.verdict=stop}":  {Value: 1},
			"retry.hedges{" + name + "}":                                            {Value: 1},
		}, s.collect(t), "the first attempt, cancelled when the call stopped, is not an attempt by class")
	})
}

func TestAWinnerThatIsNotTheLastAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		h := hedging(t, s, 3)
		// Hedges start at 10ms and 20ms; the first attempt wins at 25ms.
		st, err := h.Run(t.Context(), slow(true, 25*time.Millisecond, time.Second, time.Second))
		require.NoError(t, err)
		require.Equal(t, retry.Stats{Attempts: 3, Hedges: 2, Winner: 1, Elapsed: 25 * time.Millisecond}, st)

		assert.Equal(t, map[string]point{
			"retry.call.duration{" + name + "," + success + "}":    {Count: 1, Sum: 0.025},
			"retry.call.retries{" + name + "," + success + "}":     {Count: 1, Sum: 2},
			"retry.call.retry_delay{" + name + "," + success + "}": {Count: 1, Sum: 0},
			"retry.attempts{" + name + ",retry.verdict=success}":   {Value: 1},
			"retry.hedges{" + name + "}":                           {Value: 2},
		}, s.collect(t), "the call's retries are the attempts it started after the first, not the winner's number less one")
	})
}

func TestAHedgeTheBudgetRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 5})
		require.NoError(t, err)
		b.Record(budget.Attempt{Outcome: budget.Failed}) // 9 tokens: no room for a retry or a hedge
		h := hedging(t, s, 2, retry.WithBudget(b))
		ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
		st, err := h.Run(ctx, slow(true, 30*time.Millisecond))
		span.End()
		require.NoError(t, err)
		require.Equal(t, 0, st.Hedges)

		got := s.collect(t)
		assert.Equal(t, map[string]point{
			"retry.hedges.skipped{retry.hedge.skipped_by=budget," + name + "}": {Value: 1},
		}, only(got, "retry.hedges", "retry.hedges.skipped"), "no hedge started; the one due was skipped by the budget")
		events := s.spans.Ended()[0].Events()
		require.Len(t, events, 1)
		assert.Equal(t, "retry.hedge_skipped", events[0].Name)
		assert.Contains(t, events[0].Attributes, attribute.String("retry.hedge.skipped_by", "budget"))
	})
}
