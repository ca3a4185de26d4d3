package breaker_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnOpenBreakerRejectsAtOnceWithoutCallingTheDependency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBreakers(t, tripAt3)
		r := retrier(t, retry.WithBreakers(b), retry.WithObserver(&rec))
		dep := &dependency{err: syscall.ECONNREFUSED}
		for range 3 {
			require.ErrorIs(t, r.Do(to(t, payments), dep.call), retry.ErrExhausted)
		}
		assert.Equal(t, 9, dep.count(), "three logical calls of three attempts each")
		assert.Equal(t, []string{"closed→open"}, rec.changes())
		scheduled := len(rec.of(observe.RetryScheduled))

		start := time.Now()
		st, err := r.Run(to(t, payments), dep.call)
		assert.Equal(t, 9, dep.count(), "rejected: the dependency was not called")
		assert.Zero(t, time.Since(start), "no retry, no sleep")
		assert.Len(t, rec.of(observe.RetryScheduled), scheduled, "no retry scheduled")
		assert.ErrorIs(t, err, retry.ErrBreakerOpen)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.NotErrorIs(t, err, syscall.ECONNREFUSED, "told apart from the dependency's own errors")
		rerr := retryErr(t, err)
		assert.Equal(t, policy.StopOpen, rerr.Stop)
		assert.Zero(t, rerr.Attempts)
		assert.Zero(t, st.Attempts)
		assert.ErrorIs(t, rerr.Last, breaker.ErrOpen)
		assert.Empty(t, rerr.Failures)
		assert.Equal(t, "retry: refused by the circuit breaker, nothing sent before the first attempt: "+
			"breaker payments.example/charge: circuit breaker is open: the call was not made", err.Error())
		gaveUp := rec.of(observe.GaveUp)
		require.NotEmpty(t, gaveUp)
		assert.Equal(t, policy.StopOpen, gaveUp[len(gaveUp)-1].Stop)
		assert.Zero(t, gaveUp[len(gaveUp)-1].Attempt)
	})
}

// opened returns a Retrier of one attempt with breakers b, whose key
// payments was opened by failures.
func opened(t *testing.T, b *breaker.Breakers, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	r := retrier(t, append([]retry.Option{retry.WithMaxAttempts(1), retry.WithBreakers(b)}, opts...)...)
	down := &dependency{err: syscall.ECONNRESET}
	for b.State(payments) != breaker.StateOpen {
		require.Less(t, down.count(), 10, "the breaker opens")
		_ = r.Do(to(t, payments), down.call)
	}
	return r
}

func TestHalfOpenLetsTheProbesThroughAndSuccessesClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBreakers(t, tripAt3)
		r := opened(t, b, retry.WithObserver(&rec))
		dep := &dependency{}
		require.ErrorIs(t, r.Do(to(t, payments), dep.call), breaker.ErrOpen)

		time.Sleep(time.Second + ms) // the open timeout has passed: half-open
		// Two probes in flight at once take both slots; a third call is refused.
		release := make(chan struct{})
		slow := func(ctx context.Context) error { <-release; return dep.call(ctx) }
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { assert.NoError(t, r.Do(to(t, payments), slow)) })
		}
		synctest.Wait()
		assert.Equal(t, breaker.StateHalfOpen, b.State(payments))
		err := r.Do(to(t, payments), dep.call)
		assert.ErrorIs(t, err, breaker.ErrTooManyRequests)
		assert.ErrorIs(t, err, retry.ErrBreakerOpen)
		assert.Equal(t, policy.StopOpen, retryErr(t, err).Stop)
		close(release)
		wg.Wait()

		assert.Equal(t, 2, dep.count(), "the two probes, not the refused call")
		assert.Equal(t, breaker.StateClosed, b.State(payments), "two successful probes closed it")
		require.NoError(t, r.Do(to(t, payments), dep.call))
		assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed"}, rec.changes())
	})
}

func TestAFailedProbeReopens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBreakers(t, tripAt3)
		r := opened(t, b, retry.WithObserver(&rec))
		time.Sleep(time.Second + ms)
		dep := &dependency{err: syscall.ECONNRESET}
		assert.ErrorIs(t, r.Do(to(t, payments), dep.call), syscall.ECONNRESET, "the probe went through")
		assert.Equal(t, 1, dep.count())
		assert.ErrorIs(t, r.Do(to(t, payments), dep.call), breaker.ErrOpen, "and its failure reopened the breaker")
		assert.Equal(t, 1, dep.count())
		assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→open"}, rec.changes())
	})
}

// refusing is a limiter that lets nothing through.
type refusing struct{}

func (refusing) Acquire(context.Context, time.Duration) bool { return false }
func (refusing) Record(context.Context, limit.Outcome)       {}

func TestWhatCountsAsAFailureFollowsTheRetrierClassification(t *testing.T) {
	finalHere := retry.WithClassifier(func(err error) classify.Decision {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return classify.Decision{Verdict: classify.Stop, Reason: "refused is final here"}
		}
		return classify.Decision{}
	})
	failure := breaker.Counts{Requests: 1, TotalFailures: 1, ConsecutiveFailures: 1}
	success := breaker.Counts{Requests: 1, TotalSuccesses: 1, ConsecutiveSuccesses: 1}
	tests := []struct {
		name     string
		err      error
		opts     []retry.Option
		canceled bool // the caller cancels the call while the operation runs
		want     breaker.Counts
	}{
		{"a transient failure counts as a failure", syscall.ECONNRESET, nil, false, failure},
		{"a 503 counts as a failure", unavailable(-1), nil, false, failure},
		{"an error no classifier recognises counts as a failure", errors.New("something odd"), nil, false, failure},
		{"an unrecognised error of a strict Retrier counts as a failure", errors.New("something odd"), []retry.Option{retry.Strict()}, false, failure},
		{"a 400 the caller caused is a success: the dependency answered", &classify.StatusError{Code: http.StatusBadRequest}, nil, false, success},
		{"a permanent error is a success", classify.Permanent(errors.New("no such account")), nil, false, success},
		{"what the caller's classifier says is final is a success", syscall.ECONNREFUSED, []retry.Option{finalHere}, false, success},
		{"a success is a success", nil, nil, false, success},
		{"a call the caller cancelled is not counted", nil, nil, true, breaker.Counts{}},
		{"a call the limiter refused is not counted: nothing was sent", syscall.ECONNRESET, []retry.Option{retry.WithLimiter(refusing{})}, false, breaker.Counts{}},
		{"a call without the key its policy requires is not counted", syscall.ECONNRESET,
			[]retry.Option{retry.WithPolicy(policy.Policy{MaxAttempts: 1, RequireKey: true})}, false, breaker.Counts{}},
	}
	for _, perAttempt := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(tt.name+placement(perAttempt), func(t *testing.T) {
				b := newBreakers(t, breaker.Config{PerAttempt: perAttempt})
				r := retrier(t, append([]retry.Option{retry.WithMaxAttempts(1), retry.WithBreakers(b)}, tt.opts...)...)
				ctx, cancel := context.WithCancel(to(t, payments))
				defer cancel()
				op := func(context.Context) error { return tt.err }
				if tt.canceled {
					op = func(ctx context.Context) error { cancel(); return ctx.Err() }
				}
				_ = r.Do(ctx, op)
				assert.Equal(t, tt.want, b.Counts(payments))
			})
		}
	}
}

func placement(perAttempt bool) string {
	if perAttempt {
		return " (per attempt)"
	}
	return " (around the call)"
}

func TestOutsideCountsOneLogicalCallPerAttemptCountsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{err: syscall.ECONNRESET}
		outside := newBreakers(t, tripAt3)
		r := retrier(t, retry.WithBreakers(outside))
		require.ErrorIs(t, r.Do(to(t, payments), dep.call), retry.ErrExhausted)
		assert.Equal(t, 3, dep.count(), "three attempts")
		assert.Equal(t, uint32(1), outside.Counts(payments).TotalFailures, "one failure counted")
		assert.Equal(t, breaker.StateClosed, outside.State(payments))

		dep = &dependency{err: syscall.ECONNRESET}
		c := tripAt3
		c.PerAttempt = true
		each := newBreakers(t, c)
		r = retrier(t, retry.WithMaxAttempts(5), retry.WithBreakers(each))
		err := r.Do(to(t, payments), dep.call)
		assert.Equal(t, 3, dep.count(), "the third failed attempt opened it; the fourth was refused")
		assert.ErrorIs(t, err, retry.ErrBreakerOpen, "a refusal ends the call: no retry")
		rerr := retryErr(t, err)
		assert.Equal(t, policy.StopOpen, rerr.Stop)
		assert.Equal(t, 3, rerr.Attempts)
		assert.ErrorIs(t, rerr.Last, syscall.ECONNRESET, "the last attempt's error")
		assert.Len(t, rerr.Failures, 3)
		assert.Equal(t, breaker.StateOpen, each.State(payments))
	})
}

func TestAPerAttemptRefusalBeforeTheFirstAttemptSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := tripAt1
		c.PerAttempt = true
		b := newBreakers(t, c)
		r := opened(t, b)
		dep := &dependency{}
		err := r.Do(to(t, payments), dep.call)
		assert.Zero(t, dep.count())
		assert.ErrorIs(t, err, retry.ErrBreakerOpen)
		rerr := retryErr(t, err)
		assert.Zero(t, rerr.Attempts)
		assert.ErrorIs(t, rerr.Last, breaker.ErrOpen)
	})
}

func TestKeysAreIsolated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, tripAt1)
		r := opened(t, b)
		refunds := breaker.Key{Target: "payments.example", Operation: "refund"}
		dep := &dependency{}
		assert.ErrorIs(t, r.Do(to(t, payments), dep.call), breaker.ErrOpen)
		require.NoError(t, r.Do(to(t, refunds), dep.call), "another operation on the same target has its own breaker")
		require.NoError(t, r.Do(to(t, breaker.Key{Target: "other.example", Operation: "charge"}), dep.call))
		assert.Equal(t, 2, dep.count())
		assert.Equal(t, breaker.StateOpen, b.State(payments))
		assert.Equal(t, breaker.StateClosed, b.State(refunds))
		assert.Equal(t, breaker.Counts{Requests: 1, TotalSuccesses: 1, ConsecutiveSuccesses: 1}, b.Counts(refunds))
	})
}

func TestTheZeroKeyIsAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, tripAt1)
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
		_ = r.Do(t.Context(), (&dependency{err: syscall.ECONNRESET}).call)
		assert.Equal(t, breaker.StateOpen, b.State(breaker.Key{}), "calls without a key share the zero Key's breaker")

		dep := &dependency{}
		err := r.Do(t.Context(), dep.call)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Equal(t, "retry: refused by the circuit breaker, nothing sent before the first attempt: "+
			"breaker: circuit breaker is open: the call was not made", err.Error())
		assert.ErrorIs(t, r.Do(breaker.WithKey(t.Context(), breaker.Key{}), dep.call), breaker.ErrOpen, "the zero Key, set or not, is one key")
		require.NoError(t, r.Do(to(t, payments), dep.call), "a keyed call is not held back")
		assert.Equal(t, 1, dep.count())
	})
}

func TestMaxKeysBoundsTheBreakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := tripAt1
		c.MaxKeys = 2
		b := newBreakers(t, c)
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
		ok := &dependency{}
		for i := range 2 {
			require.NoError(t, r.Do(to(t, breaker.Key{Target: "host" + strconv.Itoa(i)}), ok.call))
		}
		extra := breaker.Key{Target: "one too many"}
		down := &dependency{err: syscall.ECONNRESET}
		for range 5 {
			assert.ErrorIs(t, r.Do(to(t, extra), down.call), syscall.ECONNRESET, "past MaxKeys, a new key runs without a breaker")
		}
		assert.Equal(t, 5, down.count())
		assert.Equal(t, breaker.StateClosed, b.State(extra))
		assert.Zero(t, b.Counts(extra))

		_ = r.Do(to(t, breaker.Key{Target: "host0"}), down.call)
		assert.ErrorIs(t, r.Do(to(t, breaker.Key{Target: "host0"}), ok.call), breaker.ErrOpen, "the keys kept are still guarded")
	})
}

func TestStateAndCountsAreReadablePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, tripAt3)
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
		unknown := breaker.Key{Target: "never.called"}
		assert.Equal(t, breaker.StateClosed, b.State(unknown), "a key never seen is closed")
		assert.Zero(t, b.Counts(unknown), "and has counted nothing")

		dep := &dependency{err: syscall.ECONNRESET}
		_ = r.Do(to(t, payments), dep.call)
		assert.Equal(t, breaker.Counts{Requests: 1, TotalFailures: 1, ConsecutiveFailures: 1}, b.Counts(payments))
		_ = r.Do(to(t, payments), dep.call)
		_ = r.Do(to(t, payments), dep.call)
		assert.Equal(t, breaker.StateOpen, b.State(payments))
		assert.Zero(t, b.Counts(payments), "an open breaker counts nothing")
		time.Sleep(time.Second + ms)
		assert.Equal(t, breaker.StateHalfOpen, b.State(payments), "State moves an open breaker whose timeout passed")
	})
}

func TestTheTransitionToOpenCarriesTheCountsThatTrippedTheDefaultBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := breaker.New(breaker.Config{}) // opens after more than 5 consecutive failures
		require.NoError(t, err)
		var rec recorder
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b), retry.WithObserver(&rec))
		for range 6 {
			_ = r.Do(to(t, payments), (&dependency{err: syscall.ECONNRESET}).call)
		}
		require.Equal(t, breaker.StateOpen, b.State(payments))
		assert.Zero(t, b.Counts(payments), "an open breaker counts nothing")
		changes := rec.of(observe.BreakerChanged)
		require.Len(t, changes, 1)
		assert.Equal(t, breaker.Counts{Requests: 6, TotalFailures: 6, ConsecutiveFailures: 6},
			changes[0].Detail.(breaker.Transition).Counts)
	})
}

// ctxMark tells the test's contexts apart.
type ctxMark struct{}

func TestStateChangesReachTheObserverOfTheCallThatMovedThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, tripAt1)
		var seen []breaker.State
		var rec recorder
		reading := observe.Func(func(ctx context.Context, e observe.Event) {
			if e.Kind == observe.BreakerChanged {
				tr := e.Detail.(breaker.Transition)
				seen = append(seen, b.State(tr.Key)) // the circuit's lock is released: no deadlock
				_ = b.Counts(tr.Key)
			}
		})
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b), retry.WithObserver(&rec), retry.WithObserver(reading))
		ctx := context.WithValue(to(t, payments), ctxMark{}, "the call's")
		_ = r.Do(ctx, (&dependency{err: syscall.ECONNRESET}).call)
		time.Sleep(time.Second + ms)
		require.NoError(t, r.Do(ctx, (&dependency{}).call))

		changes := rec.of(observe.BreakerChanged)
		require.Len(t, changes, 3)
		assert.Equal(t, breaker.Transition{Key: payments, From: breaker.StateClosed, To: breaker.StateOpen,
			Counts: breaker.Counts{Requests: 1, TotalFailures: 1, ConsecutiveFailures: 1}}, changes[0].Detail,
			"the counts that tripped it")
		assert.Equal(t, breaker.Transition{Key: payments, From: breaker.StateOpen, To: breaker.StateHalfOpen}, changes[1].Detail)
		assert.Equal(t, breaker.Transition{Key: payments, From: breaker.StateHalfOpen, To: breaker.StateClosed}, changes[2].Detail)
		for i, e := range rec.events {
			if e.Kind == observe.BreakerChanged {
				assert.Equal(t, "the call's", rec.ctxs[i].Value(ctxMark{}), "reported with the call's context")
			}
		}
		assert.Equal(t, []breaker.State{breaker.StateOpen, breaker.StateHalfOpen, breaker.StateClosed}, seen,
			"an observer reading the state sees the new one")

		var other recorder
		r2 := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b), retry.WithObserver(&other))
		_ = r2.Do(to(t, payments), (&dependency{err: syscall.ECONNRESET}).call)
		assert.Equal(t, []string{"closed→open"}, other.changes(), "a Retrier sharing the breakers reports the changes its calls made")
		assert.Len(t, rec.changes(), 3, "and the other Retrier's observer does not hear of them")
	})
}

func TestTheLoggerReportsABreakerOpeningAtWarn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		b := newBreakers(t, tripAt1)
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b), retry.WithLogger(newLogger(&buf)))
		_ = r.Do(to(t, payments), (&dependency{err: syscall.ECONNRESET}).call)
		assert.Contains(t, buf.String(), `level=WARN msg="retry: circuit breaker changed state" key=payments.example/charge from=closed to=open`)
	})
}

func TestAPanickingOperationCountsAsAFailureAndPanicsAgain(t *testing.T) {
	for _, perAttempt := range []bool{false, true} {
		t.Run("the breaker opens"+placement(perAttempt), func(t *testing.T) {
			c := tripAt1
			c.PerAttempt = perAttempt
			b := newBreakers(t, c)
			r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
			assert.PanicsWithValue(t, "boom", func() {
				_ = r.Do(to(t, payments), func(context.Context) error { panic("boom") })
			})
			assert.Equal(t, breaker.StateOpen, b.State(payments))
			assert.ErrorIs(t, r.Do(to(t, payments), func(context.Context) error { return nil }), breaker.ErrOpen)
		})
	}
}

func TestAnOperationThatExitsItsGoroutineGivesItsPermitBack(t *testing.T) {
	// runtime.Goexit — t.FailNow in a test's operation — must not leave a
	// half-open breaker waiting for its probe forever: the probe counts as
	// a failure, and once the breaker's timeout has passed again, the next
	// probe goes through.
	for _, perAttempt := range []bool{false, true} {
		t.Run("half-open"+placement(perAttempt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tripAt1
				c.PerAttempt = perAttempt
				b := newBreakers(t, c)
				r := opened(t, b)
				time.Sleep(time.Second + ms)
				exited := make(chan struct{})
				go func() {
					defer close(exited)
					_ = r.Do(to(t, payments), func(context.Context) error { runtime.Goexit(); return nil })
				}()
				<-exited
				assert.Equal(t, breaker.StateOpen, b.State(payments), "the probe did not end well")
				time.Sleep(time.Second + ms)
				dep := &dependency{}
				require.NoError(t, r.Do(to(t, payments), dep.call), "the next probe goes through")
				assert.Equal(t, breaker.StateClosed, b.State(payments))
			})
		})
	}
}

func TestValueReportsTheLoopStats(t *testing.T) {
	for _, perAttempt := range []bool{false, true} {
		t.Run("through breakers"+placement(perAttempt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBreakers(t, breaker.Config{PerAttempt: perAttempt})
				r := retrier(t, retry.WithBreakers(b))
				calls := 0
				v, st, err := retry.Value(to(t, payments), r, func(context.Context) (int, error) {
					if calls++; calls < 3 {
						return 0, syscall.ECONNRESET
					}
					return 7, nil
				})
				require.NoError(t, err)
				assert.Equal(t, 7, v)
				assert.Equal(t, retry.Stats{Attempts: 3, Waited: 20 * ms, Elapsed: 20 * ms, Winner: 3}, st)
			})
		})
	}
}

func TestARefusalIsNotRetriedByAnEnclosingLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreakers(t, tripAt1)
		inner := opened(t, b)
		dep := &dependency{}
		for _, outer := range []*retry.Retrier{retrier(t), retrier(t, retry.Outermost())} {
			calls := 0
			err := outer.Do(to(t, payments), func(ctx context.Context) error { calls++; return inner.Do(ctx, dep.call) })
			assert.ErrorIs(t, err, breaker.ErrOpen)
			assert.Equal(t, 1, calls, "the enclosing loop made one attempt")
		}
		assert.Zero(t, dep.count())
	})
}

func TestBreakersAreSafeForConcurrentUse(t *testing.T) {
	c := tripAt3
	c.MaxKeys = 8
	b := newBreakers(t, c)
	r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				k := breaker.Key{Target: "host" + strconv.Itoa((g+i)%16)}
				var err error
				if i%3 == 0 {
					err = syscall.ECONNRESET
				}
				_ = r.Do(to(t, k), func(context.Context) error { return err })
				_, _ = b.State(k), b.Counts(k)
			}
		})
	}
	wg.Wait()
	kept := 0
	for i := range 16 {
		if b.Counts(breaker.Key{Target: "host" + strconv.Itoa(i)}) != (breaker.Counts{}) || b.State(breaker.Key{Target: "host" + strconv.Itoa(i)}) != breaker.StateClosed {
			kept++
		}
	}
	assert.LessOrEqual(t, kept, 8, "at most MaxKeys keys have a breaker")
}

func TestBadConfigIsRefused(t *testing.T) {
	tests := []struct {
		c     breaker.Config
		name  string
		value any
	}{
		{breaker.Config{Interval: -time.Second}, "breaker.Config.Interval", -time.Second},
		{breaker.Config{Timeout: -1}, "breaker.Config.Timeout", time.Duration(-1)},
		{breaker.Config{MaxKeys: -1}, "breaker.Config.MaxKeys", -1},
	}
	for _, tt := range tests {
		t.Run("a negative "+tt.name+" is an *InvalidError naming it", func(t *testing.T) {
			b, err := breaker.New(tt.c)
			assert.Nil(t, b)
			var inv *retry.InvalidError
			require.ErrorAs(t, err, &inv)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.Equal(t, tt.name, inv.Name)
			assert.Equal(t, tt.value, inv.Value)
		})
	}
	_, err := breaker.New(breaker.Config{Timeout: -1})
	assert.EqualError(t, err, "breaker.Config.Timeout = -1ns: must not be negative")
}

func TestNewCircuitBuildsEachKeysCircuit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []gobreaker.Settings
		b := newBreakers(t, breaker.Config{MaxRequests: 3, Timeout: time.Minute, NewCircuit: recording(&got)})
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
		require.NoError(t, r.Do(to(t, payments), (&dependency{}).call))
		require.NoError(t, r.Do(to(t, payments), (&dependency{}).call))
		require.NoError(t, r.Do(t.Context(), (&dependency{}).call))
		require.Len(t, got, 2, "one circuit per key, made when the key is first seen")
		assert.Equal(t, "payments.example/charge", got[0].Name, "named by the key")
		assert.Equal(t, uint32(3), got[0].MaxRequests)
		assert.Equal(t, time.Minute, got[0].Timeout)
		assert.True(t, got[0].IsExcluded(breaker.Excluded))
		assert.False(t, got[0].IsExcluded(syscall.ECONNRESET))
		assert.Empty(t, got[1].Name, "the zero Key's name")
	})
}

func TestAFailingNewCircuitRefusesTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tries := 0
		b := newBreakers(t, breaker.Config{NewCircuit: func(s gobreaker.Settings) (breaker.Circuit, error) {
			tries++
			return nil, errors.New("store down")
		}})
		r := retrier(t, retry.WithBreakers(b))
		dep := &dependency{}
		for range 2 {
			err := r.Do(to(t, payments), dep.call)
			assert.ErrorIs(t, err, retry.ErrBreakerOpen)
			assert.ErrorContains(t, err, "breaker payments.example/charge: store down")
		}
		assert.Zero(t, dep.count(), "nothing was sent")
		assert.Equal(t, 2, tries, "each call asks again")
		assert.Equal(t, breaker.StateClosed, b.State(payments))

		b = newBreakers(t, breaker.Config{NewCircuit: func(gobreaker.Settings) (breaker.Circuit, error) { return nil, nil }})
		err := retrier(t, retry.WithBreakers(b)).Do(to(t, payments), dep.call)
		assert.ErrorIs(t, err, retry.ErrInvalid)
		assert.ErrorContains(t, err, "breaker.Config.NewCircuit(payments.example/charge): returned a nil Circuit")
		assert.Zero(t, dep.count())
	})
}

func TestNilAndZeroValuesDoNotPanic(t *testing.T) {
	var nilB *breaker.Breakers
	var nilCD *breaker.Cooldowns
	var nilCtx context.Context
	zeroB, zeroCD := new(breaker.Breakers), new(breaker.Cooldowns)
	busy := unavailable(30)
	d := classify.Default(busy)
	for name, b := range map[string]*breaker.Breakers{"nil": nilB, "zero": zeroB} {
		t.Run("a "+name+" Breakers lets everything through and knows no key", func(t *testing.T) {
			require.NotPanics(t, func() {
				p, err := b.Allow(t.Context(), payments, nil)
				assert.NoError(t, err)
				p.Done(t.Context(), syscall.ECONNRESET)
				assert.Equal(t, breaker.StateClosed, b.State(payments))
				assert.Zero(t, b.Counts(payments))
				assert.False(t, b.PerAttempt())
			})
		})
	}
	for name, cd := range map[string]*breaker.Cooldowns{"nil": nilCD, "zero": zeroCD} {
		t.Run("a "+name+" Cooldowns has nothing cooling down", func(t *testing.T) {
			require.NotPanics(t, func() {
				assert.False(t, cd.Observe(t.Context(), payments, busy, d, nil))
				assert.NoError(t, cd.Check(payments))
				assert.Zero(t, cd.Len())
			})
		})
	}
	t.Run("the zero Permit reports nothing", func(t *testing.T) {
		require.NotPanics(t, func() { breaker.Permit{}.Done(nilCtx, nil) })
	})
	t.Run("a nil context has no key", func(t *testing.T) {
		assert.Nil(t, breaker.WithKey(nilCtx, payments))
		k, ok := breaker.KeyOf(nilCtx)
		assert.False(t, ok)
		assert.Zero(t, k)
	})
	t.Run("a Retrier with breakers or cooldowns reads the call key", func(t *testing.T) {
		assert.True(t, retrier(t, retry.WithBreakers(newBreakers(t, breaker.Config{}))).Keyed())
		assert.True(t, retrier(t, retry.WithCooldowns(newCooldowns(t, breaker.CooldownConfig{}))).Keyed())
		assert.False(t, retrier(t).Keyed())
	})
	t.Run("a Retrier refuses nil breakers and cooldowns", func(t *testing.T) {
		_, err := retry.New(retry.WithBreakers(nil))
		assert.ErrorIs(t, err, retry.ErrInvalid)
		_, err = retry.New(retry.WithCooldowns(nil))
		assert.ErrorIs(t, err, retry.ErrInvalid)
	})
}

func TestKeyOfReadsWhatWithKeySet(t *testing.T) {
	k, ok := breaker.KeyOf(t.Context())
	assert.False(t, ok)
	assert.Zero(t, k)
	k, ok = breaker.KeyOf(breaker.WithKey(t.Context(), payments))
	assert.True(t, ok)
	assert.Equal(t, payments, k)
	assert.Equal(t, "payments.example/charge", payments.String())
	assert.Equal(t, "payments.example", breaker.Key{Target: "payments.example"}.String(), "no operation: the target alone")
}

func TestStatesHaveStableLabels(t *testing.T) {
	for s, want := range map[breaker.State]string{
		breaker.StateClosed: "closed", breaker.StateHalfOpen: "half-open", breaker.StateOpen: "open", breaker.State(9): "state(9)",
	} {
		assert.Equal(t, want, s.String())
	}
}

// recording is a NewCircuit that keeps the settings it receives and builds
// gobreaker's two-step breaker from them.
func recording(got *[]gobreaker.Settings) func(gobreaker.Settings) (breaker.Circuit, error) {
	return func(s gobreaker.Settings) (breaker.Circuit, error) {
		*got = append(*got, s)
		return twoStep{gobreaker.NewTwoStepCircuitBreaker[any](s)}, nil
	}
}

// twoStep is a Circuit on gobreaker's two-step breaker, as a user writes one.
type twoStep struct {
	cb *gobreaker.TwoStepCircuitBreaker[any]
}

func (c twoStep) Allow() (func(error), error) { return c.cb.Allow() }
func (c twoStep) State() breaker.State        { return breaker.StateOf(c.cb.State()) }
func (c twoStep) Counts() breaker.Counts      { return breaker.CountsOf(c.cb.Counts()) }

func TestACircuitOfItsOwnReportsItsChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []gobreaker.Settings
		var rec recorder
		c := tripAt1
		c.NewCircuit = recording(&got)
		b := newBreakers(t, c)
		r := opened(t, b, retry.WithObserver(&rec))
		assert.Equal(t, []string{"closed→open"}, rec.changes(), "through the OnStateChange of the settings it received")
		assert.ErrorIs(t, r.Do(to(t, payments), (&dependency{}).call), breaker.ErrOpen, "its refusal, gobreaker's sentinel, is ErrOpen")
	})
}

func TestStateOfAndCountsOfConvertGobreakers(t *testing.T) {
	assert.Equal(t, breaker.StateClosed, breaker.StateOf(gobreaker.StateClosed))
	assert.Equal(t, breaker.StateHalfOpen, breaker.StateOf(gobreaker.StateHalfOpen))
	assert.Equal(t, breaker.StateOpen, breaker.StateOf(gobreaker.StateOpen))
	got := breaker.CountsOf(gobreaker.Counts{Requests: 5, TotalSuccesses: 1, TotalFailures: 2, TotalExclusions: 2,
		ConsecutiveSuccesses: 0, ConsecutiveFailures: 2})
	assert.Equal(t, breaker.Counts{Requests: 3, TotalSuccesses: 1, TotalFailures: 2, ConsecutiveFailures: 2}, got,
		"calls not counted are not requests")
}

func TestCallsToOtherKeysDoNotWaitForANewKeysCircuit(t *testing.T) {
	// NewCircuit may make a round trip (to Redis, say): the calls to the
	// keys already made go on meanwhile.
	made := make(chan struct{})
	release := make(chan struct{})
	b := newBreakers(t, breaker.Config{NewCircuit: func(s gobreaker.Settings) (breaker.Circuit, error) {
		if s.Name == "slow.example" {
			close(made)
			<-release
		}
		return twoStep{gobreaker.NewTwoStepCircuitBreaker[any](s)}, nil
	}})
	r := retrier(t, retry.WithMaxAttempts(1), retry.WithBreakers(b))
	require.NoError(t, r.Do(to(t, payments), (&dependency{}).call))
	slow := make(chan error)
	go func() { slow <- r.Do(to(t, breaker.Key{Target: "slow.example"}), (&dependency{}).call) }()
	<-made
	done := make(chan error, 1)
	go func() { done <- r.Do(to(t, payments), (&dependency{}).call) }()
	select {
	case err := <-done:
		assert.NoError(t, err)
		close(release)
	case <-time.After(10 * time.Second):
		t.Error("a call to a known key waited for another key's circuit")
		close(release)
		<-done
	}
	assert.NoError(t, <-slow)
}
