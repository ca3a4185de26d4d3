package retry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
)

// flaky fails with a connection reset the first n times it is called.
func flaky(n int) func(context.Context) error {
	calls := 0
	return func(context.Context) error {
		if calls++; calls <= n {
			return fmt.Errorf("send: %w", syscall.ECONNRESET)
		}
		return nil
	}
}

func ExampleDo() {
	err := retry.Do(context.Background(), flaky(2),
		retry.WithBackoff(backoff.Constant(time.Millisecond)))
	fmt.Println(err)
	// Output: <nil>
}

func ExampleDoValue() {
	calls := 0
	v, err := retry.DoValue(context.Background(), func(ctx context.Context) (string, error) {
		if calls++; calls == 1 {
			return "", &classify.StatusError{Code: http.StatusBadGateway}
		}
		return "hello", nil
	}, retry.WithBackoff(backoff.Constant(time.Millisecond)))
	fmt.Println(v, err, calls)
	// Output: hello <nil> 2
}

func ExampleNew() {
	// Build once, share everywhere: the Retrier is immutable and goroutine-safe.
	r, err := retry.New(
		retry.WithMaxAttempts(4),
		retry.WithBackoff(backoff.Exponential{Base: time.Millisecond, MaxDelay: 10 * time.Millisecond}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	stats, err := r.Run(context.Background(), flaky(3))
	fmt.Println(err, stats.Attempts)

	err = r.Do(context.Background(), flaky(10))
	var rerr *retry.Error
	if errors.As(err, &rerr) {
		fmt.Println(errors.Is(err, retry.ErrExhausted), errors.Is(err, syscall.ECONNRESET), rerr.Attempts, len(rerr.Failures))
	}
	// Output:
	// <nil> 4
	// true true 4 4
}

func ExampleNew_badOption() {
	_, err := retry.New(retry.WithBackoff(backoff.Exponential{Base: time.Second, Factor: 0.5}))
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrInvalid))
	// Output:
	// retry: WithBackoff({1s 0.5 0s}): backoff.Exponential.Factor = 0.5: must be at least 1 (or 0 for the default 2)
	// true
}

func ExampleWithPolicy() {
	charge := func(ctx context.Context) error {
		key, _ := retry.IdempotencyKey(ctx)
		fmt.Println("charging with key", key)
		return nil
	}
	r, _ := retry.New(retry.WithPolicy(policy.Payment()))

	// The payment preset refuses to run without an idempotency key.
	err := r.Do(context.Background(), charge)
	fmt.Println(errors.Is(err, retry.ErrKeyRequired))

	ctx, _ := retry.WithIdempotencyKey(context.Background(), "charge:order-4417")
	fmt.Println(r.Do(ctx, charge))
	// Output:
	// true
	// charging with key charge:order-4417
	// <nil>
}

func Example_retryAfter() {
	// A rate limit asking for 90s exceeds the default 30s MaxDelay: the call
	// returns at once with the wait, for the caller to schedule the work.
	rateLimited := func(context.Context) error {
		return &classify.StatusError{Code: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"90"}}}
	}
	start := time.Now()
	err := retry.Do(context.Background(), rateLimited)
	var rerr *retry.Error
	if errors.As(err, &rerr) {
		fmt.Println(rerr.RetryAfter, errors.Is(err, retry.ErrWaitTooLong), time.Since(start) < time.Second)
	}
	fmt.Println(rerr.Last)
	// Output:
	// 1m30s true true
	// http 429 Too Many Requests
}

func ExampleWrap() {
	send := retry.Wrap(flaky(1), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	fmt.Println(send(context.Background()))
	// Output: <nil>
}

func ExampleWrapValue() {
	calls := 0
	lookup := func(ctx context.Context) (int, error) {
		if calls++; calls == 1 {
			return 0, syscall.ECONNREFUSED
		}
		return 42, nil
	}
	retried := retry.WrapValue(lookup, retry.WithBackoff(backoff.Constant(time.Millisecond)))
	fmt.Println(retried(context.Background()))
	// Output: 42 <nil>
}

func ExampleValue_result() {
	type job struct{ status string }
	pending := func(j job) classify.Decision {
		if j.status == "pending" {
			return classify.Decision{Verdict: classify.Retry, Reason: "pending"}
		}
		return classify.Decision{}
	}
	r, err := retry.New(retry.WithBackoff(backoff.Constant(time.Millisecond)))
	if err != nil {
		panic(err)
	}
	polls := 0
	poll := func(ctx context.Context) (job, error) {
		if polls++; polls < 3 {
			return job{"pending"}, nil
		}
		return job{"done"}, nil
	}
	// CheckResult turns a pending job into a failed attempt: retried.
	j, st, err := retry.Value(context.Background(), r, classify.CheckResult(poll, pending))
	fmt.Println(j.status, err, st.Attempts)
	// Output: done <nil> 3
}

func ExampleIdempotent() {
	// An attempt that times out may still be running on the server: it is
	// retried only for work that is idempotent, or carries an idempotency key.
	slow := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	err := retry.Do(context.Background(), slow, retry.WithAttemptTimeout(time.Millisecond))
	fmt.Println(errors.Is(err, retry.ErrNotIdempotent))

	err = retry.Do(context.Background(), slow, retry.WithAttemptTimeout(time.Millisecond),
		retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.Idempotent())
	fmt.Println(errors.Is(err, retry.ErrExhausted))
	// Output:
	// true
	// true
}

func ExampleWithLogger() {
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the example's output stable
			}
			return a
		},
	}))
	_ = retry.Do(context.Background(), flaky(1), retry.WithLogger(log),
		retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithJitter(jitter.None{}))
	// Output:
	// level=DEBUG msg="retry: waiting before the next attempt" attempt=1 delay=1ms class="connection reset" waited=0s error="send: connection reset by peer"
}

func ExampleWithObserver() {
	hook := func(ctx context.Context, e observe.Event) {
		if e.Kind == observe.RetryScheduled {
			fmt.Printf("attempt %d failed (%s), next in %v\n", e.Attempt, e.Decision.Reason, e.Delay)
		}
	}
	_ = retry.Do(context.Background(), flaky(2), retry.WithObserver(observe.Func(hook)),
		retry.WithBackoff(backoff.Exponential{Base: time.Millisecond}), retry.WithJitter(jitter.None{}))
	// Output:
	// attempt 1 failed (connection reset), next in 1ms
	// attempt 2 failed (connection reset), next in 2ms
}

func ExampleWithBudget() {
	// One budget for every call to a dependency, from any goroutine: when the
	// dependency is down, the first failures use up the retries and the rest
	// fail at once instead of hammering it.
	bucket, _ := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 1}) // no retry at or below 5
	r, _ := retry.New(retry.WithBudget(bucket), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	down := func(context.Context) error { return syscall.ECONNREFUSED }

	calls, deadLetters := 0, 0
	for range 10 {
		err := r.Do(context.Background(), func(ctx context.Context) error { calls++; return down(ctx) })
		if errors.Is(err, retry.ErrBudget) {
			deadLetters++ // the point to hand the work to a dead letter queue
		}
	}
	fmt.Println(calls, "calls instead of 30;", deadLetters, "calls refused a retry")
	// Output: 13 calls instead of 30; 9 calls refused a retry
}

func ExampleOutermost() {
	// Service A calls B, which retries its own calls to a dependency. By
	// default the innermost loop (B's) retries and A does not retry what B
	// gave up on. With Outermost, A retries and B makes one attempt each time.
	calls := 0
	dependency := func(context.Context) error { calls++; return syscall.ECONNRESET }
	opts := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond))}
	b, _ := retry.New(opts...)
	a, _ := retry.New(append(opts, retry.Outermost())...)

	err := a.Do(context.Background(), func(ctx context.Context) error {
		return b.Do(ctx, dependency)
	})
	var rerr *retry.Error
	errors.As(err, &rerr)
	fmt.Println(calls, rerr.Attempts, errors.Is(err, retry.ErrExhausted))
	// Output: 3 3 true
}

func ExampleWithJitterSource() {
	// In tests: seeded randomness gives the same waits on every run, and a
	// hook collects them for assertions (run the test in testing/synctest's
	// bubble and the waits take no real time; see the README).
	waits := func() []time.Duration {
		var got []time.Duration
		_ = retry.Do(context.Background(), flaky(3),
			retry.WithMaxAttempts(4),
			retry.WithBackoff(backoff.Exponential{Base: time.Millisecond}),
			retry.WithJitterSource(jitter.NewSeeded(7)),
			retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
				if e.Kind == observe.RetryScheduled {
					got = append(got, e.Delay)
				}
			})))
		return got
	}
	first, second := waits(), waits()
	fmt.Println(len(first), slices.Equal(first, second))
	// Output: 3 true
}
