package retry_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledger is a limit.Limiter that passes each question to inner (or to
// acquire, given the question's number, from 1) and keeps the books: the
// permissions it gave and refused, the longest waits it was allowed, and the
// outcomes it was told, so that a test can check each permission is recorded.
type ledger struct {
	inner   limit.Limiter
	acquire func(n int, ctx context.Context, maxWait time.Duration) bool

	mu       sync.Mutex
	granted  int
	refused  int
	maxWaits []time.Duration
	outcomes []limit.Outcome
}

func (g *ledger) Acquire(ctx context.Context, maxWait time.Duration) bool {
	g.mu.Lock()
	g.maxWaits = append(g.maxWaits, maxWait)
	n := len(g.maxWaits)
	g.mu.Unlock()
	var ok bool
	if g.acquire != nil {
		ok = g.acquire(n, ctx, maxWait)
	} else {
		ok = g.inner.Acquire(ctx, maxWait)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		g.granted++
	} else {
		g.refused++
	}
	return ok
}

func (g *ledger) Record(ctx context.Context, o limit.Outcome) {
	if g.inner != nil {
		g.inner.Record(ctx, o)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.outcomes = append(g.outcomes, o)
}

// balanced asserts that every permission given was recorded, once.
func (g *ledger) balanced(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	assert.Equal(t, g.granted, len(g.outcomes), "every Acquire that granted has its Record")
}

func results(os []limit.Outcome) []limit.Result {
	var out []limit.Result
	for _, o := range os {
		out = append(out, o.Result)
	}
	return out
}

func of(kind observe.Kind, evs []observe.Event) []observe.Event {
	var out []observe.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

var (
	accepted = limit.Accepted
	other    = limit.Other
)

func TestAHedgedCallAsksTheLimiterForEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &ledger{inner: &scripted{}}
		s := newServer(time.Second, 5*ms)
		st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l), retry.WithMaxDelay(5*sec)).Run(t.Context(), s.op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 15 * ms}, st)
		assert.Equal(t, []time.Duration{5 * sec, 0}, l.maxWaits, "the first attempt may wait MaxDelay; a hedge may not wait")
		assert.Equal(t, []limit.Result{accepted, other}, results(l.outcomes), "the winner is accepted; the loser, cancelled, is other")
		l.balanced(t)
	})
}

func TestAHedgeTheLimiterRefusesIsNotSent(t *testing.T) {
	t.Run("the attempt in flight goes on, and the timer is not set again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{ok: true}, {ok: false}}}}
			var ev events
			s := newServer(50 * ms)
			st, err := hedging(t, 10*ms, 3, retry.WithLimiter(l), retry.WithObserver(observe.Func(ev.hook))).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1, Elapsed: 50 * ms}, st, "the refused hedge is counted nowhere")
			assert.Equal(t, 1, s.n, "not sent")
			assert.Len(t, l.maxWaits, 2, "asked once for a hedge, not every delay")
			assert.Empty(t, of(observe.HedgeStarted, ev.list))
			assert.Equal(t, []limit.Result{accepted}, results(l.outcomes))
			l.balanced(t)
		})
	})
	t.Run("the next attempt after a failure may hedge again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{ok: true}, {ok: false}, {ok: true}, {ok: true}}}}
			s := newServer(20*ms, 50*ms, 5*ms)
			s.errs = []error{errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l), retry.WithMaxDelay(5*sec)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 3, Hedges: 1, Winner: 3, Elapsed: 35 * ms}, st)
			assert.Equal(t, []time.Duration{0, 20 * ms, 30 * ms}, s.starts, "refused at 10ms; the retry at 20ms is hedged at 30ms")
			assert.Equal(t, []time.Duration{5 * sec, 0, 5 * sec, 0}, l.maxWaits, "a retry may wait; a hedge may not")
			assert.Equal(t, []limit.Result{other, accepted, other}, results(l.outcomes))
			l.balanced(t)
		})
	})
}

// seq draws from draws in turn, then the last one for ever.
func seq(draws ...uint64) func() uint64 {
	var n atomic.Int64
	return func() uint64 { return draws[min(int(n.Add(1)), len(draws))-1] }
}

func TestAThrottlerRefusesHedgesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first draw lets the call go; every other one is under the
		// probability of a refusal, which ten throttled answers set at 10/11.
		th, err := limit.NewThrottler(limit.ThrottlerConfig{Rand: seq(math.MaxUint64, 0)})
		require.NoError(t, err)
		for range 10 {
			th.Record(t.Context(), limit.Outcome{Result: limit.Throttled})
		}
		l := &ledger{inner: th}
		s := newServer(50*ms, 5*ms)
		st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1, Elapsed: 50 * ms}, st)
		assert.Equal(t, 1, s.n, "the hedge was refused locally, not sent")
		assert.Equal(t, 1, l.refused)
		l.balanced(t)
	})
}

func TestEveryPermissionOfAHedgedCallIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th, err := limit.NewThrottler(limit.ThrottlerConfig{Rand: seq(math.MaxUint64)})
		require.NoError(t, err)
		l := &ledger{inner: th}
		s := newServer(15*ms, time.Second, time.Second, 5*ms)
		s.errs = []error{errReset}
		st, err := hedging(t, 10*ms, 3, retry.WithLimiter(l), retry.WithMaxAttempts(5)).Run(t.Context(), s.op)
		require.NoError(t, err)
		// 0: attempt 1; 10ms: hedge 2; 15ms: 1 fails, retry 3; 25ms: hedge 4, which wins at 30ms.
		assert.Equal(t, retry.Stats{Attempts: 4, Hedges: 2, Winner: 4, Elapsed: 30 * ms}, st)
		assert.Equal(t, 4, l.granted)
		assert.ElementsMatch(t, []limit.Result{other, accepted, other, other}, results(l.outcomes))
		l.balanced(t)
		// 4 requests, 1 accepted, K = 2: (4 − 2) / 5.
		assert.InDelta(t, 0.4, th.RejectProbability(), 1e-9)
	})
}

func TestALimiterRefusalOfAHedgedRetry(t *testing.T) {
	refuseThird := []grant{{ok: true}, {ok: true}, {ok: false}}
	t.Run("ends the call when nothing else is in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{ok: true}, {ok: false}}}}
			s := newServer(5 * ms)
			s.errs = []error{errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
			require.ErrorIs(t, err, retry.ErrLimited)
			require.ErrorIs(t, err, errReset, "the last attempt's error is kept")
			assert.Equal(t, retry.Stats{Attempts: 1, Elapsed: 5 * ms}, st)
			assert.Equal(t, 1, s.n)
			assert.Equal(t, []limit.Result{other}, results(l.outcomes))
			l.balanced(t)
		})
	})
	t.Run("leaves the attempt in flight its chance to win", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: refuseThird}}
			s := newServer(50*ms, 5*ms)
			s.errs = []error{nil, errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 1, Elapsed: 50 * ms}, st)
			assert.Equal(t, []limit.Result{other, accepted}, results(l.outcomes))
			l.balanced(t)
		})
	})
	t.Run("fails with ErrLimited when the attempt in flight fails too", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: refuseThird}}
			s := newServer(50*ms, 5*ms)
			s.errs = []error{errReset, errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
			require.ErrorIs(t, err, retry.ErrLimited)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Elapsed: 50 * ms}, st)
			assert.Len(t, l.maxWaits, 3, "no attempt asked for after the refusal")
			l.balanced(t)
		})
	})
}

func TestAHedgedCallDoesNotWaitForTheLimiterOnceWon(t *testing.T) {
	t.Run("a limiter that ends its wait with the call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{ok: true}, {ok: true}, {wait: 100 * ms, ok: true}}}}
			s := newServer(50*ms, 5*ms)
			s.errs = []error{nil, errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l), retry.WithMaxDelay(5*sec)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 1, Elapsed: 50 * ms}, st,
				"the retry's wait, from 15ms, ends when attempt 1 wins")
			assert.Equal(t, 1, l.refused)
			assert.Equal(t, []limit.Result{other, accepted}, results(l.outcomes))
			l.balanced(t)
		})
	})
	t.Run("a permission given after the call ended is recorded as other", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{acquire: func(n int, _ context.Context, _ time.Duration) bool {
				if n == 3 {
					time.Sleep(100 * ms) // deaf to the context
				}
				return true
			}}
			s := newServer(50*ms, 5*ms)
			s.errs = []error{nil, errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 1, Elapsed: 115 * ms}, st,
				"the call returns once its last goroutine is done")
			assert.Equal(t, 2, s.n)
			assert.Equal(t, []limit.Result{other, accepted, other}, results(l.outcomes))
			l.balanced(t)
		})
	})
}

func TestAHedgedCallsFirstAttemptAsksAsThePlainLoopDoes(t *testing.T) {
	t.Run("a refusal sends nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{ok: false}}}}
			s := newServer(ms)
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(t.Context(), s.op)
			require.ErrorIs(t, err, retry.ErrLimited)
			assert.EqualError(t, err, "retry: refused locally by the client-side rate limiter, nothing sent before the first attempt")
			assert.Zero(t, s.n)
			assert.Equal(t, retry.Stats{}, st)
			assert.Empty(t, l.outcomes)
		})
	})
	t.Run("its wait is bounded by the deadline, and the hedging delay runs from the attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &ledger{inner: &scripted{answers: []grant{{wait: 30 * ms, ok: true}}}}
			ctx, cancel := context.WithTimeout(t.Context(), sec)
			defer cancel()
			s := newServer(time.Second, 5*ms)
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l)).Run(ctx, s.op)
			require.NoError(t, err)
			assert.Less(t, l.maxWaits[0], sec)
			assert.Equal(t, []time.Duration{30 * ms, 40 * ms}, s.starts)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 45 * ms}, st, "a first wait counts only in Elapsed")
			l.balanced(t)
		})
	})
}

func TestLimiterWaitsAreVisible(t *testing.T) {
	t.Run("plain loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var ev events
			l := &scripted{answers: []grant{{wait: 300 * ms, ok: true}, {wait: 50 * ms, ok: true}}}
			st, err := exact(t, retry.WithLimiter(l), retry.WithObserver(observe.Func(ev.hook))).Run(t.Context(), failing(errReset).op)
			require.NoError(t, err)
			assert.Equal(t, []observe.Event{
				{Kind: observe.LimiterWaited, Attempt: 1, Delay: 300 * ms, Elapsed: 300 * ms},
				{Kind: observe.LimiterWaited, Attempt: 2, Started: 1, Delay: 50 * ms, Waited: 150 * ms, Elapsed: 450 * ms},
			}, of(observe.LimiterWaited, ev.list))
			assert.Equal(t, []observe.Kind{observe.LimiterWaited, observe.AttemptDone, observe.RetryScheduled, observe.LimiterWaited, observe.AttemptDone},
				ev.kinds(), "each comes just before its attempt")
			assert.Equal(t, 150*ms, st.Waited)
		})
	})
	t.Run("hedged loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var ev events
			l := &ledger{inner: &scripted{answers: []grant{{wait: 30 * ms, ok: true}, {wait: 20 * ms, ok: true}}}}
			s := newServer(5*ms, 5*ms)
			s.errs = []error{errReset}
			st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l), retry.WithObserver(observe.Func(ev.hook))).Run(t.Context(), s.op)
			require.NoError(t, err)
			assert.Equal(t, []observe.Event{
				{Kind: observe.LimiterWaited, Attempt: 1, Delay: 30 * ms, Elapsed: 30 * ms},
				{Kind: observe.LimiterWaited, Attempt: 2, Started: 1, Delay: 20 * ms, Waited: 20 * ms, Elapsed: 55 * ms},
			}, of(observe.LimiterWaited, ev.list))
			assert.Equal(t, retry.Stats{Attempts: 2, Winner: 2, Waited: 20 * ms, Elapsed: 60 * ms}, st,
				"a wait before a retry counts as waited")
			assert.Len(t, l.maxWaits, 2, "the timer found no attempt in flight to hedge while the retry waited")
			l.balanced(t)
		})
	})
	t.Run("a permission given at once is no wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var ev events
			r := exact(t, retry.WithLimiter(&scripted{}), retry.WithObserver(observe.Func(ev.hook)))
			require.NoError(t, r.Do(t.Context(), failing(errReset).op))
			_, err := hedging(t, 10*ms, 2, retry.WithLimiter(&scripted{}), retry.WithObserver(observe.Func(ev.hook))).Run(t.Context(), newServer(50*ms, 5*ms).op)
			require.NoError(t, err)
			assert.Empty(t, of(observe.LimiterWaited, ev.list))
		})
	})
}

func TestLoggerLogsLimiterWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
		l := &scripted{answers: []grant{{wait: 2 * sec, ok: true}, {wait: 50 * ms, ok: true}}}
		require.NoError(t, exact(t, retry.WithLimiter(l), retry.WithMaxDelay(5*sec), retry.WithLogger(log)).Do(t.Context(), failing(errReset).op))
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.Len(t, lines, 3, buf.String())
		assert.Contains(t, lines[0], `level=INFO msg="retry: the client-side rate limiter held the attempt" attempt=1 delay=2s waited=0s elapsed=2s`)
		assert.Contains(t, lines[1], `level=DEBUG msg="retry: waiting before the next attempt" attempt=1 delay=100ms`)
		assert.Contains(t, lines[2], `level=DEBUG msg="retry: the client-side rate limiter held the attempt" attempt=2 delay=50ms waited=150ms elapsed=2.15s`)
	})
}

func TestLimiterWaitedString(t *testing.T) {
	assert.Equal(t, "limiter waited", observe.LimiterWaited.String())
}

func TestAHedgeAskedOfASlowLimiterHoldsNothingElseUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The hedge's question takes a round trip of 3ms (limit/redis makes
		// one), deaf to the context; attempt 1 wins during it.
		l := &ledger{acquire: func(n int, _ context.Context, _ time.Duration) bool {
			if n == 2 {
				time.Sleep(3 * ms)
			}
			return true
		}}
		var ev events
		s := newServer(12*ms, 5*ms)
		st, err := hedging(t, 10*ms, 2, retry.WithLimiter(l), retry.WithObserver(observe.Func(ev.hook))).Run(t.Context(), s.op)
		require.NoError(t, err)
		done := of(observe.AttemptDone, ev.list)
		require.Len(t, done, 1)
		assert.Equal(t, 12*ms, done[0].Elapsed, "the winner's end was not held up by the question")
		assert.Equal(t, 1, s.n, "the permission came after the call was won: no hedge")
		assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1, Elapsed: 13 * ms}, st, "the call returns once the question is answered")
		assert.Equal(t, []limit.Result{accepted, other}, results(l.outcomes), "the unused permission is recorded")
		l.balanced(t)
	})
}
