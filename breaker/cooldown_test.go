package breaker_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateway is an HTTP client to a fake LLM gateway: it answers 503 with
// Retry-After: 30 for the model "down" and 200 for the others, and counts
// the requests it gets. No network: a RoundTripper answers.
type gateway struct{ hits atomic.Int64 }

func (g *gateway) RoundTrip(req *http.Request) (*http.Response, error) {
	g.hits.Add(1)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}
	if strings.HasSuffix(req.URL.Path, "/down") {
		resp.StatusCode = http.StatusServiceUnavailable
		resp.Header.Set("Retry-After", "30")
	}
	return resp, nil
}

// complete asks the gateway's model for a completion.
func (g *gateway) complete(model string) func(context.Context) error {
	client := &http.Client{Transport: g}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://gateway.example/v1/"+model, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return classify.ResponseError(resp)
	}
}

func model(name string) breaker.Key { return breaker.Key{Target: "gateway.example", Operation: name} }

func TestA503WithRetryAfterCoolsTheKeyDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gateway
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{})
		r := retrier(t, retry.WithMaxDelay(10*time.Second), retry.WithCooldowns(cd), retry.WithObserver(&rec))
		down := model("down")

		err := r.Do(to(t, down), g.complete("down"))
		var status *classify.StatusError
		require.ErrorAs(t, err, &status, "the first call reaches the server")
		assert.ErrorIs(t, err, retry.ErrWaitTooLong, "which asked for longer than the call could wait")
		assert.Equal(t, int64(1), g.hits.Load())
		started := rec.of(observe.CooldownStarted)
		require.Len(t, started, 1)
		assert.Equal(t, down, started[0].Detail)
		assert.Equal(t, 30*time.Second, started[0].Delay)
		assert.ErrorAs(t, started[0].Err, &status)
		assert.Equal(t, classify.ReasonUnavailable, started[0].Decision.Reason)
		assert.Equal(t, 1, cd.Len())

		time.Sleep(4 * time.Second)
		st, err := r.Run(to(t, down), g.complete("down"))
		assert.Equal(t, int64(1), g.hits.Load(), "the second call failed locally: no request")
		assert.ErrorIs(t, err, retry.ErrWaitTooLong, "26s left is more than its MaxDelay")
		assert.ErrorIs(t, err, breaker.ErrCooldown)
		assert.False(t, errors.As(err, &status), "a local failure is never mistaken for the server's answer")
		rerr := retryErr(t, err)
		assert.Equal(t, policy.StopWaitTooLong, rerr.Stop)
		assert.Zero(t, rerr.Attempts)
		assert.Zero(t, st.Elapsed, "it stopped at once")
		assert.Equal(t, 26*time.Second, rerr.RetryAfter, "the time left")
		var cerr *breaker.CooldownError
		require.ErrorAs(t, rerr.Last, &cerr)
		assert.Equal(t, down, cerr.Key)
		assert.Equal(t, 26*time.Second, cerr.Left)
		assert.Equal(t, time.Now().Add(26*time.Second), cerr.Until)
		assert.Contains(t, err.Error(), "(retry after 26s) before the first attempt: breaker: gateway.example/down is cooling down until")
		assert.Contains(t, err.Error(), "(26s left)")
		assert.Contains(t, err.Error(), "failed locally, no request sent")

		require.NoError(t, r.Do(to(t, model("up")), g.complete("up")), "another model on the same host is unaffected")
		assert.Equal(t, int64(2), g.hits.Load())
		assert.Len(t, rec.of(observe.CooldownStarted), 1, "one cooldown started")
	})
}

func TestACallWaitsOutItsKeysCooldownBeforeSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{})
		other := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd))
		r := retrier(t, retry.WithCooldowns(cd), retry.WithObserver(&rec))
		// Another caller's 503 put the key in cooldown for 5s, 2s ago.
		_ = other.Do(to(t, payments), (&dependency{err: unavailable(5)}).call)
		time.Sleep(2 * time.Second)

		dep := &dependency{}
		var sent []time.Time
		start := time.Now()
		st, err := r.Run(to(t, payments), func(ctx context.Context) error { sent = append(sent, time.Now()); return dep.call(ctx) })
		require.NoError(t, err)
		assert.Equal(t, 1, dep.count(), "one request, once the cooldown ended")
		assert.Equal(t, []time.Time{start.Add(3 * time.Second)}, sent, "nothing was sent meanwhile")
		assert.Equal(t, retry.Stats{Attempts: 1, Elapsed: 3 * time.Second, Winner: 1}, st, "a wait before the first attempt counts in Elapsed")
		waited := rec.of(observe.CooldownWaited)
		require.Len(t, waited, 1)
		assert.Equal(t, 3*time.Second, waited[0].Delay)
		assert.Equal(t, 1, waited[0].Attempt)
		assert.NoError(t, cd.Check(payments), "the cooldown is over")
		assert.Zero(t, cd.Len())
	})
}

func TestARetryWaitsOutACooldownAnotherCallStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{})
		other := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd))
		r := retrier(t, retry.WithCooldowns(cd), retry.WithObserver(&rec))
		calls := 0
		st, err := r.Run(to(t, payments), func(ctx context.Context) error {
			if calls++; calls == 1 {
				// Meanwhile, another call to the key hears: come back in 5s.
				_ = other.Do(to(t, payments), (&dependency{err: unavailable(5)}).call)
				return syscall.ECONNRESET
			}
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 2, calls)
		assert.Equal(t, retry.Stats{Attempts: 2, Waited: 5 * time.Second, Elapsed: 5 * time.Second, Winner: 2}, st,
			"the backoff, then the rest of the cooldown")
		waited := rec.of(observe.CooldownWaited)
		require.Len(t, waited, 1)
		assert.Equal(t, 5*time.Second-10*ms, waited[0].Delay)
		assert.Equal(t, 2, waited[0].Attempt)
	})
}

func TestARetryAfterA503WaitsTheRetryAfterOnce(t *testing.T) {
	// The call's own 503 starts the key's cooldown and schedules its retry
	// after the same Retry-After: the retry does not wait for the cooldown
	// again.
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{})
		r := retrier(t, retry.WithCooldowns(cd), retry.WithObserver(&rec), retry.WithMaxDelay(5*time.Second))
		dep := &dependency{err: unavailable(5)}
		st, err := r.Run(to(t, payments), func(ctx context.Context) error {
			err := dep.call(ctx)
			dep.set(nil)
			return err
		})
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 2, Waited: 5 * time.Second, Elapsed: 5 * time.Second, Winner: 2}, st)
		assert.Len(t, rec.of(observe.CooldownStarted), 1)
		assert.Empty(t, rec.of(observe.CooldownWaited), "no second wait")
	})
}

func TestACooldownLongerThanTheCallCanWaitStopsAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		opts     []retry.Option
		deadline time.Duration
		stop     policy.Stop
		reason   error
	}{
		{"longer than MaxDelay: ErrWaitTooLong", []retry.Option{retry.WithMaxDelay(10 * time.Second)}, 0, policy.StopWaitTooLong, retry.ErrWaitTooLong},
		{"past MaxElapsed: ErrElapsed", []retry.Option{retry.WithMaxElapsed(20 * time.Second)}, 0, policy.StopElapsed, retry.ErrElapsed},
		{"past the context's deadline: ErrDeadline", nil, 20 * time.Second, policy.StopDeadline, retry.ErrDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cd := newCooldowns(t, breaker.CooldownConfig{})
				_ = retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd)).Do(to(t, payments), (&dependency{err: unavailable(30)}).call)
				ctx := to(t, payments)
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				dep := &dependency{}
				st, err := retrier(t, append(tt.opts, retry.WithCooldowns(cd))...).Run(ctx, dep.call)
				assert.Zero(t, dep.count(), "nothing was sent")
				assert.ErrorIs(t, err, tt.reason)
				assert.ErrorIs(t, err, breaker.ErrCooldown)
				rerr := retryErr(t, err)
				assert.Equal(t, tt.stop, rerr.Stop)
				assert.Equal(t, 30*time.Second, rerr.RetryAfter, "the cooldown's time left")
				var cerr *breaker.CooldownError
				require.ErrorAs(t, rerr.Last, &cerr)
				assert.Equal(t, 30*time.Second, cerr.Left)
				assert.Zero(t, st.Elapsed, "at once")
			})
		})
	}
}

func TestAGRPCUnavailableWithRetryAfterCoolsTheKeyDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{})
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd))
		method := breaker.Key{Target: "dns:///inference:443", Operation: "/llm.v1.Completions/Complete"}
		pushback := classify.Mark(errors.New("rpc error: code = Unavailable"),
			classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonGRPCUnavailable, RetryAfter: 20 * time.Second})
		_ = r.Do(to(t, method), (&dependency{err: pushback}).call)
		var cerr *breaker.CooldownError
		require.ErrorAs(t, cd.Check(method), &cerr)
		assert.Equal(t, 20*time.Second, cerr.Left)
	})
}

func TestOnlyUnavailableWithARetryAfterStartsACooldown(t *testing.T) {
	grpc := func(reason string, after time.Duration) error {
		return classify.Mark(errors.New("rpc error"), classify.Decision{Verdict: classify.Retry, Reason: reason, RetryAfter: after})
	}
	tests := []struct {
		name string
		err  error
		cool bool
	}{
		{"a 503 with Retry-After", unavailable(10), true},
		{"a 503 whose Retry-After the server said with classify.Said", classify.Said(unavailable(-1), classify.Decision{RetryAfter: 10 * time.Second}), true},
		{"a gRPC UNAVAILABLE with a pushback", grpc(classify.ReasonGRPCUnavailable, 10*time.Second), true},
		{"a 503 without Retry-After", unavailable(-1), false},
		{"a 503 with Retry-After: 0", unavailable(0), false},
		{"a 429 with Retry-After", &classify.StatusError{Code: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"10"}}}, false},
		{"a gRPC UNAVAILABLE without a pushback", grpc(classify.ReasonGRPCUnavailable, 0), false},
		{"a gRPC RESOURCE_EXHAUSTED with a pushback", grpc(classify.ReasonGRPCResourceExhausted, 10*time.Second), false},
		{"a connection reset", syscall.ECONNRESET, false},
		{"a 400", &classify.StatusError{Code: http.StatusBadRequest}, false},
		{"a success", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name+" cools down: "+strconv.FormatBool(tt.cool), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rec recorder
				cd := newCooldowns(t, breaker.CooldownConfig{})
				r := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd), retry.WithObserver(&rec))
				_ = r.Do(to(t, payments), (&dependency{err: tt.err}).call)
				assert.Equal(t, tt.cool, cd.Check(payments) != nil)
				assert.Len(t, rec.of(observe.CooldownStarted), map[bool]int{true: 1}[tt.cool])
			})
		})
	}
}

func TestACallTheCallerCancelledStartsNoCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{})
		r := retrier(t, retry.WithCooldowns(cd))
		ctx, cancel := context.WithCancel(to(t, payments))
		_ = r.Do(ctx, func(context.Context) error { cancel(); return unavailable(10) })
		assert.Zero(t, cd.Len())
	})
}

func TestCooldownsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{})
		busy := unavailable(10)
		require.True(t, cd.Observe(t.Context(), payments, busy, classify.Default(busy), nil))
		time.Sleep(9 * time.Second)
		assert.Error(t, cd.Check(payments))
		time.Sleep(time.Second)
		assert.NoError(t, cd.Check(payments), "free again when the time has passed")
		assert.Zero(t, cd.Len(), "the expired entry was dropped")
	})
}

func TestMaxDelayCapsACooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{MaxDelay: time.Minute})
		r := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd), retry.WithObserver(&rec))
		_ = r.Do(to(t, payments), (&dependency{err: unavailable(86400)}).call)
		var cerr *breaker.CooldownError
		require.ErrorAs(t, cd.Check(payments), &cerr)
		assert.Equal(t, time.Now().Add(time.Minute), cerr.Until, "a day's Retry-After is held for MaxDelay")
		assert.Equal(t, time.Minute, rec.of(observe.CooldownStarted)[0].Delay)

		dflt := newCooldowns(t, breaker.CooldownConfig{})
		busy := unavailable(86400)
		dflt.Observe(t.Context(), payments, busy, classify.Default(busy), nil)
		require.ErrorAs(t, dflt.Check(payments), &cerr)
		assert.Equal(t, time.Hour, cerr.Left, "an hour by default")
	})
}

// cool starts k's cooldown in cd for d.
func cool(t *testing.T, cd *breaker.Cooldowns, k breaker.Key, d time.Duration) {
	t.Helper()
	err := classify.WithRetryAfter(unavailable(-1), d)
	require.True(t, cd.Observe(t.Context(), k, err, classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: d}, nil))
}

func left(cd *breaker.Cooldowns, k breaker.Key) time.Duration {
	var cerr *breaker.CooldownError
	if errors.As(cd.Check(k), &cerr) {
		return cerr.Left
	}
	return 0
}

func TestALaterCooldownExtendsAKeysAnEarlierOneDoesNotShortenIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{})
		cool(t, cd, payments, 10*time.Second)
		cool(t, cd, payments, 30*time.Second)
		assert.Equal(t, 30*time.Second, left(cd, payments))
		cool(t, cd, payments, 5*time.Second)
		assert.Equal(t, 30*time.Second, left(cd, payments))
		assert.Equal(t, 1, cd.Len())
	})
}

func TestCooldownsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{MaxKeys: 3})
		key := func(i int) breaker.Key { return breaker.Key{Target: "host" + strconv.Itoa(i)} }
		cool(t, cd, key(0), time.Second)
		cool(t, cd, key(1), 100*time.Second)
		cool(t, cd, key(2), 50*time.Second)
		time.Sleep(2 * time.Second) // key 0's cooldown is over, not yet dropped
		assert.Equal(t, 3, cd.Len())

		cool(t, cd, key(3), 80*time.Second)
		assert.Equal(t, 3, cd.Len())
		assert.Equal(t, 98*time.Second, left(cd, key(1)), "an expired key made room")
		assert.Equal(t, 48*time.Second, left(cd, key(2)))

		cool(t, cd, key(4), 200*time.Second)
		assert.Equal(t, 3, cd.Len())
		assert.Zero(t, left(cd, key(2)), "then the key whose cooldown ends first")
		for _, i := range []int{1, 3, 4} {
			assert.NotZero(t, left(cd, key(i)), "key %d kept", i)
		}
	})
}

func TestCooldownsAreSafeForConcurrentUse(t *testing.T) {
	cd := newCooldowns(t, breaker.CooldownConfig{MaxKeys: 50})
	r := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd), retry.WithMaxDelay(time.Nanosecond)) // waits for none
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := breaker.Key{Target: strconv.Itoa(g*1000 + i)}
				cool(t, cd, k, time.Duration(i)*time.Millisecond+time.Millisecond)
				_ = cd.Check(breaker.Key{Target: strconv.Itoa(g*1000 + i/2)})
				_ = cd.Len()
				_ = r.Do(to(t, k), func(context.Context) error { return nil })
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, cd.Len(), 50)
}

func TestAHedgeToACoolingKeyIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cd := newCooldowns(t, breaker.CooldownConfig{})
		h := hedger(t, retrier(t, retry.WithCooldowns(cd), retry.WithObserver(&rec)))
		other := retrier(t, retry.WithMaxAttempts(1), retry.WithCooldowns(cd))
		var n atomic.Int32
		st, err := h.Run(to(t, payments), func(ctx context.Context) error {
			if n.Add(1) == 1 {
				// While the first attempt runs, another call hears: come back in 30s.
				_ = other.Do(to(t, payments), (&dependency{err: unavailable(30)}).call)
				time.Sleep(50 * ms)
			}
			return nil
		})
		require.NoError(t, err, "the attempt in flight still wins")
		assert.Equal(t, int32(1), n.Load(), "the hedge was not sent")
		assert.Equal(t, 1, st.Attempts)
		skipped := rec.of(observe.HedgeSkipped)
		require.Len(t, skipped, 1)
		assert.Equal(t, policy.StopWaitTooLong, skipped[0].Stop)
	})
}

func TestCooldownsAndBreakersTogether(t *testing.T) {
	// A call a cooldown stops sends nothing: the breaker around it does not
	// count it, and its half-open probe is free for the next call.
	synctest.Test(t, func(t *testing.T) {
		cd := newCooldowns(t, breaker.CooldownConfig{})
		b := newBreakers(t, tripAt1)
		r := opened(t, b, retry.WithCooldowns(cd), retry.WithMaxDelay(time.Second))
		time.Sleep(time.Second + ms)
		cool(t, cd, payments, 10*time.Second)
		dep := &dependency{}
		assert.ErrorIs(t, r.Do(to(t, payments), dep.call), breaker.ErrCooldown)
		assert.Equal(t, breaker.StateHalfOpen, b.State(payments))
		time.Sleep(10 * time.Second)
		require.NoError(t, r.Do(to(t, payments), dep.call), "the probe")
		assert.Equal(t, breaker.StateClosed, b.State(payments))
		assert.Equal(t, 1, dep.count())
	})
}

func TestBadCooldownConfigIsRefused(t *testing.T) {
	tests := []struct {
		c     breaker.CooldownConfig
		name  string
		value any
	}{
		{breaker.CooldownConfig{MaxKeys: -1}, "breaker.CooldownConfig.MaxKeys", -1},
		{breaker.CooldownConfig{MaxDelay: -time.Second}, "breaker.CooldownConfig.MaxDelay", -time.Second},
	}
	for _, tt := range tests {
		t.Run("a negative "+tt.name+" is an *InvalidError naming it", func(t *testing.T) {
			cd, err := breaker.NewCooldowns(tt.c)
			assert.Nil(t, cd)
			var inv *retry.InvalidError
			require.ErrorAs(t, err, &inv)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.Equal(t, tt.name, inv.Name)
			assert.Equal(t, tt.value, inv.Value)
		})
	}
}
