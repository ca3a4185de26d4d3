package limit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/limit"
)

// One limiter per API key, shared by every worker: the first 429 sets its
// rate to what the server accepted, and the workers then wait their turns.
func ExampleNewAdaptive() {
	var now time.Duration // a simulated clock, to show the numbers
	l, _ := limit.NewAdaptive(limit.AdaptiveConfig{Now: func() time.Duration { return now }})
	fmt.Println(l.Rate())
	for range 200 { // the server accepted 100 a second for 2s
		now += 10 * time.Millisecond
		l.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	}
	l.Record(context.Background(), limit.Outcome{Result: limit.Throttled, RetryAfter: time.Second})
	fmt.Printf("%.0f attempts a second\n", l.Rate())
	_, wait := l.Take()
	fmt.Println(wait.Round(time.Millisecond))
	// Output:
	// +Inf
	// 90 attempts a second
	// 11ms
}

func ExampleNewThrottler() {
	r := rand.New(rand.NewPCG(1, 2)) // seeded: the same refusals on every run
	th, _ := limit.NewThrottler(limit.ThrottlerConfig{Rand: r.Uint64})
	for range 30 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	}
	for range 70 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	}
	fmt.Printf("%.2f\n", th.RejectProbability()) // (100 − 2·30) / 101
	// Output: 0.40
}

func ExampleOutcomeOf() {
	err := &classify.StatusError{Code: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}}}
	o := limit.OutcomeOf(err, classify.Default(err))
	fmt.Println(o.Result, o.RetryAfter)
	// Output: throttled 2s
}

// A refusal is local — nothing was sent — and is never retried.
func Example_withLimiter() {
	th, _ := limit.NewThrottler(limit.ThrottlerConfig{K: 1, Rand: func() uint64 { return 0 }})
	for range 100 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	}
	r, _ := retry.New(retry.WithLimiter(th))
	calls := 0
	err := r.Do(context.Background(), func(context.Context) error { calls++; return nil })
	fmt.Println(errors.Is(err, retry.ErrLimited), calls)
	fmt.Println(err)
	// Output:
	// true 0
	// retry: refused locally by the client-side rate limiter, nothing sent before the first attempt
}

// One Adaptive limiter per (host, model), made on first use; each call says
// its key through its context.
func ExampleNewKeyed() {
	type hostModel struct{ host, model string }
	type keyCtx struct{}
	keyed, err := limit.NewKeyed(
		func(ctx context.Context) (hostModel, bool) {
			k, ok := ctx.Value(keyCtx{}).(hostModel)
			return k, ok
		},
		func(hostModel) (limit.Limiter, error) { return limit.NewAdaptive(limit.AdaptiveConfig{}) },
		0)
	if err != nil {
		panic(err)
	}
	r, _ := retry.New(retry.WithLimiter(keyed))
	ctx := context.WithValue(context.Background(), keyCtx{}, hostModel{"api.example", "qwen3"})
	err = r.Do(ctx, func(context.Context) error { return nil })
	l, _ := keyed.Get(hostModel{"api.example", "qwen3"})
	fmt.Println(err, l.(*limit.Adaptive).Rate())
	// Output: <nil> +Inf
}
