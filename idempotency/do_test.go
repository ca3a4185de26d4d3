package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one call of Do in a sequence with one key.
type step struct {
	fp        idempotency.Fingerprint
	fn        *counter
	opts      []idempotency.Option
	wantValue string
	wantRan   bool  // fn ran for this call
	wantErr   error // matched with errors.Is; nil for success
}

func TestDoSequences(t *testing.T) {
	ok := func() *counter { return &counter{value: "receipt-1"} }
	failing := func() *counter { return &counter{err: errBoom} }
	big := &counter{value: strings.Repeat("x", 1<<20+1)} // over the default cap, 1 MiB
	tests := []struct {
		name  string
		steps []step
	}{
		{"a first call runs fn and a repeat replays its result", []step{
			{fp: fp, fn: ok(), wantValue: "receipt-1", wantRan: true},
			{fp: fp, fn: ok(), wantValue: "receipt-1"},
		}},
		{"the same key with another fingerprint is key reuse, and fn does not run", []step{
			{fp: fp, fn: ok(), wantValue: "receipt-1", wantRan: true},
			{fp: otherFP, fn: ok(), wantErr: idempotency.ErrKeyReuse},
			{fp: fp, fn: ok(), wantValue: "receipt-1"},
		}},
		{"a failure releases the key, so the retry runs fn again", []step{
			{fp: fp, fn: failing(), wantRan: true, wantErr: errBoom},
			{fp: fp, fn: ok(), wantValue: "receipt-1", wantRan: true},
		}},
		{"a released key accepts another fingerprint", []step{
			{fp: fp, fn: failing(), wantRan: true, wantErr: errBoom},
			{fp: otherFP, fn: ok(), wantValue: "receipt-1", wantRan: true},
		}},
		{"KeepFailures keeps the failure for the window", []step{
			{fp: fp, fn: failing(), opts: []idempotency.Option{idempotency.KeepFailures()}, wantRan: true, wantErr: errBoom},
			{fp: fp, fn: ok(), wantErr: idempotency.ErrStoredFailure},
		}},
		{"a result over the cap is returned once, then reported as not retained", []step{
			{fp: fp, fn: big, wantValue: big.value, wantRan: true},
			{fp: fp, fn: ok(), wantErr: idempotency.ErrNotRetained},
		}},
		{"a result at the cap is retained", []step{
			{fp: fp, fn: &counter{value: "12345"}, opts: []idempotency.Option{idempotency.WithMaxResultSize(5)}, wantValue: "12345", wantRan: true},
			{fp: fp, fn: ok(), wantValue: "12345"},
		}},
		{"the zero fingerprint matches only itself", []step{
			{fn: ok(), wantValue: "receipt-1", wantRan: true},
			{fp: fp, fn: ok(), wantErr: idempotency.ErrKeyReuse},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newMemory(t)
			for i, st := range tt.steps {
				before := st.fn.runs.Load()
				res, err := idempotency.Do(t.Context(), s, "key-1", st.fp, st.fn.fn, st.opts...)
				if st.wantErr != nil {
					require.ErrorIs(t, err, st.wantErr, "step %d", i)
				} else {
					require.NoError(t, err, "step %d", i)
					assert.Equal(t, st.wantValue, string(res.Value), "step %d", i)
					assert.Equal(t, !st.wantRan, res.Replay, "step %d: Replay", i)
				}
				assert.Equal(t, st.wantRan, st.fn.runs.Load() > before, "step %d: fn ran", i)
			}
		})
	}
}

func TestDoErrorsSayWhetherToRetry(t *testing.T) {
	s := newMemory(t)
	_, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{value: "v"}).fn)
	require.NoError(t, err)
	_, err = idempotency.Do(t.Context(), s, "k", otherFP, (&counter{}).fn)
	var ierr *idempotency.Error
	require.ErrorAs(t, err, &ierr)
	assert.Equal(t, "k", ierr.Key)
	assert.NotEmpty(t, ierr.Execution, "the error names the execution that owns the key")
	assert.Equal(t, classify.Stop, classify.Default(err).Verdict, "key reuse is permanent without any extra classifier")
	assert.Equal(t, classify.Stop, idempotency.Classify(err).Verdict)
	assert.Equal(t, `idempotency: idempotency key reused with a different request (key "k")`, err.Error())
}

func TestDoInsideARetryLoopNeverRetriesKeyReuse(t *testing.T) {
	s := newMemory(t)
	_, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{value: "v"}).fn)
	require.NoError(t, err)
	attempts := 0
	err = retry.Do(t.Context(), func(ctx context.Context) error {
		attempts++
		_, err := idempotency.Do(ctx, s, "k", otherFP, (&counter{}).fn)
		return err
	}, retry.WithMaxAttempts(5))
	require.ErrorIs(t, err, idempotency.ErrKeyReuse)
	require.ErrorIs(t, err, retry.ErrPermanent)
	assert.Equal(t, 1, attempts)
}

func TestDoRunsFnOnceForManyConcurrentCallers(t *testing.T) {
	for _, tt := range []struct {
		name  string
		store func(testing.TB) idempotency.Store
	}{
		{"callers of a store that signals the end of a claim wake with it", func(t testing.TB) idempotency.Store { return newMemory(t) }},
		{"callers of a store without signals poll it", func(t testing.TB) idempotency.Store { return polled{newMemory(t)} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := tt.store(t)
				fn := &counter{d: 2 * time.Second, value: "receipt"}
				const callers = 100
				results := make([]idempotency.Result, callers)
				errs := make([]error, callers)
				var wg sync.WaitGroup
				start := time.Now()
				for i := range callers {
					wg.Go(func() { results[i], errs[i] = idempotency.Do(t.Context(), s, "order-7", fp, fn.fn) })
				}
				wg.Wait()
				assert.Equal(t, int32(1), fn.runs.Load(), "fn runs exactly once")
				assert.LessOrEqual(t, time.Since(start), 2*time.Second+500*time.Millisecond, "waiters return soon after the first (polls are at most 500ms apart)")
				fresh := 0
				for i := range callers {
					require.NoError(t, errs[i])
					require.Equal(t, "receipt", string(results[i].Value))
					require.Equal(t, results[0].Execution, results[i].Execution, "everyone gets the one execution's result")
					if !results[i].Replay {
						fresh++
					}
				}
				assert.Equal(t, 1, fresh)
			})
		})
	}
}

func TestDoRecoversACrashedExecutorsKeyAfterTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemory(t)
		// An executor claims the key and crashes: nothing extends, completes
		// or releases its claim.
		_, ok, err := s.Claim(t.Context(), idempotency.StoreKey{Key: "job-3/step-2"}, idempotency.Record{Status: idempotency.InProgress, Token: "crashed", Fingerprint: fp}, 30*time.Second) // the default lease
		require.NoError(t, err)
		require.True(t, ok)
		start := time.Now()
		fn := &counter{value: "done"}
		res, err := idempotency.Do(t.Context(), s, "job-3/step-2", fp, fn.fn)
		require.NoError(t, err)
		assert.Equal(t, 30*time.Second, time.Since(start), "the waiter takes the key over when the lease runs out")
		assert.Equal(t, int32(1), fn.runs.Load())
		assert.False(t, res.Replay)
		assert.NotEqual(t, "crashed", res.Execution)
	})
}

func TestDoKeepsItsClaimWhileFnOutlivesTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemory(t)
		fn := &counter{d: 5 * time.Minute, value: "long"}
		var first idempotency.Result
		var wg sync.WaitGroup
		wg.Go(func() {
			var err error
			first, err = idempotency.Do(t.Context(), s, "k", fp, fn.fn, idempotency.WithLease(time.Second))
			assert.NoError(t, err)
		})
		time.Sleep(4 * time.Minute) // far past the 1s lease: only the heartbeat keeps the claim
		second, err := idempotency.Do(t.Context(), s, "k", fp, fn.fn, idempotency.WithLease(time.Second))
		wg.Wait()
		require.NoError(t, err)
		assert.Equal(t, int32(1), fn.runs.Load())
		assert.True(t, second.Replay)
		assert.Equal(t, first.Execution, second.ReplayOf)
	})
}

func TestDoCancelsFnWhenItsClaimIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &faulty{Store: newMemory(t), extendErr: idempotency.ErrClaimLost}
		var cause error
		_, err := idempotency.Do(t.Context(), s, "k", fp, func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil, ctx.Err()
		}, idempotency.WithLease(3*time.Second))
		require.ErrorIs(t, cause, idempotency.ErrClaimLost, "fn learns that another executor may own the key")
		require.ErrorIs(t, err, context.Canceled, "Do returns fn's error")
		var ierr *idempotency.Error
		require.ErrorAs(t, err, &ierr, "and says that the claim was lost")
		assert.Equal(t, idempotency.ErrClaimLost, ierr.Reason)
	})
}

func TestDoReleasesTheKeyWhenFnPanics(t *testing.T) {
	s := newMemory(t)
	func() {
		defer func() { assert.Equal(t, "fn exploded", recover()) }()
		_, _ = idempotency.Do(t.Context(), s, "k", fp, func(context.Context) ([]byte, error) { panic("fn exploded") })
	}()
	fn := &counter{value: "v"}
	_, err := idempotency.Do(t.Context(), s, "k", fp, fn.fn)
	require.NoError(t, err)
	assert.Equal(t, int32(1), fn.runs.Load(), "the key was free at once")
}

func TestDoWaitsNoLongerThanAllowed(t *testing.T) {
	tests := []struct {
		name      string
		ctx       func(context.Context) (context.Context, context.CancelFunc)
		opts      []idempotency.Option
		wantWait  time.Duration
		wantCause error
	}{
		{"the context's deadline ends the wait", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 3*time.Second)
		}, nil, 3 * time.Second, context.DeadlineExceeded},
		{"WithMaxWait ends the wait", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return ctx, func() {}
		}, []idempotency.Option{idempotency.WithMaxWait(2 * time.Second)}, 2 * time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newMemory(t)
				_, _, err := s.Claim(t.Context(), idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.InProgress, Token: "busy", Fingerprint: fp}, time.Hour)
				require.NoError(t, err)
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				start := time.Now()
				_, err = idempotency.Do(ctx, s, "k", fp, (&counter{}).fn, tt.opts...)
				assert.Equal(t, tt.wantWait, time.Since(start))
				require.ErrorIs(t, err, idempotency.ErrInProgress)
				if tt.wantCause != nil {
					require.ErrorIs(t, err, tt.wantCause)
				}
				var ierr *idempotency.Error
				require.ErrorAs(t, err, &ierr)
				assert.Equal(t, "busy", ierr.Execution)
				assert.Equal(t, classify.Retry, classify.Default(err).Verdict, "waiting again is safe")
			})
		})
	}
}

func TestDoReportsStoreFailures(t *testing.T) {
	errDown := errors.New("connection refused")
	tests := []struct {
		name       string
		store      func(idempotency.Store) *faulty
		wantErr    error
		wantReason error
		wantRuns   int32
	}{
		{"a store that cannot claim runs nothing", func(s idempotency.Store) *faulty { return &faulty{Store: s, claimErr: errDown} },
			errDown, idempotency.ErrStore, 0},
		{"a store that cannot record the result still returns it", func(s idempotency.Store) *faulty { return &faulty{Store: s, completeErr: errDown} },
			errDown, idempotency.ErrStore, 1},
		{"a record the store refuses as too large is recorded as not retained", func(s idempotency.Store) *faulty {
			return &faulty{Store: &tooLarge{Store: s}}
		}, nil, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.store(newMemory(t))
			fn := &counter{value: "v"}
			res, err := idempotency.Do(t.Context(), s, "k", fp, fn.fn)
			assert.Equal(t, tt.wantRuns, fn.runs.Load())
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, "v", string(res.Value))
				_, err := idempotency.Do(t.Context(), s, "k", fp, fn.fn)
				require.ErrorIs(t, err, idempotency.ErrNotRetained)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorIs(t, err, tt.wantReason)
			if tt.wantRuns > 0 {
				assert.Equal(t, "v", string(res.Value), "fn ran: its result is not lost")
			}
		})
	}
}

// tooLarge refuses every record with a value.
type tooLarge struct{ idempotency.Store }

func (s *tooLarge) Complete(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) error {
	if len(rec.Value) > 0 {
		return idempotency.ErrTooLarge
	}
	return s.Store.Complete(ctx, key, rec, retention)
}

func TestDoRecordsTheOutcomeEvenIfTheCallerGaveUp(t *testing.T) {
	s := newMemory(t)
	ctx, cancel := context.WithCancel(t.Context())
	_, err := idempotency.Do(ctx, s, "k", fp, func(context.Context) ([]byte, error) {
		cancel() // the caller gives up while the work finishes
		return []byte("done"), nil
	})
	require.NoError(t, err)
	res, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{}).fn)
	require.NoError(t, err)
	assert.True(t, res.Replay)
	assert.Equal(t, "done", string(res.Value))
}

func TestDoRejectsBadArguments(t *testing.T) {
	s := newMemory(t)
	fn := (&counter{}).fn
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"an empty key", func() error { _, err := idempotency.Do(t.Context(), s, "", fp, fn); return err }, "must not be empty"},
		{"a key of 256 characters", func() error {
			_, err := idempotency.Do(t.Context(), s, strings.Repeat("k", 256), fp, fn)
			return err
		}, "256 characters: the limit is 255"},
		{"a key with a control character", func() error { _, err := idempotency.Do(t.Context(), s, "a\nb", fp, fn); return err }, "control characters"},
		{"a nil store", func() error { _, err := idempotency.Do(t.Context(), nil, "k", fp, fn); return err }, "idempotency.Do(<nil>): the store must not be nil"},
		{"a nil fn", func() error { _, err := idempotency.Do(t.Context(), s, "k", fp, nil); return err }, "idempotency.Do(<nil>): the function to run must not be nil"},
		{"a nil context", func() error {
			var ctx context.Context
			_, err := idempotency.Do(ctx, s, "k", fp, fn)
			return err
		}, "idempotency.Do(<nil>): the context must not be nil"},
		{"a lease under 1ms", func() error {
			_, err := idempotency.Do(t.Context(), s, "k", fp, fn, idempotency.WithLease(time.Microsecond))
			return err
		}, "idempotency.WithLease(1µs): must be at least 1ms"},
		{"a negative cap", func() error {
			_, err := idempotency.Do(t.Context(), s, "k", fp, fn, idempotency.WithMaxResultSize(-1))
			return err
		}, "idempotency.WithMaxResultSize(-1): must not be negative"},
		{"a negative wait", func() error {
			_, err := idempotency.Do(t.Context(), s, "k", fp, fn, idempotency.WithMaxWait(-time.Second))
			return err
		}, "idempotency.WithMaxWait(-1s): must not be negative"},
		{"a poll interval under 1ms given to Once", func() error {
			_, err := idempotency.Once(t.Context(), s, "k", func(context.Context) error { return nil }, idempotency.WithPollInterval(0))
			return err
		}, "idempotency.WithPollInterval(0s): must be at least 1ms"},
		{"the first of two bad options", func() error {
			_, err := idempotency.Do(t.Context(), s, "k", fp, fn, idempotency.WithRetention(0), idempotency.WithLease(0))
			return err
		}, "idempotency.WithRetention(0s)"},
		{"a nil option", func() error { _, err := idempotency.Do(t.Context(), s, "k", fp, fn, nil); return err }, "idempotency.Option(<nil>): must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.Zero(t, s.Len(), "nothing was stored")
}

func TestOnceRunsAnEffectUntilItSucceedsOnce(t *testing.T) {
	s := newMemory(t)
	var sent atomic.Int32
	send := func(fail bool) func(context.Context) error {
		return func(context.Context) error {
			if fail {
				return errBoom
			}
			sent.Add(1)
			return nil
		}
	}
	steps := []struct {
		fail    bool
		wantRan bool
		wantErr error
	}{
		{fail: true, wantRan: true, wantErr: errBoom}, // the provider failed: nothing sent
		{wantRan: true}, // the retry sends it
		{},              // a resumed job does not send it again
		{},
	}
	for i, st := range steps {
		ran, err := idempotency.Once(t.Context(), s, "job-9/email", send(st.fail))
		if st.wantErr != nil {
			require.ErrorIs(t, err, st.wantErr, "step %d", i)
		} else {
			require.NoError(t, err, "step %d", i)
		}
		assert.Equal(t, st.wantRan, ran, "step %d", i)
	}
	assert.Equal(t, int32(1), sent.Load())
}

func TestOnceWithKeepFailuresDoesNotRunAFailedEffectAgain(t *testing.T) {
	s := newMemory(t)
	runs := 0
	effect := func(context.Context) error {
		runs++
		return errBoom
	}
	ran, err := idempotency.Once(t.Context(), s, "job-9/charge", effect, idempotency.KeepFailures())
	require.ErrorIs(t, err, errBoom)
	assert.True(t, ran)
	ran, err = idempotency.Once(t.Context(), s, "job-9/charge", effect, idempotency.KeepFailures())
	require.ErrorIs(t, err, idempotency.ErrStoredFailure)
	assert.False(t, ran)
	assert.Equal(t, 1, runs, "the failure is kept for the window: the effect is not tried again")
}

func TestOnceUnderConcurrencySendsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemory(t)
		var sent, ran atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				r, err := idempotency.Once(t.Context(), s, "email", func(context.Context) error {
					time.Sleep(time.Second)
					sent.Add(1)
					return nil
				})
				assert.NoError(t, err)
				if r {
					ran.Add(1)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int32(1), sent.Load())
		assert.Equal(t, int32(1), ran.Load())
	})
}
