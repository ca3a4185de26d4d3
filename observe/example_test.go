package observe_test

import (
	"context"
	"fmt"

	"github.com/retrykit/retry/observe"
)

// An observer is one function of the event: this one prints each retry's
// wait, and ignores the rest.
func ExampleFunc() {
	o := observe.Func(func(_ context.Context, e observe.Event) {
		if e.Kind == observe.RetryScheduled {
			fmt.Printf("attempt %d failed; next in %v\n", e.Attempt, e.Delay)
		}
	})
	o.Observe(context.Background(), observe.Event{Kind: observe.RetryScheduled, Attempt: 1, Delay: 200e6})
	o.Observe(context.Background(), observe.Event{Kind: observe.AttemptDone, Attempt: 2})
	// Output: attempt 1 failed; next in 200ms
}
