package bench

import (
	"context"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
)

// otelRetrier returns a Retrier built with opts and an otelretry Observer
// recording on a real SDK meter provider (read by a ManualReader, as a
// Prometheus scrape would read it).
func otelRetrier(b *testing.B, opts ...retry.Option) *retry.Retrier {
	return otelRetrierOn(b, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())), opts...)
}

// otelRetrierOn is otelRetrier on mp.
func otelRetrierOn(b *testing.B, mp *sdkmetric.MeterProvider, opts ...retry.Option) *retry.Retrier {
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	o, err := otelretry.New("bench", otelretry.Config{MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	return must(retry.New(append(opts, retry.WithObserver(o))...))
}

// nopObserver hears every event and does nothing with it.
var nopObserver = observe.Func(func(context.Context, observe.Event) {})

// BenchmarkOTel is the cost of metrics: the same calls without an observer,
// with an observer that does nothing (the loop's cost of having an observer
// at all), and with otelretry's Observer on the real SDK. sdk-record is the
// floor: one
// histogram measurement on the SDK with a precomputed set of two attributes,
// which is what a first-attempt success records.
func BenchmarkOTel(b *testing.B) {
	ctx := context.Background()
	b.Run("sdk-record", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		h, err := mp.Meter("bench").Float64Histogram("h", metric.WithExplicitBucketBoundaries(otelretry.LatencyBuckets...))
		if err != nil {
			b.Fatal(err)
		}
		opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("retry.name", "bench"), attribute.String("retry.outcome", "success")))}
		b.ReportAllocs()
		for b.Loop() {
			h.Record(ctx, 0.001, opts...)
		}
	})
	flaky := []retry.Option{retry.WithMaxAttempts(attempts), retry.WithBackoff(backoff.Constant(flakyDelay)), retry.WithJitter(jitter.None{}),
		retry.WithoutBudget()} // every call fails twice: the default budget would refuse them
	for _, c := range []struct {
		name string
		r    *retry.Retrier
	}{
		{"success/plain", must(retry.New())},
		{"success/nopobserver", must(retry.New(retry.WithObserver(nopObserver)))},
		{"success/otel", otelRetrier(b)},
		// The SDK's default exemplar filter looks for a sampled span in every
		// measurement's context; an application that does not use exemplars
		// can turn them off.
		{"success/otel-noexemplars", otelRetrierOn(b, sdkmetric.NewMeterProvider(
			sdkmetric.WithReader(sdkmetric.NewManualReader()), sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter)))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.r.Do(ctx, succeed)
			}
		})
	}
	for _, c := range []struct {
		name string
		r    *retry.Retrier
	}{
		{"tworetries/plain", must(retry.New(flaky...))},
		{"tworetries/nopobserver", must(retry.New(append(flaky, retry.WithObserver(nopObserver))...))},
		{"tworetries/otel", otelRetrier(b, flaky...)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				_ = c.r.Do(ctx, func(context.Context) error {
					if n++; n <= 2 {
						return errTransient
					}
					return nil
				})
			}
		})
	}
}
