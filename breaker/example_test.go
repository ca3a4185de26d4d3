package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
)

func ExampleNew() {
	// Breaker outside, retry inside: the breaker counts one logical call.
	breakers, _ := breaker.New(breaker.Config{
		Timeout:     30 * time.Second,
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
	})
	r, _ := retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond)),
		retry.WithBreakers(breakers))
	ctx := breaker.WithKey(context.Background(), breaker.Key{Target: "inventory.internal"})

	calls := 0
	down := func(context.Context) error { calls++; return syscall.ECONNREFUSED }
	for range 3 {
		err := r.Do(ctx, down)
		fmt.Println(errors.Is(err, retry.ErrBreakerOpen), calls)
	}
	// Output:
	// false 3
	// false 6
	// true 6
}

func ExampleConfig_perAttempt() {
	// The breaker counts every attempt; its refusal ends the call.
	breakers, _ := breaker.New(breaker.Config{
		PerAttempt:  true,
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
	})
	r, _ := retry.New(retry.WithMaxAttempts(10), retry.WithBackoff(backoff.Constant(time.Millisecond)),
		retry.WithBreakers(breakers))

	calls := 0
	err := r.Do(context.Background(), func(context.Context) error { calls++; return syscall.ECONNRESET })
	var rerr *retry.Error
	errors.As(err, &rerr)
	fmt.Println(calls, errors.Is(err, retry.ErrBreakerOpen), rerr.Stop)
	// Output: 3 true breaker-open
}

func Example_fallback() {
	// A degraded answer when the breaker refuses the call: nothing was sent.
	breakers, _ := breaker.New(breaker.Config{
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
	})
	r, _ := retry.New(retry.WithMaxAttempts(1), retry.WithBreakers(breakers))
	fx := breaker.WithKey(context.Background(), breaker.Key{Target: "fx.example", Operation: "rate"})
	rate := func(ctx context.Context) (string, error) {
		v, _, err := retry.Value(ctx, r, func(context.Context) (string, error) { return "", syscall.ECONNRESET })
		if errors.Is(err, retry.ErrBreakerOpen) {
			return "yesterday's rate", nil
		}
		return v, err
	}
	_, err := rate(fx)
	fmt.Println(errors.Is(err, syscall.ECONNRESET)) // the dependency's own failure is not hidden
	v, err := rate(fx)
	fmt.Println(v, err) // the breaker opened: the fallback answers
	// Output:
	// true
	// yesterday's rate <nil>
}

func ExampleWithKey() {
	// Each key has its own breaker: one model failing does not hold back
	// another on the same host.
	breakers, _ := breaker.New(breaker.Config{
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
	})
	r, _ := retry.New(retry.WithMaxAttempts(1), retry.WithBreakers(breakers))
	qwen := breaker.Key{Target: "gateway.example", Operation: "qwen3"}
	llama := breaker.Key{Target: "gateway.example", Operation: "llama"}

	_ = r.Do(breaker.WithKey(context.Background(), qwen), func(context.Context) error { return syscall.ECONNRESET })
	err := r.Do(breaker.WithKey(context.Background(), qwen), func(context.Context) error { return nil })
	fmt.Println(err)
	err = r.Do(breaker.WithKey(context.Background(), llama), func(context.Context) error { return nil })
	fmt.Println(err)
	fmt.Println(breakers.State(qwen), breakers.State(llama))
	// Output:
	// retry: refused by the circuit breaker, nothing sent before the first attempt: breaker gateway.example/qwen3: circuit breaker is open: the call was not made
	// <nil>
	// open closed
}

func ExampleKeyOf() {
	ctx := breaker.WithKey(context.Background(), breaker.Key{Target: "db.internal", Operation: "orders"})
	k, ok := breaker.KeyOf(ctx)
	fmt.Println(k, ok)
	// Output: db.internal/orders true
}

func ExampleBreakers_State() {
	// State and Counts read a key's breaker at any time, for a health
	// endpoint; the observer hears of every change as it happens.
	breakers, _ := breaker.New(breaker.Config{
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
	})
	log := observe.Func(func(_ context.Context, e observe.Event) {
		if t, ok := e.Detail.(breaker.Transition); ok {
			fmt.Printf("%s: %s → %s\n", t.Key, t.From, t.To) // or a metric
		}
	})
	r, _ := retry.New(retry.WithMaxAttempts(1), retry.WithBreakers(breakers), retry.WithObserver(log))
	payments := breaker.Key{Target: "payments.example"}
	for range 2 {
		_ = r.Do(breaker.WithKey(context.Background(), payments), func(context.Context) error { return syscall.ECONNRESET })
	}
	fmt.Println(breakers.State(payments), breakers.Counts(payments).TotalFailures)
	// Output:
	// payments.example: closed → open
	// open 0
}

func ExampleNewCooldowns() {
	cooldowns, _ := breaker.NewCooldowns(breaker.CooldownConfig{})
	r, _ := retry.New(retry.WithMaxAttempts(1), retry.WithMaxDelay(10*time.Second), retry.WithCooldowns(cooldowns))
	requests := 0
	call := func(context.Context) error {
		requests++
		return &classify.StatusError{Code: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"30"}}}
	}
	qwen := breaker.WithKey(context.Background(), breaker.Key{Target: "gateway.example", Operation: "qwen3"})

	_ = r.Do(qwen, call) // the server says: come back in 30s
	err := r.Do(qwen, call)
	var rerr *retry.Error
	errors.As(err, &rerr)
	fmt.Println(requests, errors.Is(err, breaker.ErrCooldown), rerr.Stop, rerr.RetryAfter.Round(time.Second))

	llama := breaker.WithKey(context.Background(), breaker.Key{Target: "gateway.example", Operation: "llama"})
	_ = r.Do(llama, call) // another model is not held back
	fmt.Println(requests)
	// Output:
	// 1 true wait-too-long 30s
	// 2
}
