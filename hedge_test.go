package retry_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server plays a dependency: attempt n takes lat[n-1] (the last entry for
// later attempts) and then returns errs[n-1] (nil past the end), unless its
// context ends first. It counts attempts, cancellations and the most
// attempts in flight at once.
type server struct {
	lat      []time.Duration
	errs     []error
	mu       sync.Mutex
	n        int
	inFlight int
	peak     int
	cancels  int
	starts   []time.Duration // since the server was made (fake time)
	t0       time.Time
}

func newServer(lat ...time.Duration) *server { return &server{lat: lat, t0: time.Now()} }

func (s *server) op(ctx context.Context) error {
	s.mu.Lock()
	s.n++
	n := s.n
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.starts = append(s.starts, time.Since(s.t0))
	d := s.lat[min(n, len(s.lat))-1]
	var err error
	if n <= len(s.errs) {
		err = s.errs[n-1]
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return err
	case <-ctx.Done():
		s.mu.Lock()
		s.cancels++
		s.mu.Unlock()
		return ctx.Err()
	}
}

func hedging(t *testing.T, delay time.Duration, inFlight int, opts ...retry.Option) *retry.Hedger {
	t.Helper()
	r, err := retry.New(append([]retry.Option{retry.Idempotent()}, opts...)...)
	require.NoError(t, err)
	h, err := retry.NewHedger(r, hedge.Fixed(delay), inFlight)
	require.NoError(t, err)
	return h
}

func TestHedging(t *testing.T) {
	t.Run("an attempt slower than the delay gets a hedge, and the first success wins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(time.Second, 5*ms)
			st, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 15 * ms}, st)
			assert.Equal(t, 1, s.cancels, "the slow first attempt is cancelled")
			assert.Equal(t, []time.Duration{0, 10 * ms}, s.starts)
		})
	})
	t.Run("an attempt faster than the delay is not hedged", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(5 * ms)
			st, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1, Elapsed: 5 * ms}, st)
			assert.Equal(t, 0, s.cancels)
		})
	})
	t.Run("at most maxInFlight attempts run at once, and MaxAttempts counts hedges", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(time.Second, time.Second, time.Second, 5*ms)
			st, err := hedging(t, 10*ms, 3, retry.WithMaxAttempts(4)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, 3, s.peak)
			assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms}, s.starts, "the third waits for a free slot; there is none until one ends")
			assert.Equal(t, 1000*ms, st.Elapsed, "the first of the three to finish wins")
			assert.Equal(t, retry.Stats{Attempts: 3, Hedges: 2, Winner: 1, Elapsed: time.Second}, st)
		})
	})
	t.Run("a fast retryable failure starts the next attempt at once, not after a backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(ms, 2*ms)
			s.errs = []error{errReset}
			st, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, []time.Duration{0, ms}, s.starts)
			assert.Equal(t, retry.Stats{Attempts: 2, Winner: 2, Elapsed: 3 * ms}, st)
		})
	})
	t.Run("when every attempt fails, the error lists every failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(15*ms, 15*ms, 15*ms)
			s.errs = []error{errReset, errReset, errReset}
			st, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.ErrorIs(t, err, retry.ErrExhausted)
			assert.ErrorIs(t, err, errReset)
			assert.Equal(t, 3, st.Attempts)
			assert.Equal(t, 1, st.Hedges)
			assert.Zero(t, st.Winner)
			require.Len(t, rerr.Failures, 3)
			for i, f := range rerr.Failures {
				assert.Equal(t, i+1, f.Attempt)
			}
			assert.Contains(t, err.Error(), "retry: attempts exhausted after 3 attempt(s) in 30ms")
		})
	})
	t.Run("a permanent failure ends the call and cancels the others", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(15*ms, time.Second)
			s.errs = []error{httpErr(404, -1)}
			_, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
			assert.ErrorIs(t, err, retry.ErrPermanent)
			assert.Equal(t, 1, s.cancels)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, 15*ms, rerr.Elapsed)
		})
	})
	t.Run("the caller's cancellation cancels every attempt and ends the call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 15*ms)
			defer cancel()
			s := newServer(time.Second)
			st, err := hedging(t, 10*ms, 2).Run(ctx, s.op)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 2, s.cancels)
			assert.Equal(t, 15*ms, st.Elapsed)
		})
	})
	t.Run("MaxElapsed stops hedging; the attempt in flight may still win", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(50 * ms)
			st, err := hedging(t, 10*ms, 3, retry.WithMaxElapsed(15*ms), retry.WithMaxAttempts(5)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 1, Elapsed: 50 * ms}, st)
		})
	})
}

// countingBudget allows n retries and counts what it is told.
type countingBudget struct {
	allow          atomic.Int64
	asked, retries atomic.Int64
}

func (b *countingBudget) Allow() bool { b.asked.Add(1); return b.allow.Add(-1) >= 0 }
func (b *countingBudget) Record(a budget.Attempt) {
	if a.Retry {
		b.retries.Add(1)
	}
}

func TestHedgesAskTheBudgetAndCountAsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &countingBudget{}
		b.allow.Store(1)
		s := newServer(time.Second, 30*ms)
		st, err := hedging(t, 10*ms, 3, retry.WithBudget(b)).Run(t.Context(), s.op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 40 * ms}, st, "the second hedge was refused")
		assert.Equal(t, int64(2), b.asked.Load())
		assert.Equal(t, int64(1), b.retries.Load(), "the hedge is recorded as a retry")
	})
}

func TestHedgingRunsWorkThatMayNotRunTwiceOneAttemptAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := retry.New()
		require.NoError(t, err)
		h, err := retry.NewHedger(r, hedge.Fixed(10*ms), 2)
		require.NoError(t, err)
		s := newServer(time.Second, ms)
		st, err := h.Run(t.Context(), s.op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1, Elapsed: time.Second}, st, "not idempotent, not keyed: no hedge")

		ctx, err := retry.WithIdempotencyKey(t.Context(), "k1")
		require.NoError(t, err)
		st, err = h.Run(ctx, newServer(time.Second, ms).op)
		require.NoError(t, err, "a keyed call may hedge")
		assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 11 * ms}, st)

		st, err = h.Run(retry.SingleAttempt(ctx), newServer(time.Second, ms).op)
		require.NoError(t, err, "a single attempt is not repeated, so it is safe")
		assert.Equal(t, 1, st.Attempts)
	})
}

func TestEveryEntryPointOfAHedgerRuns(t *testing.T) {
	h := hedging(t, 10*ms, 2)
	ctx := t.Context()
	calls := 0
	require.NoError(t, h.Do(ctx, func(context.Context) error { calls++; return nil }))
	st, err := h.Run(ctx, func(context.Context) error { calls++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 1, st.Winner)
	v, st, err := retry.HedgeValue(ctx, h, func(context.Context) (int, error) { calls++; return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, 1, st.Winner)
	assert.Equal(t, 3, calls)
}

func TestNewHedgerValidates(t *testing.T) {
	r, err := retry.New()
	require.NoError(t, err)
	refused, _ := retry.New(retry.WithMaxAttempts(0))
	for _, tc := range []struct {
		desc  string
		r     *retry.Retrier
		delay hedge.Delay
		max   int
	}{
		{"a nil delay", r, nil, 2},
		{"a zero delay", r, hedge.Fixed(0), 2},
		{"one in flight", r, hedge.Fixed(ms), 1},
		{"an unbuilt adaptive delay", r, &hedge.Adaptive{}, 2},
		{"a nil Retrier", nil, hedge.Fixed(ms), 2},
		{"a refused Retrier", refused, hedge.Fixed(ms), 2},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			h, err := retry.NewHedger(tc.r, tc.delay, tc.max)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			ran := false
			assert.ErrorIs(t, h.Do(t.Context(), func(context.Context) error { ran = true; return nil }), retry.ErrInvalid,
				"a refused Hedger fails every call")
			assert.False(t, ran)
		})
	}
}

func TestHedgesAreVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var kinds []string
		var logs strings.Builder
		l := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		r := hedging(t, 10*ms, 2, retry.WithLogger(l), retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
			mu.Lock()
			defer mu.Unlock()
			kinds = append(kinds, e.Kind.String())
			if e.Kind == observe.HedgeStarted {
				assert.Equal(t, 2, e.Attempt)
				assert.Equal(t, 10*ms, e.Delay)
			}
		})))
		_, err := r.Run(t.Context(), newServer(time.Second, 5*ms).op)
		require.NoError(t, err)
		assert.Equal(t, []string{"hedge started", "attempt done", "attempt done"}, kinds)
		assert.Contains(t, logs.String(), "retry: hedging: started another attempt")
		assert.Contains(t, logs.String(), "attempt=2 delay=10ms")
	})
}

func TestAdaptiveDelayLearnsThePercentile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Window: 64})
		require.NoError(t, err)
		r, err := retry.New(retry.Idempotent())
		require.NoError(t, err)
		h, err := retry.NewHedger(r, a, 2)
		require.NoError(t, err)
		// 24 calls in 25 take 2ms, one takes 100ms: the p95 is about 2ms.
		for i := range 200 {
			lat := 2 * ms
			if i%25 == 24 {
				lat = 100 * ms
			}
			_, err := h.Run(t.Context(), newServer(lat, lat).op)
			require.NoError(t, err)
		}
		assert.InDelta(t, float64(2*ms), float64(a.Next()), float64(ms)/4)
	})
}

func TestHedgeBadArgumentsDoNotPanic(t *testing.T) {
	ran := false
	op := func(context.Context) error { ran = true; return nil }
	vop := func(context.Context) (int, error) { ran = true; return 0, nil }
	var nilHedger *retry.Hedger
	var nilCtx context.Context
	for _, h := range []*retry.Hedger{hedging(t, ms, 2), new(retry.Hedger)} {
		for name, call := range map[string]func() error{
			"(*Hedger)(nil).Run":           func() error { _, err := nilHedger.Run(t.Context(), op); return err },
			"(*Hedger)(nil).Do":            func() error { return nilHedger.Do(t.Context(), op) },
			"HedgeValue with a nil Hedger": func() error { _, _, err := retry.HedgeValue(t.Context(), nilHedger, vop); return err },
			"Run with a nil op":            func() error { _, err := h.Run(t.Context(), nil); return err },
			"Run with a nil ctx":           func() error { _, err := h.Run(nilCtx, op); return err },
			"HedgeValue with a nil op":     func() error { _, _, err := retry.HedgeValue[int](t.Context(), h, nil); return err },
			"HedgeValue with a nil ctx":    func() error { _, _, err := retry.HedgeValue(nilCtx, h, vop); return err },
		} {
			assert.ErrorIs(t, call(), retry.ErrInvalid, name)
		}
	}
	assert.False(t, ran, "nothing ran")
}

func TestAServersRetryAfterIsWaitedEvenWhenHedging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(ms, ms)
		s.errs = []error{httpErr(503, 1)}
		st, err := hedging(t, 10*ms, 2).Run(t.Context(), s.op)
		require.NoError(t, err)
		require.Len(t, s.starts, 2)
		assert.GreaterOrEqual(t, s.starts[1]-s.starts[0], time.Second, "never earlier than asked")
		assert.GreaterOrEqual(t, st.Waited, time.Second, "no attempt ran meanwhile: the wait counts")
		assert.Equal(t, 2, st.Winner)
	})
}

func TestAnAttemptTimeoutIsRetriedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(time.Second, time.Second, ms)
		st, err := hedging(t, 10*ms, 2, retry.WithAttemptTimeout(15*ms), retry.WithMaxAttempts(3)).Run(t.Context(), s.op)
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{0, 10 * ms, 15 * ms}, s.starts, "the hedge at 10ms, the retry when the first attempt timed out")
		assert.Equal(t, retry.Stats{Attempts: 3, Hedges: 1, Winner: 3, Elapsed: 16 * ms}, st)
	})
}

func TestACallThatNeedsNoHedgeStartsNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hedging(t, 10*ms, 2)
		before := runtime.NumGoroutine()
		during := 0
		_, err := r.Run(t.Context(), func(context.Context) error {
			time.Sleep(5 * ms)
			during = runtime.NumGoroutine()
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, before, during, "the first attempt runs on the caller's goroutine, and no timer has fired")
	})
}

func TestAPanicInAnyAttemptReachesTheCallerAfterTheOthersEnd(t *testing.T) {
	for name, panicking := range map[string]int{"the caller's attempt": 1, "a hedge": 2} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newServer(time.Second)
				var n atomic.Int32
				op := func(ctx context.Context) error {
					if int(n.Add(1)) == panicking {
						time.Sleep(20 * ms)
						panic("boom")
					}
					return s.op(ctx)
				}
				r := hedging(t, 10*ms, 2)
				assert.PanicsWithValue(t, "boom", func() { _, _ = r.Run(t.Context(), op) })
				assert.Equal(t, 1, s.cancels, "the other attempt was cancelled, and returned before the panic")
				s.mu.Lock()
				assert.Zero(t, s.inFlight)
				s.mu.Unlock()
				_, err := r.Run(t.Context(), newServer(ms).op)
				assert.NoError(t, err, "the Retrier still works")
			})
		})
	}
}

// stubborn plays an operation that ignores its context: attempt n takes
// lat[n-1] whatever happens, then returns errs[n-1] (nil past the end).
func stubborn(lat []time.Duration, errs ...error) func(context.Context) error {
	var n atomic.Int32
	return func(context.Context) error {
		i := int(n.Add(1)) - 1
		time.Sleep(lat[i])
		if i < len(errs) {
			return errs[i]
		}
		return nil
	}
}

func TestAHedgedCallReportsOneSuccess(t *testing.T) {
	late := errors.New("late failure")
	for _, tc := range []struct {
		desc  string
		loser error // what the slow first attempt returns, after the hedge won
		want  error // what its AttemptDone reports
	}{
		{"a loser that succeeds after the winner reports context.Canceled", nil, context.Canceled},
		{"a loser that fails reports its own error", late, late},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ev events
				r := hedging(t, 10*ms, 2, retry.WithObserver(observe.Func(ev.hook)))
				st, err := r.Run(t.Context(), stubborn([]time.Duration{30 * ms, 5 * ms}, tc.loser))
				require.NoError(t, err)
				assert.Equal(t, 2, st.Winner)

				var successes int
				var done []observe.Event
				for _, e := range ev.list {
					if e.Kind == observe.AttemptDone {
						done = append(done, e)
						if e.Err == nil {
							successes++
						}
					}
				}
				assert.Equal(t, 1, successes, "a hedged call has one success")
				require.Len(t, done, 2)
				assert.Equal(t, observe.Event{Kind: observe.AttemptDone, Attempt: 2, Started: 2, Elapsed: 15 * ms}, done[0],
					"the winner's event says how many attempts the call started")
				assert.Equal(t, 1, done[1].Attempt)
				assert.ErrorIs(t, done[1].Err, tc.want)
			})
		})
	}
}
