package otelretry

import (
	"errors"

	"github.com/retrykit/retry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every meter and tracer of this
// package: its import path, as OpenTelemetry asks.
const scope = "github.com/retrykit/retry/otelretry"

// config is what the options set. Zero fields mean the global providers
// (otel.GetMeterProvider, otel.GetTracerProvider), read when the constructor
// runs.
type config struct {
	mp           metric.MeterProvider
	tp           trace.TracerProvider
	attemptSpans bool
}

// Option configures every constructor of this package.
type Option interface {
	RetrierOption
	apply(*config) *retry.InvalidError
}

// RetrierOption configures NewRetrier. Every Option is one; WithTracerProvider
// and WithAttemptSpans are RetrierOptions only, since only a retry loop has
// attempts to trace.
type RetrierOption interface {
	applyRetrier(*config) *retry.InvalidError
}

type meterProvider struct{ mp metric.MeterProvider }

func (o meterProvider) applyRetrier(c *config) *retry.InvalidError { return o.apply(c) }

func (o meterProvider) apply(c *config) *retry.InvalidError {
	if o.mp == nil {
		return invalid("otelretry.WithMeterProvider", nil, "must not be nil")
	}
	c.mp = o.mp
	return nil
}

// WithMeterProvider makes the instruments with mp instead of the global
// meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option { return meterProvider{mp} }

type tracerProvider struct{ tp trace.TracerProvider }

func (o tracerProvider) applyRetrier(c *config) *retry.InvalidError {
	if o.tp == nil {
		return invalid("otelretry.WithTracerProvider", nil, "must not be nil")
	}
	c.tp = o.tp
	return nil
}

// WithTracerProvider starts the spans of Traced with tp instead of the global
// tracer provider. Events on the caller's span need no provider: they go to
// whatever span the context carries.
func WithTracerProvider(tp trace.TracerProvider) RetrierOption { return tracerProvider{tp} }

type attemptSpans struct{}

func (attemptSpans) applyRetrier(c *config) *retry.InvalidError {
	c.attemptSpans = true
	return nil
}

// WithAttemptSpans makes (*Retrier).Traced start a child span for every
// attempt; without it Traced returns the operation unchanged, and a call is
// traced only by the events on the caller's span.
func WithAttemptSpans() RetrierOption { return attemptSpans{} }

// configure applies opts over the global providers, or returns the first bad
// one.
func configure(opts []Option) (config, error) {
	c := config{mp: otel.GetMeterProvider(), tp: otel.GetTracerProvider()}
	for _, o := range opts {
		if o == nil {
			return c, invalid("otelretry.Option", nil, "must not be nil")
		}
		if err := o.apply(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

func configureRetrier(opts []RetrierOption) (config, error) {
	c := config{mp: otel.GetMeterProvider(), tp: otel.GetTracerProvider()}
	for _, o := range opts {
		if o == nil {
			return c, invalid("otelretry.RetrierOption", nil, "must not be nil")
		}
		if err := o.applyRetrier(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// checkName refuses an empty name: the name is what tells one component's
// series from another's.
func checkName(fn, name string) error {
	if name == "" {
		return invalid(fn, name, "the name must not be empty")
	}
	return nil
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) *retry.InvalidError {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
