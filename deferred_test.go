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

func TestDeferredTellsAHookWhichLoopCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var outerDeferred, innerDeferred []bool
		inner := retrier(t, retry.WithMaxAttempts(3), retry.WithHook(func(ctx context.Context, e retry.Event) {
			innerDeferred = append(innerDeferred, retry.Deferred(ctx))
		}))
		outer := retrier(t, retry.Outermost(), retry.WithMaxAttempts(3), retry.WithHook(func(ctx context.Context, e retry.Event) {
			outerDeferred = append(outerDeferred, retry.Deferred(ctx))
		}))
		s := always(httpErr(503, -1))
		err := outer.Do(t.Context(), func(ctx context.Context) error { return inner.Do(ctx, s.op) })
		require.Error(t, err)
		assert.Equal(t, 3, s.calls, "the outer loop retries, the inner one makes one attempt each time")
		assert.Equal(t, []bool{true, true, true}, innerDeferred, "every event of the inner loop is a deferred one")
		assert.NotContains(t, outerDeferred, true, "the outermost loop's events are its own")
	})
}

func TestDeferred(t *testing.T) {
	for _, tc := range []struct {
		desc string
		ctx  context.Context
		want bool
	}{
		{"a plain context is not deferred", context.Background(), false},
		{"a SingleAttempt context is deferred", retry.SingleAttempt(context.Background()), true},
		{"a context derived from a SingleAttempt one is deferred", context.WithValue(retry.SingleAttempt(context.Background()), struct{}{}, 1), true},
		{"a nil context is not deferred", nil, false},
	} {
		t.Run(tc.desc, func(t *testing.T) { assert.Equal(t, tc.want, retry.Deferred(tc.ctx)) })
	}
}

func ExampleDeferred() {
	counted := 0
	hook := func(ctx context.Context, e retry.Event) {
		if e.Kind == retry.AttemptDone && !retry.Deferred(ctx) {
			counted++ // an attempt of this loop's own
		}
	}
	inner, _ := retry.New(retry.WithHook(hook))
	outer, _ := retry.New(retry.Outermost(), retry.WithHook(hook))
	err := outer.Do(context.Background(), func(ctx context.Context) error {
		return inner.Do(ctx, func(context.Context) error { return classify.Permanent(errors.New("bad request")) })
	})
	fmt.Println(counted, err != nil)
	// Output: 1 true
}
