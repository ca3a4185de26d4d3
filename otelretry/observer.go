package otelretry

import (
	"context"
	"errors"
	"reflect"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/observe"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every meter and tracer of this
// package: its import path, as OpenTelemetry asks.
const scope = "github.com/retrykit/retry/otelretry"

// Config configures New. Its zero value reports to the global providers,
// with no span per attempt and no HTTP status classes.
type Config struct {
	// MeterProvider makes the instruments; nil means otel.GetMeterProvider(),
	// read when New runs.
	MeterProvider metric.MeterProvider
	// TracerProvider starts the attempt spans of Traced; nil means
	// otel.GetTracerProvider(), read when New runs. Events on the caller's
	// span need no provider: they go to whatever span the context carries.
	TracerProvider trace.TracerProvider
	// AttemptSpans makes Traced start a child span for every attempt;
	// without it Traced returns the operation unchanged, and a call is
	// traced only by the events on the caller's span.
	AttemptSpans bool
	// HTTP says that the calls observed are HTTP requests (an httpretry
	// client's Retrier): every attempt is then also counted by
	// retry.http.attempts with its status class — 2xx for a success, the
	// class of the status a failure carries, error for a failure without an
	// answer. Without it, no attempt is assumed to be HTTP.
	HTTP bool
}

// Observer reports everything the library's components tell it as
// OpenTelemetry metrics and trace events (see the package documentation for
// the metrics, their attributes and how to wire it). Make it with New; one
// Observer may serve several Retriers, queues and middlewares, whose
// series it then counts together under its name. It is safe for concurrent
// use.
type Observer struct {
	name     string
	nameAttr attribute.KeyValue
	tracer   trace.Tracer // nil: no span per attempt
	http     bool
	inst     instruments
	counts   counts
	breakers keyedBreakers
	dlq      queue
	server   []addOpts // the idempotency middleware's outcomes
	watched  watched
	reg      metric.Registration
}

// New makes the instruments of the components named name (the retry.name
// attribute of every series): "payments", "llm-completions". It returns a
// *retry.InvalidError for an empty name, and the meter provider's error if
// it refuses an instrument.
func New(name string, c Config) (*Observer, error) {
	if name == "" {
		return nil, invalid("otelretry.New", name, "the name must not be empty")
	}
	mp, tp := c.MeterProvider, c.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	o := &Observer{name: name, nameAttr: keyName.String(name), http: c.HTTP}
	o.precompute() // before the callback is registered: a collection may run at once
	m := mp.Meter(scope)
	if err := o.inst.make(m); err != nil {
		return nil, err
	}
	reg, err := m.RegisterCallback(o.collect, o.inst.observables()...)
	if err != nil {
		return nil, err
	}
	o.reg = reg
	if c.AttemptSpans {
		o.tracer = tp.Tracer(scope)
	}
	return o, nil
}

// precompute builds every attribute set a measurement of a fixed set can
// carry.
func (o *Observer) precompute() {
	o.counts.init(o.nameAttr)
	o.breakers.init(o.nameAttr)
	o.dlq.init(o.nameAttr)
	o.server = newServerOpts(o.nameAttr)
	o.watched.opts = newObsOpts(o.nameAttr)
}

// Observe records e; it is the observe.Observer that every component
// reports to. Events of a retry loop that defers to an enclosing Outermost
// loop (e.Deferred) count no call, attempt or hedge: the enclosing loop's
// events count them. A nil or zero Observer, or a nil context, records
// nothing.
func (o *Observer) Observe(ctx context.Context, e observe.Event) {
	if o == nil || o.inst.duration == nil || ctx == nil { // nil or zero: not made by New
		return
	}
	if e.Deferred && countsCall(e.Kind) {
		return
	}
	switch e.Kind {
	case observe.AttemptDone:
		o.attemptDone(ctx, e)
	case observe.RetryScheduled:
		o.scheduled(ctx, e)
	case observe.GaveUp:
		o.gaveUp(ctx, e)
	case observe.HedgeStarted:
		o.hedged(ctx, e)
	case observe.HedgeSkipped:
		o.skipped(ctx, e)
	case observe.LimiterWaited, observe.CooldownWaited:
		o.waited(ctx, e)
	case observe.BreakerChanged, observe.CooldownStarted:
		o.breaker(ctx, e)
	case observe.LetterAdded, observe.LetterReplayed, observe.QueueCounted:
		o.letters(ctx, e)
	case observe.Request:
		o.request(ctx, e)
	}
}

// countsCall reports whether an event of kind k counts a call, an attempt
// or a hedge: those a deferred loop's events must not count twice. A
// deferred loop's waits are its own, and counted.
func countsCall(k observe.Kind) bool {
	switch k {
	case observe.AttemptDone, observe.RetryScheduled, observe.GaveUp, observe.HedgeStarted, observe.HedgeSkipped:
		return true
	}
	return false
}

// Traced returns op with a child span around each attempt, named
// "<name> attempt", when the Observer was made with Config.AttemptSpans; op
// itself otherwise. Give the loop the returned function:
// r.Do(ctx, o.Traced(op)). A failed attempt's span has status Error and its
// error's Go type (never its text) as the error.type attribute.
func (o *Observer) Traced(op func(context.Context) error) func(context.Context) error {
	if o == nil || o.tracer == nil || op == nil {
		return op
	}
	spanName := o.name + " attempt"
	return func(ctx context.Context) error {
		ctx, span := o.tracer.Start(ctx, spanName, trace.WithAttributes(o.nameAttr))
		defer span.End()
		err := op(ctx)
		if err != nil {
			span.SetStatus(codes.Error, "")
			span.SetAttributes(errorType(err))
		}
		return err
	}
}

// errorType is the error.type attribute of OpenTelemetry's semantic
// conventions: the Go type of err, a value from a set the code bounds.
func errorType(err error) attribute.KeyValue {
	return attribute.String("error.type", reflect.TypeOf(err).String())
}

// Unregister stops reporting the series read at collection — the counters
// kept in atomics (retry.attempts, retry.retry_after, retry.hedges,
// retry.hedges.skipped, retry.http.attempts) and every gauge; the other
// instruments are recorded as long as events arrive. A nil or zero Observer
// has nothing to unregister.
func (o *Observer) Unregister() error {
	if o == nil || o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}

// span returns the caller's span if it records.
func span(ctx context.Context) (trace.Span, bool) {
	s := trace.SpanFromContext(ctx)
	return s, s.IsRecording()
}

// invalid returns the *retry.InvalidError for a bad argument:
// "name(value): reason".
func invalid(name string, value any, reason string) *retry.InvalidError {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
