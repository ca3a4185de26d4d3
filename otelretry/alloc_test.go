package otelretry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
)

func succeed(context.Context) error { return nil }

var errTransient = &transient{}

type transient struct{}

func (*transient) Error() string { return "transient" }

// onSDK returns a Retrier built with opts and observed on a real SDK meter
// provider (read by a ManualReader, as a Prometheus scrape would read it),
// with mopts for the provider, and with Config c.
func onSDK(tb testing.TB, c otelretry.Config, mopts []sdkmetric.Option, opts ...retry.Option) *retry.Retrier {
	tb.Helper()
	mp := sdkmetric.NewMeterProvider(append(mopts, sdkmetric.WithReader(sdkmetric.NewManualReader()))...)
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c.MeterProvider = mp
	o, err := otelretry.New("bench", c)
	require.NoError(tb, err)
	r, err := retry.New(append(opts, retry.WithObserver(o))...)
	require.NoError(tb, err)
	return r
}

// TestAFirstAttemptSuccessAllocatesNothing: every attribute set is built by
// New, and the counters are atomics, so that a call that succeeds at once
// costs one histogram measurement and no allocation, HTTP status classes
// included.
func TestAFirstAttemptSuccessAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	for _, c := range []otelretry.Config{{}, {HTTP: true}} {
		r := onSDK(t, c, nil)
		ctx := context.Background()
		allocs := testing.AllocsPerRun(1000, func() { _ = r.Do(ctx, succeed) })
		assert.Zero(t, allocs, "HTTP: %v", c.HTTP)
	}
}

// TestARetriedCallAllocatesNothingMore: the failures' counters and the
// call's three histograms cost no allocation either.
func TestARetriedCallAllocatesNothingMore(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	// Without a budget: every call fails twice, which a budget would soon
	// refuse (the calls would then fail, and allocate their *retry.Error).
	flaky := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(0)), retry.WithJitter(jitter.None{}), retry.WithoutBudget()}
	plain, err := retry.New(flaky...)
	require.NoError(t, err)
	observed := onSDK(t, otelretry.Config{HTTP: true}, nil, flaky...)
	ctx := context.Background()
	measure := func(r *retry.Retrier) float64 {
		return testing.AllocsPerRun(500, func() {
			n := 0
			_ = r.Do(ctx, func(context.Context) error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
		})
	}
	assert.Equal(t, measure(plain), measure(observed))
}

// BenchmarkObserver is the cost of metrics: the same calls without an
// observer, with one that does nothing (the loop's cost of having an
// observer at all), and with an Observer on the real SDK, with the SDK's
// defaults and with exemplars off. sdk-record is the floor: one histogram
// measurement with a precomputed set of two attributes, which is what a
// first-attempt success records.
func BenchmarkObserver(b *testing.B) {
	ctx := context.Background()
	nop := observe.Func(func(context.Context, observe.Event) {})
	noExemplars := []sdkmetric.Option{sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter)}
	must := func(r *retry.Retrier, err error) *retry.Retrier {
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("sdk-record", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		h, err := mp.Meter("bench").Float64Histogram("h", metric.WithExplicitBucketBoundaries(otelretry.LatencyBuckets...))
		if err != nil {
			b.Fatal(err)
		}
		opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(
			attribute.String("retry.name", "bench"), attribute.String("retry.outcome", "success")))}
		b.ReportAllocs()
		for b.Loop() {
			h.Record(ctx, 0.001, opts...)
		}
	})
	flaky := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(0)), retry.WithJitter(jitter.None{}), retry.WithoutBudget()}
	for _, c := range []struct {
		name  string
		r     *retry.Retrier
		flaky bool
	}{
		{"success/plain", must(retry.New()), false},
		{"success/nop", must(retry.New(retry.WithObserver(nop))), false},
		{"success/otel", onSDK(b, otelretry.Config{}, nil), false},
		{"success/otel-http", onSDK(b, otelretry.Config{HTTP: true}, nil), false},
		{"success/otel-noexemplars", onSDK(b, otelretry.Config{}, noExemplars), false},
		{"tworetries/plain", must(retry.New(flaky...)), true},
		{"tworetries/nop", must(retry.New(append(flaky, retry.WithObserver(nop))...)), true},
		{"tworetries/otel", onSDK(b, otelretry.Config{}, nil, flaky...), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.flaky {
					_ = c.r.Do(ctx, succeed)
					continue
				}
				n := 0
				err := c.r.Do(ctx, func(context.Context) error {
					if n++; n <= 2 {
						return errTransient
					}
					return nil
				})
				if errors.Is(err, retry.ErrInvalid) {
					b.Fatal(err)
				}
			}
		})
	}
}
