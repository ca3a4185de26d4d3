package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeferredTellsAHookWhichLoopCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var outerDeferred, innerDeferred []bool
		inner := retrier(t, retry.WithMaxAttempts(3), retry.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
			innerDeferred = append(innerDeferred, e.Deferred)
		})))
		outer := retrier(t, retry.Outermost(), retry.WithMaxAttempts(3), retry.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
			outerDeferred = append(outerDeferred, e.Deferred)
		})))
		s := always(httpErr(503, -1))
		err := outer.Do(t.Context(), func(ctx context.Context) error { return inner.Do(ctx, s.op) })
		require.Error(t, err)
		assert.Equal(t, 3, s.calls, "the outer loop retries, the inner one makes one attempt each time")
		assert.Equal(t, []bool{true, true, true}, innerDeferred, "every event of the inner loop is a deferred one")
		assert.NotContains(t, outerDeferred, true, "the outermost loop's events are its own")
	})
}

func ExampleOutermost_observer() {
	counted := 0
	hook := func(_ context.Context, e observe.Event) {
		if e.Kind == observe.AttemptDone && !e.Deferred {
			counted++ // an attempt of this loop's own
		}
	}
	inner, _ := retry.New(retry.WithObserver(observe.Func(hook)))
	outer, _ := retry.New(retry.Outermost(), retry.WithObserver(observe.Func(hook)))
	err := outer.Do(context.Background(), func(ctx context.Context) error {
		return inner.Do(ctx, func(context.Context) error { return classify.Permanent(errors.New("bad request")) })
	})
	fmt.Println(counted, err != nil)
	// Output: 1 true
}
