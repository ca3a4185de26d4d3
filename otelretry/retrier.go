package otelretry

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the retry loop's metrics.
const (
	KeyName       = attribute.Key("retry.name")    // the name given to NewRetrier
	KeyOutcome    = attribute.Key("retry.outcome") // Outcome… constants
	KeyClass      = attribute.Key("retry.class")   // a classification reason, or ClassOther
	KeyVerdict    = attribute.Key("retry.verdict") // Verdict… constants
	KeyRetryAfter = attribute.Key("retry.retry_after.action")
	keyAttempt    = attribute.Key("retry.attempt")
	keyDelay      = attribute.Key("retry.delay")
)

// The values of KeyRetryAfter: a server's Retry-After the loop slept, or one
// it returned to the caller (retry.Error.RetryAfter) because it was longer
// than the policy's MaxDelay or the context's deadline allowed.
const (
	RetryAfterSlept    = "slept"
	RetryAfterReturned = "returned"
)

// Buckets of gRFC A66, which gRFC A96's per-call retry metrics use.
var (
	// LatencyBuckets are the boundaries, in seconds, of the duration
	// histograms.
	LatencyBuckets = []float64{0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002,
		0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03,
		0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65,
		0.8, 1, 2, 5, 10, 20, 50, 100}
	// CountBuckets are the boundaries of the count histograms.
	CountBuckets = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
		16384, 32768, 65536}
)

// Retrier observes the calls of the retry loops whose hook it is: pass
// its Hook to retry.WithHook. One Retrier may serve several loops that are
// to be counted together. It is safe for concurrent use.
//
// Every measurement's attributes are built by NewRetrier, once: a call
// records its figures without building any.
type Retrier struct {
	name       string
	duration   metric.Float64Histogram
	delay      metric.Float64Histogram
	retries    metric.Int64Histogram
	attempts   metric.Int64ObservableCounter
	retryAfter metric.Int64ObservableCounter
	hedges     metric.Int64ObservableCounter
	byOutcome  [len(outcomes)]recordOpts
	classIndex map[string]int // a failure's index in counts.failed, by reason
	counts     counts
	reg        metric.Registration
	nameAttr   attribute.KeyValue
	tracer     trace.Tracer // nil: no span per attempt
}

// NewRetrier makes the instruments of the retry loops named name (the
// retry.name attribute of their series): "payments", "llm-completions".
// It returns a *retry.InvalidError for an empty name or a bad option, and the
// meter provider's error if it refuses an instrument.
func NewRetrier(name string, opts ...RetrierOption) (*Retrier, error) {
	if err := checkName("otelretry.NewRetrier", name); err != nil {
		return nil, err
	}
	c, err := configureRetrier(opts)
	if err != nil {
		return nil, err
	}
	o := &Retrier{name: name, nameAttr: KeyName.String(name)}
	o.precompute() // before the callback is registered: a collection may run at once
	if err := o.instruments(c.mp.Meter(scope)); err != nil {
		return nil, err
	}
	if c.attemptSpans {
		o.tracer = c.tp.Tracer(scope)
	}
	return o, nil
}

func (o *Retrier) instruments(m metric.Meter) error {
	var errs [6]error
	o.duration, errs[0] = m.Float64Histogram("retry.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of a retried call, from just before its first attempt to its end, waits included."),
		metric.WithExplicitBucketBoundaries(LatencyBuckets...))
	o.retries, errs[1] = m.Int64Histogram("retry.call.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts after the first, retries and hedges, of a call that made more than one; a call of one attempt is counted by retry.call.duration alone."),
		metric.WithExplicitBucketBoundaries(CountBuckets...))
	o.delay, errs[2] = m.Float64Histogram("retry.call.retry_delay", metric.WithUnit("s"),
		metric.WithDescription("Time a call that retried spent with no attempt running, between attempts."),
		metric.WithExplicitBucketBoundaries(LatencyBuckets...))
	o.attempts, errs[3] = m.Int64ObservableCounter("retry.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts made, by verdict and, for a failure, by classification reason."))
	o.retryAfter, errs[4] = m.Int64ObservableCounter("retry.retry_after", metric.WithUnit("{retry_after}"),
		metric.WithDescription("Server-requested waits (Retry-After): slept before a retry, or returned to the caller."))
	o.hedges, errs[5] = m.Int64ObservableCounter("retry.hedges", metric.WithUnit("{hedge}"),
		metric.WithDescription("Hedges: attempts started alongside one still running because it had not finished after the hedging delay."))
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	reg, err := m.RegisterCallback(o.observe, o.attempts, o.retryAfter, o.hedges)
	o.reg = reg
	return err
}

// precompute builds every attribute set a measurement can carry.
func (o *Retrier) precompute() {
	for i, v := range outcomes {
		o.byOutcome[i] = newRecordOpts(o.nameAttr, KeyOutcome.String(v))
	}
	o.classIndex = make(map[string]int, len(classes))
	for i, c := range classes {
		o.classIndex[c] = i
	}
	o.counts.init(o.nameAttr)
}

// Name returns the name given to NewRetrier; "" for a nil Retrier.
func (o *Retrier) Name() string {
	if o == nil {
		return ""
	}
	return o.name
}

// Hook records e. Pass it to retry.WithHook. A loop that defers to an
// enclosing Outermost loop (retry.Deferred) is not observed: its one attempt
// is the enclosing loop's, which counts it. A nil or zero Retrier records
// nothing.
func (o *Retrier) Hook(ctx context.Context, e retry.Event) {
	if o == nil || o.duration == nil || ctx == nil || retry.Deferred(ctx) { // nil or zero: not made by NewRetrier
		return
	}
	switch e.Kind {
	case retry.AttemptDone:
		if e.Err == nil {
			o.succeeded(ctx, e)
		}
	case retry.RetryScheduled:
		o.scheduled(ctx, e)
	case retry.GaveUp:
		o.gaveUp(ctx, e)
	case retry.HedgeStarted:
		o.hedged(ctx, e)
	}
}

// succeeded records a call whose attempt e.Attempt succeeded. Its attempts
// are e.Started: in a hedged call, the winner need not be the last attempt
// started (the loop reports only the winner's success, see
// retry.AttemptDone).
func (o *Retrier) succeeded(ctx context.Context, e retry.Event) {
	o.counts.success.n.Add(1)
	o.call(ctx, iSuccess, max(e.Attempt, e.Started), e.Waited, e.Elapsed)
}

func (o *Retrier) call(ctx context.Context, outcome, attempts int, waited, elapsed time.Duration) {
	opts := o.byOutcome[outcome]
	o.duration.Record(ctx, elapsed.Seconds(), opts...)
	if attempts > 1 { // see the package documentation: a call without retries costs one measurement
		o.retries.Record(ctx, int64(attempts-1), opts...)
		o.delay.Record(ctx, waited.Seconds(), opts...)
	}
}

// scheduled records a failed attempt the loop retries.
func (o *Retrier) scheduled(ctx context.Context, e retry.Event) {
	o.failed(e.Decision)
	if e.Decision.RetryAfter > 0 {
		o.counts.slept.n.Add(1)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("retry.scheduled", trace.WithAttributes(
			o.nameAttr, keyAttempt.Int(e.Attempt), KeyClass.String(o.class(e.Decision.Reason)),
			keyDelay.Float64(e.Delay.Seconds())))
	}
}

// hedged records a hedge: counted here on its own, and with the call's
// retries when the call ends.
func (o *Retrier) hedged(ctx context.Context, e retry.Event) {
	o.counts.hedges.n.Add(1)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("retry.hedge_started", trace.WithAttributes(
			o.nameAttr, keyAttempt.Int(e.Attempt), keyDelay.Float64(e.Delay.Seconds())))
	}
}

func (o *Retrier) failed(d classify.Decision) {
	v := 0
	if d.Verdict != classify.Retry {
		v = 1
	}
	o.counts.failed[o.classOf(d.Reason)][v].n.Add(1)
}

// classOf returns the index of reason in classes, ClassOther's if it is
// not there.
func (o *Retrier) classOf(reason string) int {
	if i, ok := o.classIndex[reason]; ok {
		return i
	}
	return len(classes) - 1
}

func (o *Retrier) class(reason string) string { return classes[o.classOf(reason)] }

// gaveUp records a call that failed, and its last attempt unless a
// RetryScheduled already did (the caller cancelled the call during a wait).
func (o *Retrier) gaveUp(ctx context.Context, e retry.Event) {
	re, _ := e.Err.(*retry.Error)
	if re == nil { // not the loop's own event
		return
	}
	if n := len(re.Failures); n > 0 && re.Failures[n-1].Delay == 0 {
		o.failed(e.Decision)
	}
	if re.RetryAfter > 0 {
		o.counts.returned.n.Add(1)
	}
	outcome := outcomeOf(ctx, re.Reason)
	o.call(ctx, outcome, max(e.Attempt, e.Started), e.Waited, e.Elapsed)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("retry.gave_up", trace.WithAttributes(
			o.nameAttr, keyAttempt.Int(e.Attempt), KeyOutcome.String(outcomes[outcome]),
			KeyClass.String(o.class(e.Decision.Reason))))
	}
}

// Traced returns op with a child span around each attempt, named
// "<name> attempt", when the Retrier was made WithAttemptSpans; op itself
// otherwise. Give the loop the returned function: r.Do(ctx, o.Traced(op)).
// A failed attempt's span has status Error and its error's Go type (never
// its text) as the error.type attribute.
func (o *Retrier) Traced(op func(context.Context) error) func(context.Context) error {
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

// counts are the Retrier's counters, kept in atomics and read by the meter
// provider when it collects (observe): a counter's Add on the real SDK costs
// about 150 ns (it normalises the attribute set on every measurement), an
// atomic add a few.
type counts struct {
	success         counted
	failed          [len(classes)][2]counted // by class, then [retry, stop]
	slept, returned counted
	hedges          counted
}

// counted is one series: a count and its attributes.
type counted struct {
	n    atomic.Int64
	opts obsOpts
}

func (c *counts) init(name attribute.KeyValue) {
	c.success.opts = newObsOpts(name, KeyVerdict.String(VerdictSuccess))
	for i, cl := range classes {
		c.failed[i][0].opts = newObsOpts(name, KeyClass.String(cl), KeyVerdict.String(VerdictRetry))
		c.failed[i][1].opts = newObsOpts(name, KeyClass.String(cl), KeyVerdict.String(VerdictStop))
	}
	c.slept.opts = newObsOpts(name, KeyRetryAfter.String(RetryAfterSlept))
	c.returned.opts = newObsOpts(name, KeyRetryAfter.String(RetryAfterReturned))
	c.hedges.opts = newObsOpts(name)
}

// observe reports every series counted so far; a series never counted is
// not reported, so that a class that never happened adds no series.
func (o *Retrier) observe(_ context.Context, obs metric.Observer) error {
	report := func(inst metric.Int64Observable, c *counted) {
		if n := c.n.Load(); n > 0 {
			obs.ObserveInt64(inst, n, c.opts...)
		}
	}
	report(o.attempts, &o.counts.success)
	for i := range o.counts.failed {
		report(o.attempts, &o.counts.failed[i][0])
		report(o.attempts, &o.counts.failed[i][1])
	}
	report(o.retryAfter, &o.counts.slept)
	report(o.retryAfter, &o.counts.returned)
	report(o.hedges, &o.counts.hedges)
	return nil
}

// Unregister stops reporting the Retrier's counters (retry.attempts,
// retry.retry_after and retry.hedges) to the meter provider; its histograms are recorded as
// long as its hook runs.
func (o *Retrier) Unregister() error {
	if o == nil || o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}
