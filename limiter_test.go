package retry_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripted is a limit.Limiter that answers from a script and records what it
// was asked and told.
type scripted struct {
	mu       sync.Mutex
	answers  []grant // one per Acquire; past the end: at once
	maxWaits []time.Duration
	outcomes []limit.Outcome
}

type grant struct {
	wait time.Duration
	ok   bool
}

func (s *scripted) Acquire(ctx context.Context, maxWait time.Duration) bool {
	s.mu.Lock()
	s.maxWaits = append(s.maxWaits, maxWait)
	g := grant{ok: true}
	if n := len(s.maxWaits); n <= len(s.answers) {
		g = s.answers[n-1]
	}
	s.mu.Unlock()
	if !g.ok || g.wait > maxWait {
		return false
	}
	select {
	case <-time.After(g.wait):
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *scripted) Record(_ context.Context, o limit.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, o)
}

func TestLimiterIsAskedBeforeEveryAttemptAndToldEveryOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scripted{}
		op := failing(httpErr(429, 1), errReset)
		r := exact(t, retry.WithLimiter(l))
		st, err := r.Run(context.Background(), op.op)
		require.NoError(t, err)
		assert.Equal(t, 3, st.Attempts)
		assert.Len(t, l.maxWaits, 3, "asked before each attempt, the first included")
		assert.Equal(t, []limit.Outcome{
			{Result: limit.Throttled, RetryAfter: time.Second},
			{Result: limit.Other},
			{Result: limit.Accepted},
		}, l.outcomes)
	})
}

func TestLimiterRefusalBeforeTheFirstAttemptSendsNothing(t *testing.T) {
	l := &scripted{answers: []grant{{ok: false}}}
	op := failing()
	err := exact(t, retry.WithLimiter(l)).Do(context.Background(), op.op)
	require.ErrorIs(t, err, retry.ErrLimited)
	assert.Zero(t, op.calls, "nothing sent")
	assert.EqualError(t, err, "retry: refused locally by the client-side rate limiter, nothing sent before the first attempt")
	assert.Empty(t, l.outcomes)
}

func TestLimiterRefusalOfARetryEndsTheCallWithTheLastError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scripted{answers: []grant{{ok: true}, {ok: false}}}
		op := always(errReset)
		st, err := exact(t, retry.WithLimiter(l), retry.WithMaxAttempts(5)).Run(context.Background(), op.op)
		require.ErrorIs(t, err, retry.ErrLimited)
		require.ErrorIs(t, err, errReset, "the last attempt's error is kept")
		assert.Equal(t, 1, op.calls, "the refusal is not retried")
		assert.Equal(t, 1, st.Attempts)
	})
}

func TestLimiterWaitIsSleptAndCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scripted{answers: []grant{{wait: 300 * ms, ok: true}, {wait: 50 * ms, ok: true}}}
		op := failing(errReset)
		start := time.Now()
		st, err := exact(t, retry.WithLimiter(l)).Run(context.Background(), op.op)
		require.NoError(t, err)
		assert.Equal(t, 300*ms, op.at[0].Sub(start), "the first attempt waited for the limiter")
		assert.Equal(t, []time.Duration{150 * ms}, op.gaps(), "backoff 100ms, then the limiter's 50ms")
		assert.Equal(t, 150*ms, st.Waited, "a wait before a retry counts as waited")
		assert.Equal(t, 450*ms, st.Elapsed)
	})
}

func TestLimiterMayNotWaitPastTheDeadlineOrMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scripted{answers: []grant{{wait: 2 * sec, ok: true}}}
		ctx, cancel := context.WithTimeout(context.Background(), sec)
		defer cancel()
		op := failing()
		err := exact(t, retry.WithLimiter(l), retry.WithMaxDelay(5*sec)).Do(ctx, op.op)
		require.ErrorIs(t, err, retry.ErrLimited)
		assert.Zero(t, op.calls)
		assert.Less(t, l.maxWaits[0], sec, "the deadline bounds the wait")

		l = &scripted{}
		require.NoError(t, exact(t, retry.WithLimiter(l), retry.WithMaxDelay(5*sec)).Do(context.Background(), op.op))
		assert.Equal(t, 5*sec, l.maxWaits[0], "MaxDelay bounds the wait")
	})
}

func TestLimiterWaitEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &scripted{answers: []grant{{wait: 2 * sec, ok: true}}}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(sec, cancel)
		op := failing()
		err := exact(t, retry.WithLimiter(l)).Do(ctx, op.op)
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, op.calls)
	})
}

func TestWithLimiterRefusesNil(t *testing.T) {
	_, err := retry.New(retry.WithLimiter(nil))
	require.ErrorIs(t, err, retry.ErrInvalid)
	assert.EqualError(t, err, "retry: WithLimiter(<nil>): must not be nil")
}
