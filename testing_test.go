package retry_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodeThatRetries is the README's "Testing code that retries", as a
// test: fake time through testing/synctest (every timer, sleep and
// context.WithTimeout in the bubble runs on a fake clock), seeded jitter, and
// assertions on the attempts and the waits.
func TestCodeThatRetries(t *testing.T) {
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		var waits []time.Duration
		r, err := retry.New(
			retry.WithMaxAttempts(5),
			retry.WithJitterSource(jitter.NewSeeded(42)), // the same waits on every run
			retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
				if e.Kind == observe.RetryScheduled {
					waits = append(waits, e.Delay)
				}
			})),
		)
		require.NoError(t, err)

		calls := 0
		busy := &classify.StatusError{Code: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"10"}}}
		start := time.Now()
		st, err := r.Run(t.Context(), func(context.Context) error {
			if calls++; calls < 5 {
				return busy // inject the failure you want to test
			}
			return nil
		})

		require.NoError(t, err)
		assert.Equal(t, 5, calls)
		assert.Equal(t, 5, st.Attempts)
		require.Len(t, waits, 4)
		for _, w := range waits {
			assert.GreaterOrEqual(t, w, 10*time.Second, "Retry-After is authoritative")
		}
		assert.Equal(t, time.Since(start), st.Elapsed, "the fake clock moved exactly by the waits")
		assert.Equal(t, st.Waited, st.Elapsed)
	})
	assert.Less(t, time.Since(real), 5*time.Second, "40 s of waits took no real time")
}
