package breaker_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hedger hedges r's calls, idempotent, of 3 attempts at most, after 10ms,
// two attempts at most in flight.
func hedger(t *testing.T, r *retry.Retrier) *retry.Hedger {
	t.Helper()
	r, err := r.With(retry.Idempotent(), retry.WithMaxAttempts(3))
	require.NoError(t, err)
	h, err := retry.NewHedger(r, hedge.Fixed(10*ms), 2)
	require.NoError(t, err)
	return h
}

// slowFirst is an operation whose first attempt takes 50ms and the others
// none; every attempt succeeds unless cancelled.
type slowFirst struct{ n atomic.Int32 }

func (s *slowFirst) op(ctx context.Context) error {
	if s.n.Add(1) > 1 {
		return nil
	}
	select {
	case <-time.After(50 * ms):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestAHedgedCallTakesOnePermitAroundIt(t *testing.T) {
	// Half-open with a single probe: the call is that probe, and its hedge
	// is part of it, not a second probe.
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBreakers(t, tripAt1)
		h := hedger(t, opened(t, b, retry.WithObserver(&rec)))
		time.Sleep(time.Second + ms)
		var s slowFirst
		st, err := h.Run(to(t, payments), s.op)
		require.NoError(t, err)
		assert.Equal(t, 1, st.Hedges, "the hedge went")
		assert.Equal(t, 2, st.Winner)
		assert.Empty(t, rec.of(observe.HedgeSkipped))
		assert.Equal(t, breaker.StateClosed, b.State(payments), "the call's success closed the breaker")
		assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed"}, rec.changes())
	})
}

func TestAHedgedCallToAnOpenBreakerIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := hedger(t, opened(t, newBreakers(t, tripAt1)))
		dep := &dependency{}
		st, err := h.Run(to(t, payments), dep.call)
		assert.ErrorIs(t, err, retry.ErrBreakerOpen)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Zero(t, st.Attempts)
		assert.Zero(t, dep.count())
	})
}

func TestPerAttemptAHedgeTheBreakerRefusesIsSkipped(t *testing.T) {
	// Half-open with a single probe, per attempt: the first attempt is the
	// probe, and the hedge is refused rather than sent.
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		c := tripAt1
		c.PerAttempt = true
		b := newBreakers(t, c)
		h := hedger(t, opened(t, b, retry.WithObserver(&rec)))
		time.Sleep(time.Second + ms)
		var s slowFirst
		st, err := h.Run(to(t, payments), s.op)
		require.NoError(t, err, "the probe succeeds")
		assert.Equal(t, int32(1), s.n.Load(), "the hedge was not sent")
		assert.Equal(t, retry.Stats{Attempts: 1, Elapsed: 50 * ms, Winner: 1}, st)
		skipped := rec.of(observe.HedgeSkipped)
		require.Len(t, skipped, 1)
		assert.Equal(t, policy.StopOpen, skipped[0].Stop)
		assert.Equal(t, 2, skipped[0].Attempt)
		assert.Equal(t, breaker.StateClosed, b.State(payments))
	})
}

func TestPerAttemptEveryHedgeIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, breaker.Config{PerAttempt: true})
		h := hedger(t, retrier(t, retry.WithBreakers(b)))
		slow := func(ctx context.Context) error {
			time.Sleep(20 * ms)
			return syscall.ECONNRESET
		}
		_, err := h.Run(to(t, payments), slow)
		assert.ErrorIs(t, err, retry.ErrExhausted)
		assert.Equal(t, uint32(3), b.Counts(payments).TotalFailures, "every attempt, hedges included")
	})
}

func TestAPanicInAHedgedCallGivesThePermitsBack(t *testing.T) {
	for _, perAttempt := range []bool{false, true} {
		t.Run("the probe counts as a failure"+placement(perAttempt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tripAt1
				c.PerAttempt = perAttempt
				b := newBreakers(t, c)
				h := hedger(t, opened(t, b))
				time.Sleep(time.Second + ms)
				assert.PanicsWithValue(t, "boom", func() {
					_ = h.Do(to(t, payments), func(context.Context) error { panic("boom") })
				})
				assert.Equal(t, breaker.StateOpen, b.State(payments), "the probe did not end well")
				time.Sleep(time.Second + ms)
				require.NoError(t, h.Do(to(t, payments), func(context.Context) error { return nil }), "the next probe goes through")
			})
		})
	}
}

func TestAHedgedAttemptThatExitsItsGoroutineGivesThePermitsBack(t *testing.T) {
	for _, perAttempt := range []bool{false, true} {
		t.Run("the probe counts as a failure"+placement(perAttempt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tripAt1
				c.PerAttempt = perAttempt
				b := newBreakers(t, c)
				h := hedger(t, opened(t, b))
				time.Sleep(time.Second + ms)
				exited := make(chan struct{})
				go func() {
					defer close(exited)
					_ = h.Do(to(t, payments), func(context.Context) error { runtime.Goexit(); return nil })
				}()
				<-exited
				assert.Equal(t, breaker.StateOpen, b.State(payments))
				time.Sleep(time.Second + ms)
				require.NoError(t, h.Do(to(t, payments), func(context.Context) error { return nil }), "the next probe goes through")
			})
		})
	}
}
