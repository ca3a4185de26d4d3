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
)

func ExampleNew() {
	// Breaker outside, retry inside: the breaker counts one logical call.
	r, _ := retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	b, _ := breaker.New(breaker.Settings{
		Name:        "inventory",
		Timeout:     30 * time.Second,
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
	}, r)

	calls := 0
	down := func(context.Context) error { calls++; return syscall.ECONNREFUSED }
	for range 3 {
		err := b.Do(context.Background(), down)
		fmt.Println(errors.Is(err, breaker.ErrOpen), calls)
	}
	// Output:
	// false 3
	// false 6
	// true 6
}

func ExamplePerAttempt() {
	// The breaker counts every attempt; its rejection ends the retry loop.
	r, _ := retry.New(retry.WithMaxAttempts(10), retry.WithBackoff(backoff.Constant(time.Millisecond)))
	b, _ := breaker.New(breaker.Settings{
		Name:        "pool",
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
	}, r, breaker.PerAttempt())

	calls := 0
	err := b.Do(context.Background(), func(context.Context) error { calls++; return syscall.ECONNRESET })
	fmt.Println(calls, errors.Is(err, breaker.ErrOpen), errors.Is(err, retry.ErrPermanent))
	// Output: 3 true true
}

func ExampleValue_fallback() {
	// A degraded answer when the breaker rejects: test for the rejection at
	// the call, where the types are known.
	r, _ := retry.New(retry.WithMaxAttempts(1))
	b, _ := breaker.New(breaker.Settings{
		Name:        "fx",
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
	}, r)
	rate := func(ctx context.Context) (string, error) {
		v, _, err := breaker.Value(ctx, b, func(context.Context) (string, error) { return "", syscall.ECONNRESET })
		if errors.Is(err, breaker.ErrOpen) {
			return "yesterday's rate", nil
		}
		return v, err
	}
	_, err := rate(context.Background())
	fmt.Println(errors.Is(err, syscall.ECONNRESET)) // the dependency's own failure is not hidden
	v, err := rate(context.Background())
	fmt.Println(v, err) // the breaker opened: the fallback answers
	// Output:
	// true
	// yesterday's rate <nil>
}

func ExampleSettings_onStateChange() {
	r, _ := retry.New(retry.WithMaxAttempts(1))
	b, _ := breaker.New(breaker.Settings{
		Name:        "payments",
		ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
		OnStateChange: func(name string, from, to breaker.State) {
			fmt.Printf("%s: %s → %s\n", name, from, to) // or slog, or a metric
		},
	}, r)
	for range 2 {
		_ = b.Do(context.Background(), func(context.Context) error { return syscall.ECONNRESET })
	}
	fmt.Println(b.State(), b.Counts().TotalFailures)
	// Output:
	// payments: closed → open
	// open 0
}

func ExampleCooldowns() {
	cd, _ := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{})
	key := breaker.HostModel{Host: "gateway.example", Model: "qwen3-0.6b"}
	requests := 0
	call := func(context.Context) error {
		requests++
		return &classify.StatusError{Code: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"30"}}}
	}

	_ = cd.Do(context.Background(), key, call) // the server says: come back in 30s
	err := cd.Do(context.Background(), key, call)
	fmt.Println(requests, errors.Is(err, breaker.ErrCooldown))

	other := breaker.HostModel{Host: "gateway.example", Model: "llama"}
	_ = cd.Do(context.Background(), other, call) // another model is not held back
	fmt.Println(requests)
	// Output:
	// 1 true
	// 2
}
