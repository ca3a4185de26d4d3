package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// printSeries prints every series the reader collects whose name starts
// with one of prefixes, sorted, with its value (a histogram's count, and
// the sum of a count histogram).
func printSeries(reader *sdkmetric.ManualReader, prefixes ...string) {
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
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				keys = append(keys, k)
				break
			}
		}
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

// One Observer, given to the Retrier, counts its calls and attempts.
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.New("inventory", otelretry.Config{MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = obs.Unregister() }()
	r, err := retry.New(retry.WithObserver(obs), retry.WithBackoff(backoff.Constant(0)))
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
	printSeries(reader, "retry.")
	// Output:
	// retry.attempts{retry.class=http 4xx,retry.name=inventory,retry.verdict=stop} 1
	// retry.attempts{retry.class=http 503,retry.name=inventory,retry.verdict=retry} 1
	// retry.attempts{retry.name=inventory,retry.verdict=success} 1
	// retry.call.duration{retry.name=inventory,retry.outcome=permanent} count=1
	// retry.call.duration{retry.name=inventory,retry.outcome=success} count=1
	// retry.call.retries{retry.name=inventory,retry.outcome=success} count=1 sum=1
	// retry.call.retry_delay{retry.name=inventory,retry.outcome=success} count=1
}

// The Retrier's stages report through its observer: here its circuit
// breakers, one per call key, open after a failure and refuse the next call.
func ExampleNew_breakers() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.New("billing", otelretry.Config{MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = obs.Unregister() }()
	b, _ := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
	r, err := retry.New(retry.WithObserver(obs), retry.WithBreakers(b), retry.WithMaxAttempts(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := breaker.WithKey(context.Background(), breaker.Key{Target: "billing.internal", Operation: "charge"})
	for range 2 {
		_ = r.Do(ctx, func(context.Context) error { return errors.New("connection reset") })
	}
	printSeries(reader, "retry.breaker", "retry.call.duration")
	// Output:
	// retry.breaker.rejections{retry.breaker.name=billing.internal/charge,retry.breaker.reason=open,retry.name=billing} 1
	// retry.breaker.state{retry.breaker.name=billing.internal/charge,retry.breaker.state=closed,retry.name=billing} 0
	// retry.breaker.state{retry.breaker.name=billing.internal/charge,retry.breaker.state=half_open,retry.name=billing} 0
	// retry.breaker.state{retry.breaker.name=billing.internal/charge,retry.breaker.state=open,retry.name=billing} 1
	// retry.breaker.transitions{retry.breaker.from=closed,retry.breaker.name=billing.internal/charge,retry.breaker.state=open,retry.name=billing} 1
	// retry.call.duration{retry.name=billing,retry.outcome=breaker-open} count=1
	// retry.call.duration{retry.name=billing,retry.outcome=max-attempts} count=1
}

// A budget's state is read when the meter collects.
func ExampleObserver_Watch() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.New("search", otelretry.Config{MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = obs.Unregister() }()
	b, _ := budget.NewTokenBucket(budget.TokenBucketConfig{}) // 500 tokens, retries stop at 250
	th, _ := limit.NewThrottler(limit.ThrottlerConfig{})      // K = 2
	for _, v := range []any{b, th} {
		if err := obs.Watch(v); err != nil {
			fmt.Println(err)
			return
		}
	}
	b.Record(budget.Attempt{Outcome: budget.Failed})
	th.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	for range 3 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	}
	printSeries(reader, "retry.")
	// Output:
	// retry.budget.refusals{retry.name=search} 0
	// retry.budget.threshold{retry.name=search} 250
	// retry.budget.tokens{retry.name=search} 495
	// retry.limit.reject_probability{retry.name=search} 0.4
}

// With Config.AttemptSpans, Traced gives each attempt a child span of the
// caller's, and the caller's span gets an event per retry.
func ExampleObserver_Traced() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	obs, err := otelretry.New("inventory", otelretry.Config{TracerProvider: tp, AttemptSpans: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = obs.Unregister() }()
	r, _ := retry.New(retry.WithObserver(obs), retry.WithBackoff(backoff.Constant(0)))
	ctx, span := tp.Tracer("example").Start(context.Background(), "GET /stock")
	n := 0
	_ = r.Do(ctx, obs.Traced(func(context.Context) error {
		if n++; n == 1 {
			return &classify.StatusError{Code: 503}
		}
		return nil
	}))
	span.End()
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.Status().Code)
		for _, e := range s.Events() {
			fmt.Println("  event:", e.Name)
		}
	}
	// Output:
	// inventory attempt Error
	// inventory attempt Unset
	// GET /stock Unset
	//   event: retry.scheduled
}

// Every component reports to the same Observe: a dead letter queue's
// monitor (dlq.MonitorConfig.Observer) and the idempotency middleware
// (idempotency.WithObserver) as much as a Retrier. Here, the event the
// middleware sends for a request it replayed.
func ExampleObserver_Observe() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	obs, err := otelretry.New("orders", otelretry.Config{MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = obs.Unregister() }()
	var o observe.Observer = obs
	o.Observe(context.Background(), observe.Event{Kind: observe.Request,
		Detail: idempotency.Event{Outcome: "replayed", Status: 201, Key: "order-1"}})
	printSeries(reader, "retry.")
	// Output:
	// retry.idempotency.requests{retry.idempotency.outcome=replayed,retry.name=orders} 1
}

// readmeSnippet is the README's first otelretry snippet, compiled here (the
// root module's README test cannot import this nested module).
func readmeSnippet(ctx context.Context, op func(context.Context) error) error {
	obs, err := otelretry.New("payments", otelretry.Config{}) // the global meter provider; Config.MeterProvider for another
	if err != nil {
		return err
	}
	r, err := retry.New(retry.WithObserver(obs))
	if err != nil {
		return err
	}
	return r.Do(ctx, op)
}

var _ = readmeSnippet
