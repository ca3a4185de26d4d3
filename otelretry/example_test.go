package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/otelretry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// printSeries prints every series the reader collects, sorted, with its
// value (a histogram's count, and the sum of a count histogram).
func printSeries(reader *sdkmetric.ManualReader) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	out := map[string]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			addPoints(out, m)
		}
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch p := out[k]; {
		case strings.HasPrefix(k, "retry.call.retries{"):
			fmt.Printf("%s count=%d sum=%g\n", k, p.Count, p.Sum)
		case p.Count > 0: // a duration: its sum is real time
			fmt.Printf("%s count=%d\n", k, p.Count)
		default:
			fmt.Printf("%s %g\n", k, p.Value)
		}
	}
}

func ExampleNewRetrier() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.NewRetrier("inventory", otelretry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := retry.New(retry.WithHook(obs.Hook), retry.WithBackoff(backoff.Constant(0)))
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	_ = r.Do(context.Background(), func(context.Context) error {
		if n++; n == 1 {
			return &classify.StatusError{Code: 503}
		}
		return nil
	})
	_ = r.Do(context.Background(), func(context.Context) error { return &classify.StatusError{Code: 404} })
	printSeries(reader)
	// Output:
	// retry.attempts{retry.class=http 4xx,retry.name=inventory,retry.verdict=stop} 1
	// retry.attempts{retry.class=http 503,retry.name=inventory,retry.verdict=retry} 1
	// retry.attempts{retry.name=inventory,retry.verdict=success} 1
	// retry.call.duration{retry.name=inventory,retry.outcome=permanent} count=1
	// retry.call.duration{retry.name=inventory,retry.outcome=success} count=1
	// retry.call.retries{retry.name=inventory,retry.outcome=success} count=1 sum=1
	// retry.call.retry_delay{retry.name=inventory,retry.outcome=success} count=1
}

func ExampleObserveBudget() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	b, _ := budget.NewTokenBucket(budget.TokenBucketConfig{}) // 500 tokens, retries stop at 250
	reg, err := otelretry.ObserveBudget("search", b, otelretry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = reg.Unregister() }()
	b.Record(budget.Attempt{Outcome: budget.Failed})
	printSeries(reader)
	// Output:
	// retry.budget.refusals{retry.budget.name=search} 0
	// retry.budget.threshold{retry.budget.name=search} 250
	// retry.budget.tokens{retry.budget.name=search} 495
}

func ExampleObserveLimiter() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	th, _ := limit.NewThrottler(limit.ThrottlerConfig{}) // K = 2
	// A *limit.Adaptive, or limit/redis's fleet *Limiter, is observed the
	// same way: ObserveLimiter reads any limiter's Rate.
	reg, err := otelretry.ObserveLimiter("search", th, otelretry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = reg.Unregister() }()
	th.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	for range 3 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	}
	printSeries(reader)
	// Output:
	// retry.limit.reject_probability{retry.limit.name=search} 0.4
}

func ExampleNewBreaker() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.NewBreaker("billing", otelretry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := retry.New(retry.WithMaxAttempts(1))
	b, err := breaker.New(breaker.Settings{
		Name:          "billing",
		ReadyToTrip:   func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
		OnStateChange: obs.OnStateChange,
	}, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		obs.Observe(context.Background(), b.Do(context.Background(), func(context.Context) error {
			return errors.New("connection reset")
		}))
	}
	printSeries(reader)
	// Output:
	// retry.breaker.rejections{retry.breaker.name=billing,retry.breaker.reason=open} 1
	// retry.breaker.state{retry.breaker.name=billing,retry.breaker.state=closed} 0
	// retry.breaker.state{retry.breaker.name=billing,retry.breaker.state=half_open} 0
	// retry.breaker.state{retry.breaker.name=billing,retry.breaker.state=open} 1
	// retry.breaker.transitions{retry.breaker.from=closed,retry.breaker.name=billing,retry.breaker.state=open} 1
}

func ExampleNewServer() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.NewServer("orders", otelretry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := idempotency.NewMemoryStore()
	guard, err := idempotency.Middleware(store, idempotency.WithHook(obs.Hook))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }))
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set(idempotency.HeaderKey, "order-1")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	printSeries(reader)
	// Output:
	// retry.idempotency.requests{retry.idempotency.name=orders,retry.idempotency.outcome=executed} 1
	// retry.idempotency.requests{retry.idempotency.name=orders,retry.idempotency.outcome=replayed} 1
}

// readmeSnippet is the README's first otelretry snippet, compiled here (the
// root module's README test cannot import this nested module).
func readmeSnippet(ctx context.Context, op func(context.Context) error) error {
	obs, err := otelretry.NewRetrier("payments") // the global meter provider; WithMeterProvider for another
	if err != nil {
		return err
	}
	r, err := retry.New(retry.WithHook(obs.Hook))
	if err != nil {
		return err
	}
	return r.Do(ctx, op)
}

var _ = readmeSnippet
