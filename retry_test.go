package retry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	cbackoff "github.com/cenkalti/backoff/v4"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDo(t *testing.T) {
	tests := []struct {
		name       string
		opts       []retry.Option
		errs       []error
		wantCalls  int
		wantGaps   []time.Duration
		wantReason error // nil: success
	}{
		{"a first success makes one call", nil, nil, 1, nil, nil},
		{"two transient failures are retried with growing waits", nil, []error{errReset, httpErr(503, -1)}, 3, []time.Duration{100 * ms, 200 * ms}, nil},
		{"attempts run out after MaxAttempts calls", nil, []error{errReset, errReset, errReset, errReset}, 3, []time.Duration{100 * ms, 200 * ms}, retry.ErrExhausted},
		{"MaxAttempts counts the first call", []retry.Option{retry.WithMaxAttempts(5)}, []error{errReset, errReset, errReset, errReset, errReset}, 5, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}, retry.ErrExhausted},
		{"one attempt never retries", []retry.Option{retry.WithMaxAttempts(1)}, []error{errReset}, 1, nil, retry.ErrExhausted},
		{"a 400 is never retried", nil, []error{httpErr(400, -1)}, 1, nil, retry.ErrPermanent},
		{"a 401 is never retried", nil, []error{httpErr(401, -1)}, 1, nil, retry.ErrPermanent},
		{"a 403 is never retried", nil, []error{httpErr(403, -1)}, 1, nil, retry.ErrPermanent},
		{"a permanent marker is never retried", nil, []error{classify.Permanent(errReset)}, 1, nil, retry.ErrPermanent},
		{"a 500 is retried once whatever MaxAttempts says", []retry.Option{retry.WithMaxAttempts(10)}, []error{httpErr(500, -1), httpErr(500, -1), httpErr(500, -1)}, 2, []time.Duration{100 * ms}, retry.ErrClassLimit},
		{"a second 500 in the call stops even after another failure", []retry.Option{retry.WithMaxAttempts(10)}, []error{httpErr(500, -1), errReset, httpErr(500, -1)}, 3, []time.Duration{100 * ms, 200 * ms}, retry.ErrClassLimit},
		{"a 503 between 500s does not use the 500's retry", []retry.Option{retry.WithMaxAttempts(10)}, []error{httpErr(500, -1), httpErr(503, -1), httpErr(503, -1)}, 4, []time.Duration{100 * ms, 200 * ms, 400 * ms}, nil},
		{"an unrecognised error is retried by default", nil, []error{errUnknown}, 2, []time.Duration{100 * ms}, nil},
		{"an unrecognised error stops in strict mode", []retry.Option{retry.Strict()}, []error{errUnknown}, 1, nil, retry.ErrPermanent},
		{"strict mode still retries known transient failures", []retry.Option{retry.Strict()}, []error{errReset}, 2, []time.Duration{100 * ms}, nil},
		{"a caller's classifier runs first", []retry.Option{retry.WithClassifier(func(err error) classify.Decision {
			if errors.Is(err, errUnknown) {
				return classify.Decision{Verdict: classify.Stop, Reason: "mine"}
			}
			return classify.Decision{}
		})}, []error{errReset, errUnknown}, 2, []time.Duration{100 * ms}, retry.ErrPermanent},
		{"Retry-After replaces the backoff", nil, []error{httpErr(429, 3)}, 2, []time.Duration{3 * sec}, nil},
		{"Retry-After on a 503 is honoured", nil, []error{httpErr(503, 2)}, 2, []time.Duration{2 * sec}, nil},
		{"a Retry-After longer than MaxDelay is returned, not slept", nil, []error{httpErr(429, 90)}, 1, nil, retry.ErrWaitTooLong},
		{"MaxDelay clamps the schedule", []retry.Option{retry.WithMaxDelay(150 * ms), retry.WithMaxAttempts(4)}, []error{errReset, errReset, errReset}, 4, []time.Duration{100 * ms, 150 * ms, 150 * ms}, nil},
		{"MaxElapsed stops before a wait that would pass it", []retry.Option{retry.WithMaxElapsed(250 * ms), retry.WithMaxAttempts(10)}, []error{errReset, errReset, errReset}, 2, []time.Duration{100 * ms}, retry.ErrElapsed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := failing(tt.errs...)
				err := exact(t, tt.opts...).Do(t.Context(), s.op)
				assert.Equal(t, tt.wantCalls, s.calls, "calls")
				// Retry-After waits carry a small positive jitter: compare to the second.
				gaps := s.gaps()
				for i := range gaps {
					if tt.wantGaps != nil && i < len(tt.wantGaps) && tt.wantGaps[i] >= sec {
						assert.GreaterOrEqual(t, gaps[i], tt.wantGaps[i], "never earlier than the server asked")
						assert.Less(t, gaps[i], tt.wantGaps[i]+tt.wantGaps[i]/10+1, "a small jitter only")
						gaps[i] = tt.wantGaps[i]
					}
				}
				assert.Equal(t, tt.wantGaps, gaps, "waits between calls")
				if tt.wantReason == nil {
					assert.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, tt.wantReason)
				assert.ErrorIs(t, err, tt.errs[min(s.calls, len(tt.errs))-1], "unwraps to the last attempt's error")
			})
		})
	}
}

func TestErrorCarriesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second, third := errors.New("one"), errors.New("two"), errors.New("three")
		s := failing(first, second, third)
		err := exact(t).Do(t.Context(), s.op)

		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		assert.Equal(t, 3, rerr.Attempts)
		assert.Equal(t, 300*ms, rerr.Waited)
		assert.Equal(t, 300*ms, rerr.Elapsed)
		assert.Same(t, third, rerr.Last)
		assert.Equal(t, retry.ErrExhausted, rerr.Reason)
		assert.Equal(t, classify.ReasonUnclassified, rerr.Decision.Reason)
		require.Len(t, rerr.Failures, 3)
		start := rerr.Failures[0].At
		for i, want := range []error{first, second, third} {
			assert.Equal(t, i+1, rerr.Failures[i].Attempt)
			assert.Same(t, want, rerr.Failures[i].Err)
		}
		assert.Equal(t, []time.Duration{0, 100 * ms, 300 * ms}, []time.Duration{0, rerr.Failures[1].At.Sub(start), rerr.Failures[2].At.Sub(start)}, "when each failure happened")
		assert.Equal(t, []time.Duration{100 * ms, 200 * ms, 0}, []time.Duration{rerr.Failures[0].Delay, rerr.Failures[1].Delay, rerr.Failures[2].Delay})
		assert.Equal(t, "retry: attempts exhausted after 3 attempt(s) in 300ms: three", err.Error())
		assert.NotErrorIs(t, err, second, "errors.Is sees the last attempt; Failures keeps the others")
	})
}

func TestFailuresBeyondTheInlineRecordAreKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := always(errReset)
		err := exact(t, retry.WithMaxAttempts(20), retry.WithBackoff(backoff.Constant(ms))).Do(t.Context(), s.op)
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		require.Len(t, rerr.Failures, 20)
		for i, f := range rerr.Failures {
			assert.Equal(t, i+1, f.Attempt)
		}
	})
}

func TestErrorMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := failing(httpErr(404, -1))
		err := exact(t).Do(t.Context(), s.op)
		assert.Equal(t, "retry: not retryable (http 4xx) after 1 attempt(s) in 0s: http 404 Not Found", err.Error())

		s = failing(httpErr(429, 120))
		err = exact(t).Do(t.Context(), s.op)
		assert.Equal(t, "retry: server asked to wait longer than the maximum delay (retry after 2m0s) after 1 attempt(s) in 0s: http 429 Too Many Requests", err.Error())
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		assert.Equal(t, 2*time.Minute, rerr.RetryAfter, "the caller can schedule the work itself")

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err = exact(t).Do(ctx, s.op)
		assert.Equal(t, "retry: context canceled before the first attempt", err.Error())
	})
}

func TestContext(t *testing.T) {
	t.Run("a canceled context makes no attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		s := failing()
		err := exact(t).Do(ctx, s.op)
		assert.Zero(t, s.calls)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("cancellation during a wait stops at once with the cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cause := errors.New("shutting down")
			ctx, cancel := context.WithCancelCause(t.Context())
			time.AfterFunc(150*ms, func() { cancel(cause) })
			s := always(errReset)
			start := time.Now()
			err := exact(t, retry.WithMaxAttempts(10)).Do(ctx, s.op)
			assert.Equal(t, 150*ms, time.Since(start), "stopped the moment the context ended")
			assert.Equal(t, 2, s.calls)
			assert.ErrorIs(t, err, cause)
			assert.ErrorIs(t, err, errReset)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, 150*ms, rerr.Waited, "the interrupted wait counts as far as it went")
		})
	})
	t.Run("a wait that would outlast the deadline is not started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 250*ms)
			defer cancel()
			s := always(errReset)
			start := time.Now()
			err := exact(t, retry.WithMaxAttempts(10)).Do(ctx, s.op)
			assert.Equal(t, 100*ms, time.Since(start), "returned after the first wait, not at the deadline")
			assert.Equal(t, 2, s.calls)
			assert.ErrorIs(t, err, retry.ErrDeadline)
			assert.ErrorIs(t, err, errReset)
		})
	})
	t.Run("a Retry-After past the deadline returns at once with the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*sec)
			defer cancel()
			s := always(httpErr(503, 10))
			err := exact(t).Do(ctx, s.op)
			assert.Equal(t, 1, s.calls)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, retry.ErrDeadline, rerr.Reason)
			assert.Equal(t, 10*sec, rerr.RetryAfter)
		})
	})
	t.Run("the caller's expired deadline is not an attempt timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), sec)
			defer cancel()
			calls := 0
			err := exact(t, retry.Idempotent()).Do(ctx, func(ctx context.Context) error {
				calls++
				<-ctx.Done()
				return ctx.Err()
			})
			assert.Equal(t, 1, calls, "DeadlineExceeded reports Timeout() == true, but it is the caller's")
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, context.DeadlineExceeded, rerr.Reason)
			assert.NotErrorIs(t, err, retry.ErrNotIdempotent)
		})
	})
	t.Run("without an attempt timeout the op gets the caller's context", func(t *testing.T) {
		type k struct{}
		ctx := context.WithValue(t.Context(), k{}, "v")
		err := exact(t).Do(ctx, func(got context.Context) error {
			assert.Equal(t, ctx, got)
			return nil
		})
		require.NoError(t, err)
	})
	t.Run("each attempt gets its own deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var left []time.Duration
			s := failing(errReset)
			err := exact(t, retry.WithAttemptTimeout(2*sec)).Do(t.Context(), func(ctx context.Context) error {
				d, ok := ctx.Deadline()
				require.True(t, ok)
				left = append(left, time.Until(d))
				return s.op(ctx)
			})
			require.NoError(t, err)
			assert.Equal(t, []time.Duration{2 * sec, 2 * sec}, left)
		})
	})
}

func TestIdempotencyGate(t *testing.T) {
	hang := func(calls *int) func(context.Context) error {
		return func(ctx context.Context) error {
			*calls++
			<-ctx.Done()
			return fmt.Errorf("waiting for the server: %w", ctx.Err())
		}
	}
	t.Run("a timed-out attempt of plain work is not retried, and the error says why", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			err := exact(t, retry.WithAttemptTimeout(sec)).Do(t.Context(), hang(&calls))
			assert.Equal(t, 1, calls)
			assert.ErrorIs(t, err, retry.ErrNotIdempotent)
			assert.ErrorIs(t, err, context.DeadlineExceeded, "the attempt's own timeout")
			assert.Contains(t, err.Error(), "may still be running")
			assert.Contains(t, err.Error(), "idempotency key")
		})
	})
	t.Run("idempotent work is retried after a timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			err := exact(t, retry.WithAttemptTimeout(sec), retry.Idempotent()).Do(t.Context(), hang(&calls))
			assert.Equal(t, 3, calls)
			assert.ErrorIs(t, err, retry.ErrExhausted)
		})
	})
	t.Run("keyed work is retried after a timeout, with the same key", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, err := retry.WithIdempotencyKey(t.Context(), "order-4417-summary")
			require.NoError(t, err)
			var keys []string
			err = exact(t, retry.WithAttemptTimeout(sec)).Do(ctx, func(ctx context.Context) error {
				key, _ := retry.IdempotencyKey(ctx)
				keys = append(keys, key)
				<-ctx.Done()
				return ctx.Err()
			})
			assert.Equal(t, []string{"order-4417-summary", "order-4417-summary", "order-4417-summary"}, keys)
			assert.ErrorIs(t, err, retry.ErrExhausted)
		})
	})
	t.Run("a network timeout of plain work is not retried either", func(t *testing.T) {
		s := failing(timeoutErr{})
		err := exact(t).Do(t.Context(), s.op)
		assert.Equal(t, 1, s.calls)
		assert.ErrorIs(t, err, retry.ErrNotIdempotent)
	})
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

func TestPolicyPresets(t *testing.T) {
	t.Run("payment refuses a call without a key and makes no attempt", func(t *testing.T) {
		s := failing()
		err := retry.Do(t.Context(), s.op, retry.WithPolicy(policy.Payment()))
		assert.Zero(t, s.calls)
		assert.ErrorIs(t, err, retry.ErrKeyRequired)
	})
	t.Run("payment with a key retries a transient failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, err := retry.WithIdempotencyKey(t.Context(), "charge:order-1")
			require.NoError(t, err)
			s := failing(httpErr(503, -1))
			err = retry.Do(ctx, s.op, retry.WithPolicy(policy.Payment()))
			require.NoError(t, err)
			assert.Equal(t, 2, s.calls)
			assert.LessOrEqual(t, s.gaps()[0], 2*sec, "full jitter under the 2s base")
		})
	})
	t.Run("the LLM preset is strict and makes four attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := always(httpErr(503, -1))
			err := retry.Do(t.Context(), s.op, retry.WithPolicy(policy.LLMCall()))
			assert.Equal(t, 4, s.calls)
			assert.ErrorIs(t, err, retry.ErrExhausted)
			s = always(errUnknown)
			err = retry.Do(t.Context(), s.op, retry.WithPolicy(policy.LLMCall()))
			assert.Equal(t, 1, s.calls)
			assert.ErrorIs(t, err, retry.ErrPermanent)
		})
	})
	t.Run("a health check makes one attempt", func(t *testing.T) {
		s := always(errReset)
		err := retry.Do(t.Context(), s.op, retry.WithPolicy(policy.HealthCheck()))
		assert.Equal(t, 1, s.calls)
		assert.ErrorIs(t, err, retry.ErrExhausted)
	})
	t.Run("options after a preset adjust it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := always(httpErr(503, 5))
			err := retry.Do(t.Context(), s.op, retry.WithPolicy(policy.DBWrite()), retry.WithMaxAttempts(2))
			assert.Equal(t, 1, s.calls, "DBWrite's 1s max wait refuses a 5s Retry-After")
			assert.ErrorIs(t, err, retry.ErrWaitTooLong)
			s = always(errReset)
			_ = retry.Do(t.Context(), s.op, retry.WithPolicy(policy.DBWrite()), retry.WithMaxAttempts(2))
			assert.Equal(t, 2, s.calls, "two attempts, not DBWrite's four")
		})
	})
}

func TestTenAttemptsWithA60sCapRunOnFakeTime(t *testing.T) {
	real := time.Now()
	synctest.Test(t, func(t *testing.T) {
		s := always(errReset)
		r := exact(t, retry.WithMaxAttempts(10), retry.WithBackoff(backoff.Exponential{Base: sec, MaxDelay: 60 * sec}), retry.WithMaxDelay(60*sec))
		start := time.Now()
		err := r.Do(t.Context(), s.op)
		assert.ErrorIs(t, err, retry.ErrExhausted)
		assert.Equal(t, 10, s.calls)
		// 1+2+4+8+16+32+60+60+60 seconds of waiting, on the fake clock.
		assert.Equal(t, 243*sec, time.Since(start))
	})
	// The real clock: a guard against real sleeping, not a performance target.
	took := time.Since(real)
	t.Logf("243s of retry schedule ran in %v of real time", took)
	assert.Less(t, took, 2*sec)
}

func TestDoValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		v, err := retry.DoValue(t.Context(), func(ctx context.Context) (string, error) {
			calls++
			if calls < 3 {
				return "", errReset
			}
			return "done", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "done", v)
		assert.Equal(t, 3, calls)
	})
}

func TestResultClassifier(t *testing.T) {
	type completion struct{ content, finish string }
	llm := func(c completion) classify.Decision {
		if d := classify.Completion(c.content, c.finish); d.Verdict != classify.NoOpinion {
			return d
		}
		if c.finish == "length" {
			return classify.Decision{Verdict: classify.Retry, Reason: "truncated"}
		}
		return classify.Decision{}
	}
	run := func(t *testing.T, answers ...completion) (completion, int, error) {
		calls := 0
		v, _, err := retry.Value(t.Context(), exact(t), classify.CheckResult(func(ctx context.Context) (completion, error) {
			calls++
			return answers[min(calls, len(answers))-1], nil
		}, llm))
		return v, calls, err
	}
	t.Run("an empty answer is final", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v, calls, err := run(t, completion{"", "stop"})
			require.NoError(t, err)
			assert.Equal(t, 1, calls)
			assert.Equal(t, completion{"", "stop"}, v)
		})
	})
	t.Run("a filtered answer is final", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, calls, err := run(t, completion{"", "content_filter"})
			require.NoError(t, err)
			assert.Equal(t, 1, calls)
		})
	})
	t.Run("a rejected result is retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v, calls, err := run(t, completion{"par", "length"}, completion{"Paris", "stop"})
			require.NoError(t, err)
			assert.Equal(t, 2, calls)
			assert.Equal(t, "Paris", v.content)
		})
	})
	t.Run("a result rejected to the end returns the last value and says why", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v, calls, err := run(t, completion{"par", "length"})
			assert.Equal(t, 3, calls)
			assert.Equal(t, "par", v.content)
			assert.ErrorIs(t, err, retry.ErrExhausted)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, "truncated", rerr.Decision.Reason)
			assert.Contains(t, err.Error(), "result not accepted (truncated)")
		})
	})
}

func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := exact(t)
		st, err := r.Run(t.Context(), failing(errReset, errReset).op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 3, Waited: 300 * ms, Elapsed: 300 * ms, Winner: 3}, st)

		st, err = r.Run(t.Context(), always(errReset).op)
		require.Error(t, err)
		assert.Equal(t, retry.Stats{Attempts: 3, Waited: 300 * ms, Elapsed: 300 * ms}, st, "on failure too")

		st, err = r.Run(t.Context(), failing().op)
		require.NoError(t, err)
		assert.Equal(t, retry.Stats{Attempts: 1, Winner: 1}, st, "no time passes on the fake clock")

		calls := 0
		v, st, err := retry.Value(t.Context(), r, func(ctx context.Context) (int, error) {
			calls++
			if calls == 1 {
				return 0, httpErr(429, 4)
			}
			return 42, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 42, v)
		assert.Equal(t, 2, st.Attempts)
		assert.GreaterOrEqual(t, st.Waited, 4*sec)
		assert.Equal(t, st.Waited, st.Elapsed)
	})
}

func TestElapsedCoversTheWholeCallInEveryConfiguration(t *testing.T) {
	// A 1-minute first attempt, then two 1s waits and two instant attempts:
	// 1m2s, with or without a hook, a time budget, a logger or Stats.
	configs := []struct {
		name string
		opts []retry.Option
	}{
		{"no options (the hot path)", nil},
		{"a hook", []retry.Option{retry.WithObserver(observe.Func(func(context.Context, observe.Event) {}))}},
		{"a time budget", []retry.Option{retry.WithMaxElapsed(time.Hour)}},
		{"a logger", []retry.Option{retry.WithLogger(slog.New(slog.DiscardHandler))}},
		{"an attempt timeout", []retry.Option{retry.WithAttemptTimeout(2 * time.Minute)}},
		{"Outermost", []retry.Option{retry.Outermost()}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				slowThenFail := func(ctx context.Context) error {
					if calls++; calls == 1 {
						time.Sleep(time.Minute)
					}
					return errReset
				}
				opts := append([]retry.Option{retry.WithBackoff(backoff.Constant(sec)), retry.WithJitter(jitter.None{})}, c.opts...)
				r, err := retry.New(opts...)
				require.NoError(t, err)
				err = r.Do(t.Context(), slowThenFail)
				var rerr *retry.Error
				require.ErrorAs(t, err, &rerr)
				assert.Equal(t, time.Minute+2*sec, rerr.Elapsed)
				assert.Equal(t, 2*sec, rerr.Waited)
				assert.Contains(t, err.Error(), "after 3 attempt(s) in 1m2s")

				calls = 0
				st, err := r.Run(t.Context(), slowThenFail)
				require.Error(t, err)
				assert.Equal(t, retry.Stats{Attempts: 3, Waited: 2 * sec, Elapsed: time.Minute + 2*sec}, st, "Run")
			})
		})
	}
	t.Run("a timed-out attempt is counted whole", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, err := retry.New(retry.WithAttemptTimeout(20*ms), retry.WithMaxAttempts(1))
			require.NoError(t, err)
			err = r.Do(t.Context(), func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, 20*ms, rerr.Elapsed)
			assert.Contains(t, err.Error(), "in 20ms")
		})
	})
}

func TestWrap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := failing(errReset)
		send := retry.Wrap(s.op, retry.WithMaxAttempts(2))
		require.NoError(t, send(t.Context()))
		assert.Equal(t, 2, s.calls)

		calls := 0
		fetch := retry.WrapValue(func(ctx context.Context) (int, error) {
			calls++
			if calls == 1 {
				return 0, errReset
			}
			return 7, nil
		})
		v, err := fetch(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	})
}

func TestBadOptionsAreReportedWithoutCallingOp(t *testing.T) {
	tests := []struct {
		name    string
		opt     retry.Option
		wantErr string
	}{
		{"zero attempts", retry.WithMaxAttempts(0), "retry: WithMaxAttempts(0): must be at least 1"},
		{"negative attempts", retry.WithMaxAttempts(-3), "retry: WithMaxAttempts(-3): must be at least 1"},
		{"a negative time budget", retry.WithMaxElapsed(-sec), "retry: WithMaxElapsed(-1s): must not be negative"},
		{"a negative attempt timeout", retry.WithAttemptTimeout(-ms), "retry: WithAttemptTimeout(-1ms): must not be negative"},
		{"a negative max delay", retry.WithMaxDelay(-ms), "retry: WithMaxDelay(-1ms): must not be negative"},
		{"a negative delay", retry.WithBackoff(backoff.Constant(-sec)), "retry: WithBackoff(-1s): backoff.Constant(-1s): must not be negative"},
		{"a cap below the base", retry.WithBackoff(backoff.Exponential{Base: sec, MaxDelay: ms}), "backoff.Exponential.MaxDelay = 1ms: must not be below Base (1s)"},
		{"a factor below one", retry.WithBackoff(backoff.Exponential{Base: ms, Factor: 0.5}), "backoff.Exponential.Factor = 0.5: must be at least 1"},
		{"jitter above one", retry.WithJitter(jitter.Proportional(1.5)), "retry: WithJitter(1.5): jitter.Proportional(1.5): must be in [0, 1]"},
		{"jitter below zero", retry.WithJitter(jitter.Proportional(-0.1)), "jitter.Proportional(-0.1): must be in [0, 1]"},
		{"a nil backoff", retry.WithBackoff(nil), "retry: WithBackoff(<nil>): must not be nil"},
		{"a nil jitter", retry.WithJitter(nil), "retry: WithJitter(<nil>): must not be nil"},
		{"a nil classifier", retry.WithClassifier(nil), "retry: WithClassifier(<nil>): must not be nil"},
		{"a nil observer", retry.WithObserver(nil), "retry: WithObserver(<nil>): must not be nil"},
		{"a nil observer func", retry.WithObserver(observe.Func(nil)), "retry: WithObserver(<nil>): must not be nil"},
		{"nil breakers", retry.WithBreakers(nil), "retry: WithBreakers(<nil>): must not be nil (build them with breaker.New)"},
		{"nil cooldowns", retry.WithCooldowns(nil), "retry: WithCooldowns(<nil>): must not be nil (build them with breaker.NewCooldowns)"},
		{"a nil limiter", retry.WithLimiter(nil), "retry: WithLimiter(<nil>): must not be nil"},
		{"a nil source", retry.WithJitterSource(nil), "retry: WithJitterSource(<nil>): must not be nil"},
		{"a nil budget", retry.WithBudget(nil), "retry: WithBudget(<nil>): must not be nil"},
		{"a nil option", nil, "retry: Option(<nil>): must not be nil"},
		{"a bad policy", retry.WithPolicy(policy.Policy{MaxAttempts: -1}), "policy.Policy.MaxAttempts = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := retry.New(retry.WithMaxAttempts(2), tt.opt)
			require.Error(t, err)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			var ierr *retry.InvalidError
			require.ErrorAs(t, err, &ierr)
			assert.Contains(t, err.Error(), tt.wantErr)

			called := false
			err = retry.Do(t.Context(), func(context.Context) error { called = true; return nil }, tt.opt)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.False(t, called, "op must not run with a bad option")
			_, err = retry.DoValue(t.Context(), func(context.Context) (int, error) { called = true; return 0, nil }, tt.opt)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.ErrorIs(t, retry.Wrap(func(context.Context) error { called = true; return nil }, tt.opt)(t.Context()), retry.ErrInvalid)
			assert.False(t, called, "op must not run with a bad option")
		})
	}
}

func TestARefusedRetrierFailsEveryCall(t *testing.T) {
	// The snippet that used to make 3 attempts under the defaults.
	r, _ := retry.New(retry.WithBackoff(nil), retry.WithMaxAttempts(2))
	require.NotNil(t, r)
	s := always(errReset)
	err := r.Do(t.Context(), s.op)
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.Contains(t, err.Error(), "retry: WithBackoff(<nil>): must not be nil")
	st, err := r.Run(t.Context(), s.op)
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.Zero(t, st)
	_, _, err = retry.Value(t.Context(), r, func(context.Context) (int, error) { return 0, s.op(nil) })
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.Zero(t, s.calls, "the operation never runs")
}

func TestBadArgumentsDoNotPanic(t *testing.T) {
	ran := false
	op := func(context.Context) error { ran = true; return nil }
	vop := func(context.Context) (int, error) { ran = true; return 0, nil }
	var nilRetrier *retry.Retrier
	r, err := retry.New()
	require.NoError(t, err)
	var nilCtx context.Context
	calls := []struct {
		name string
		call func() error
	}{
		{"(*Retrier)(nil).Do", func() error { return nilRetrier.Do(t.Context(), op) }},
		{"(*Retrier)(nil).Run", func() error { _, err := nilRetrier.Run(t.Context(), op); return err }},
		{"Value with a nil Retrier", func() error { _, _, err := retry.Value(t.Context(), nilRetrier, vop); return err }},
		{"(*Retrier).Do with a nil op", func() error { return r.Do(t.Context(), nil) }},
		{"(*Retrier).Do with a nil context", func() error { return r.Do(nilCtx, op) }},
		{"(*Retrier).Run with a nil op", func() error { _, err := r.Run(t.Context(), nil); return err }},
		{"(*Retrier).Run with a nil context", func() error { _, err := r.Run(nilCtx, op); return err }},
		{"Value with a nil op", func() error { _, _, err := retry.Value[int](t.Context(), r, nil); return err }},
		{"Value with a nil context", func() error { _, _, err := retry.Value(nilCtx, r, vop); return err }},
		{"Do with a nil op", func() error { return retry.Do(t.Context(), nil) }},
		{"Do with a nil context", func() error { return retry.Do(nilCtx, op) }},
		{"DoValue with a nil op", func() error { _, err := retry.DoValue[int](t.Context(), nil); return err }},
		{"DoValue with a nil context", func() error { _, err := retry.DoValue(nilCtx, vop); return err }},
		{"Wrap of a nil op", func() error { return retry.Wrap(nil)(t.Context()) }},
		{"Wrap called with a nil context", func() error { return retry.Wrap(op)(nilCtx) }},
		{"WrapValue of a nil op", func() error { _, err := retry.WrapValue[int](nil)(t.Context()); return err }},
		{"WithIdempotencyKey with a nil context", func() error { _, err := retry.WithIdempotencyKey(nilCtx, "k"); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			assert.ErrorIs(t, c.call(), retry.ErrInvalid)
			assert.False(t, ran, "nothing ran")
		})
	}
	_, ok := retry.IdempotencyKey(nilCtx)
	assert.False(t, ok)
}

func TestTheZeroRetrierUsesTheDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := always(errReset)
		err := new(retry.Retrier).Do(t.Context(), s.op)
		assert.Equal(t, 3, s.calls)
		assert.ErrorIs(t, err, retry.ErrExhausted)
		for _, g := range s.gaps() {
			assert.Less(t, g, 200*ms, "full jitter on 100ms, then 200ms")
		}
	})
}

func TestIdempotencyKeyValidation(t *testing.T) {
	key255 := strings.Repeat("é", 255) // characters, not bytes
	tests := []struct {
		name    string
		key     string
		wantErr string
	}{
		{"255 characters are accepted", key255, ""},
		{"256 characters are refused", key255 + "x", "256 characters: the limit is 255"},
		{"an empty key is refused", "", "must not be empty"},
		{"a control character is refused", "order\n1", "must not contain control characters"},
		{"invalid UTF-8 is refused", "order\xff", "must be valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, err := retry.WithIdempotencyKey(t.Context(), tt.key)
			if tt.wantErr == "" {
				require.NoError(t, err)
				got, ok := retry.IdempotencyKey(ctx)
				assert.True(t, ok)
				assert.Equal(t, tt.key, got)
				return
			}
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), tt.wantErr)
			_, ok := retry.IdempotencyKey(ctx)
			assert.False(t, ok, "an invalid key is not attached")
			assert.Less(t, len(err.Error()), 200, "a long key is abbreviated in the message")
		})
	}
}

func TestSeededRandomnessReproducesTheWaits(t *testing.T) {
	waits := func() []time.Duration {
		var got []time.Duration
		synctest.Test(t, func(t *testing.T) {
			s := always(errReset)
			r, err := retry.New(retry.WithJitterSource(jitter.NewSeeded(99)), retry.WithMaxAttempts(6))
			require.NoError(t, err)
			_ = r.Do(t.Context(), s.op)
			got = s.gaps()
		})
		return got
	}
	a, b := waits(), waits()
	assert.Len(t, a, 5)
	assert.Equal(t, a, b)
}

func TestDecorrelatedJitterGrowsFromThePreviousWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := always(errReset)
		r, err := retry.New(retry.WithMaxAttempts(8), retry.WithJitterSource(jitter.NewSeeded(5)),
			retry.WithBackoff(backoff.Constant(100*ms)), retry.WithJitter(jitter.Decorrelated{Base: 100 * ms, MaxDelay: 5 * sec}))
		require.NoError(t, err)
		_ = r.Do(t.Context(), s.op)
		prev := 100 * ms
		for _, g := range s.gaps() {
			assert.GreaterOrEqual(t, g, 100*ms)
			assert.LessOrEqual(t, g, min(3*prev, 5*sec))
			prev = g
		}
	})
}

func TestASharedRetrierIsSafeForConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		r := exact(t, retry.WithObserver(observe.Func(ev.hook)), retry.WithMaxAttempts(4), retry.WithoutBudget())
		var wg sync.WaitGroup
		scripts := make([]*script, 50)
		for i := range scripts {
			scripts[i] = failing(errReset, httpErr(503, -1))
			wg.Go(func() {
				assert.NoError(t, r.Do(t.Context(), scripts[i].op))
			})
		}
		wg.Wait()
		for _, s := range scripts {
			assert.Equal(t, 3, s.calls)
		}
		assert.Len(t, ev.list, 50*5, "3 attempts and 2 scheduled retries per call")
	})
}

func TestCenkaltiPermanentStopsTheLoop(t *testing.T) {
	// Code migrating from cenkalti/backoff v4 keeps its permanent errors
	// permanent: retried until attempts ran out before, forever with no limit.
	calls := 0
	err := retry.Do(t.Context(), func(context.Context) error {
		calls++
		return cbackoff.Permanent(fmt.Errorf("validate: %w", errUnknown))
	}, retry.WithMaxAttempts(10))
	assert.Equal(t, 1, calls)
	assert.ErrorIs(t, err, retry.ErrPermanent)
	assert.ErrorIs(t, err, errUnknown)
	var rerr *retry.Error
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, classify.ReasonMarkedPermanent, rerr.Decision.Reason)
}

func TestWithDerivesARetrierThatSharesTheStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &countingBudget{}
		b.allow.Store(100)
		r, err := retry.New(retry.WithBudget(b), retry.WithMaxAttempts(5), retry.WithBackoff(backoff.Constant(ms)))
		require.NoError(t, err)
		once, err := r.With(retry.WithMaxAttempts(1))
		require.NoError(t, err)
		s := always(errReset)
		_, err = once.Run(t.Context(), s.op)
		assert.ErrorIs(t, err, retry.ErrExhausted)
		assert.Equal(t, 1, s.calls, "the derived Retrier's own policy")
		assert.Equal(t, int64(0), b.asked.Load(), "one attempt: the shared budget was not asked for a retry")
		s = always(errReset)
		_, err = r.Run(t.Context(), s.op)
		assert.ErrorIs(t, err, retry.ErrExhausted)
		assert.Equal(t, 5, s.calls, "the original is unchanged")
		assert.Equal(t, int64(4), b.asked.Load(), "and shares its budget")

		_, err = r.With(retry.WithMaxAttempts(0))
		assert.ErrorIs(t, err, retry.ErrInvalid)
		var nilRetrier *retry.Retrier
		bad, err := nilRetrier.With()
		assert.ErrorIs(t, err, retry.ErrInvalid)
		assert.ErrorIs(t, bad.Do(t.Context(), s.op), retry.ErrInvalid)
	})
}
