package retry_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attempt that waited out a server's Retry-After asks for room before it
// starts: the call's attempts never pass MaxAttempts, and its attempts in
// flight never pass the hedging limit. Attempt 1 hangs, then fails asking
// for 1s; its hedge fails at once asking the same; each goroutine then
// sleeps 1s and wakes to an attempt it may start only if there is room.
func TestAWaitedAttemptAsksForRoom(t *testing.T) {
	t.Run("MaxAttempts counts every attempt, the waited ones included", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(50*ms, 0, 10*time.Second)
			s.errs = []error{httpErr(503, 1), httpErr(503, 1)}
			st, err := hedging(t, 10*ms, 2, retry.WithMaxAttempts(3)).Run(t.Context(), s.op)
			require.NoError(t, err, "attempt 3 succeeds")
			assert.Equal(t, 3, s.n, "3 attempts at most")
			assert.Equal(t, 3, st.Attempts)
		})
	})
	t.Run("the hedging limit counts the attempts that waited", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newServer(50*ms, 0, time.Hour)
			s.errs = []error{httpErr(503, 1), httpErr(503, 1)}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := hedging(t, 10*ms, 2, retry.WithMaxAttempts(10)).Run(ctx, s.op)
			require.Error(t, err)
			assert.LessOrEqual(t, s.peak, 2, "never more than 2 attempts in flight")
		})
	})
}

// An attempt that exits its goroutine (runtime.Goexit, which t.FailNow and
// require's assertions call) frees its slot: the call ends, the attempts in
// flight are cancelled, and the caller's goroutine exits too, as it would
// had the attempt run on it — instead of waiting forever for the slot.
func TestAnAttemptThatExitsItsGoroutineEndsTheCall(t *testing.T) {
	for _, tc := range []struct {
		desc string
		exit int32 // the attempt that exits
	}{
		{"a hedge, on a goroutine of its own", 2},
		{"the first attempt, on the caller's goroutine", 1},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := hedging(t, 10*ms, 2)
				var n, cancelled atomic.Int32
				returned := false
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = h.Run(t.Context(), func(ctx context.Context) error {
						if n.Add(1) == tc.exit {
							if tc.exit == 1 {
								time.Sleep(20 * ms) // let the hedge start
							}
							runtime.Goexit()
						}
						<-ctx.Done()
						cancelled.Add(1)
						return ctx.Err()
					})
					returned = true
				}()
				<-done
				assert.False(t, returned, "the caller's goroutine exited")
				assert.Equal(t, int32(2), n.Load())
				assert.Equal(t, int32(1), cancelled.Load(), "the other attempt was cancelled, and returned")
			})
		})
	}
}
