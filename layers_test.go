package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chain builds service A calling B calling C calling a dependency, each
// layer with its own retry loop of 3 attempts: the 3 × 3 × 3 of the sources.
type chain struct {
	a, b, c *retry.Retrier
	dep     *dependency
	// hide makes B and C return their errors as plain strings, the way a
	// service boundary (or careless wrapping) loses the error's type.
	hide bool
}

func (ch *chain) callA(ctx context.Context) error {
	return ch.a.Do(ctx, func(ctx context.Context) error { return ch.wrap("A", ch.callB(ctx)) })
}

func (ch *chain) callB(ctx context.Context) error {
	return ch.b.Do(ctx, func(ctx context.Context) error { return ch.wrap("B", ch.callC(ctx)) })
}

func (ch *chain) callC(ctx context.Context) error {
	return ch.c.Do(ctx, ch.dep.call)
}

func (ch *chain) wrap(layer string, err error) error {
	if err == nil {
		return nil
	}
	if ch.hide {
		return fmt.Errorf("%s: %v", layer, err) // %v: the *retry.Error is lost
	}
	return fmt.Errorf("%s: %w", layer, err)
}

func newChain(t *testing.T, a, b, c []retry.Option) *chain {
	t.Helper()
	ch := &chain{dep: &dependency{}}
	ch.dep.down.Store(true)
	ch.a, ch.b, ch.c = retrier(t, append(a, retry.WithMaxAttempts(3))...), retrier(t, append(b, retry.WithMaxAttempts(3))...), retrier(t, append(c, retry.WithMaxAttempts(3))...)
	return ch
}

func TestRetryInOneLayer(t *testing.T) {
	t.Run("loops that lose track of each other multiply: 27 calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, nil, nil, nil)
			ch.hide = true
			_ = ch.callA(t.Context())
			assert.Equal(t, int64(27), ch.dep.calls.Load())
		})
	})
	t.Run("by default the innermost loop retries and the outer ones do not", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, nil, nil, nil)
			err := ch.callA(t.Context())
			assert.Equal(t, int64(3), ch.dep.calls.Load(), "C's three attempts, not 3 × 3 × 3")
			assert.ErrorIs(t, err, retry.ErrExhausted, "C's reason is kept")
			assert.ErrorIs(t, err, errReset, "and the dependency's error")
			var outer *retry.Error
			require.ErrorAs(t, err, &outer)
			assert.Equal(t, retry.ErrPermanent, outer.Reason)
			assert.Equal(t, classify.ReasonRetriedInside, outer.Decision.Reason, "A's error says an inner loop gave up")
			assert.Equal(t, 1, outer.Attempts)
			assert.Contains(t, err.Error(), "retry: not retryable (already retried by an inner loop) after 1 attempt(s)")
		})
	})
	t.Run("Outermost makes the outer loop the only one that retries", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, []retry.Option{retry.Outermost()}, nil, nil)
			err := ch.callA(t.Context())
			assert.Equal(t, int64(3), ch.dep.calls.Load(), "A's three attempts, B and C one each time")
			var outer *retry.Error
			require.ErrorAs(t, err, &outer)
			assert.Equal(t, retry.ErrExhausted, outer.Reason)
			assert.Equal(t, 3, outer.Attempts)
			assert.Equal(t, classify.ReasonConnReset, outer.Decision.Reason, "A classified the dependency's own error")
			var inner *retry.Error
			assert.False(t, errors.As(outer.Last, &inner), "the nested loops returned the error unchanged")
		})
	})
	t.Run("an Outermost loop nested in another defers to it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, []retry.Option{retry.Outermost()}, []retry.Option{retry.Outermost()}, nil)
			_ = ch.callA(t.Context())
			assert.Equal(t, int64(3), ch.dep.calls.Load())
		})
	})
	t.Run("an Outermost loop in the middle retries for the layers below it only", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, nil, []retry.Option{retry.Outermost()}, nil)
			err := ch.callA(t.Context())
			assert.Equal(t, int64(3), ch.dep.calls.Load(), "B retries; A sees B gave up and stops")
			assert.ErrorIs(t, err, retry.ErrExhausted)
		})
	})
	t.Run("a nested loop that succeeds is unaffected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ch := newChain(t, []retry.Option{retry.Outermost()}, nil, nil)
			ch.dep.down.Store(false)
			require.NoError(t, ch.callA(t.Context()))
			assert.Equal(t, int64(1), ch.dep.calls.Load())
		})
	})
	t.Run("a loop outside the operation's context is not nested", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			outer := retrier(t, retry.Outermost(), retry.WithMaxAttempts(3))
			inner := retrier(t, retry.WithMaxAttempts(3))
			dep := &dependency{}
			dep.down.Store(true)
			_ = outer.Do(t.Context(), func(ctx context.Context) error {
				return inner.Do(context.WithoutCancel(t.Context()), dep.call) // not derived from ctx
			})
			assert.Equal(t, int64(3), dep.calls.Load(), "inner retried; outer saw an *Error and stopped")
		})
	})
}

func TestSingleAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := always(errReset)
		st, err := retrier(t).Run(retry.SingleAttempt(t.Context()), s.op)
		assert.Equal(t, 1, s.calls, "one attempt")
		assert.Equal(t, error(errReset), err, "the error comes back unchanged, for the caller to judge")
		assert.Equal(t, 1, st.Attempts)
	})
}
