package otelretry

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// counts are the Observer's counters of a call's loop, kept in atomics and
// read by the meter provider when it collects (report): a counter's Add on
// the real SDK costs about 150 ns (it normalises the attribute set on every
// measurement), an atomic add a few. It also holds the attribute sets of
// the call's histograms, built by New.
type counts struct {
	byOutcome       []recordOpts // by index in outcomes
	plain           recordOpts   // the name alone
	success         counted
	failed          [][2]counted // by class, then [retry, stop]
	slept, returned counted
	hedges          counted
	skipped         []counted // by the outcome a stage's refusal would be
	http            [len(statusClasses)]counted
}

// counted is one series: a count and its attributes.
type counted struct {
	n    atomic.Int64
	opts obsOpts
}

func (c *counts) init(name attribute.KeyValue) {
	c.byOutcome = make([]recordOpts, len(outcomes))
	c.skipped = make([]counted, len(outcomes))
	for i, v := range outcomes {
		c.byOutcome[i] = newRecordOpts(name, keyOutcome.String(v))
		c.skipped[i].opts = newObsOpts(name, keySkippedBy.String(v))
	}
	c.plain = newRecordOpts(name)
	c.success.opts = newObsOpts(name, keyVerdict.String(success))
	c.failed = make([][2]counted, len(classes))
	for i, cl := range classes {
		c.failed[i][0].opts = newObsOpts(name, keyClass.String(cl), keyVerdict.String(verdictRetry))
		c.failed[i][1].opts = newObsOpts(name, keyClass.String(cl), keyVerdict.String(verdictStop))
	}
	c.slept.opts = newObsOpts(name, keyRetryAfter.String(retryAfterSlept))
	c.returned.opts = newObsOpts(name, keyRetryAfter.String(retryAfterReturned))
	c.hedges.opts = newObsOpts(name)
	for i, s := range statusClasses {
		c.http[i].opts = newObsOpts(name, keyStatusClass.String(s))
	}
}

// report reports every series counted so far; a series never counted is
// not reported, so that a class that never happened adds no series.
func (c *counts) report(in *instruments, obs metric.Observer) {
	each := func(inst metric.Int64Observable, c *counted) {
		if n := c.n.Load(); n > 0 {
			obs.ObserveInt64(inst, n, c.opts...)
		}
	}
	each(in.attempts, &c.success)
	for i := range c.failed {
		each(in.attempts, &c.failed[i][0])
		each(in.attempts, &c.failed[i][1])
	}
	each(in.retryAfter, &c.slept)
	each(in.retryAfter, &c.returned)
	each(in.hedges, &c.hedges)
	for i := range c.skipped {
		each(in.skipped, &c.skipped[i])
	}
	for i := range c.http {
		each(in.httpAttempts, &c.http[i])
	}
}

// attemptDone records an attempt's end: with Config.HTTP its status class,
// and, for a success, the call it ends. Its attempts are e.Started: in a
// hedged call, the winner need not be the last attempt started (the loop
// reports only the winner's success, see observe.AttemptDone). A failure is
// counted by the event that acts on it: RetryScheduled, or GaveUp.
func (o *Observer) attemptDone(ctx context.Context, e observe.Event) {
	if o.http {
		o.counts.http[statusClass(e.Err)].n.Add(1)
	}
	if e.Err == nil {
		o.counts.success.n.Add(1)
		o.ended(ctx, iSuccess, max(e.Attempt, e.Started), e.Waited, e.Elapsed)
	}
}

// ended records a call that ended with the outcome at index outcome.
func (o *Observer) ended(ctx context.Context, outcome, attempts int, waited, elapsed time.Duration) {
	opts := o.counts.byOutcome[outcome]
	o.inst.duration.Record(ctx, elapsed.Seconds(), opts...)
	if attempts > 1 { // see the package documentation: a call without retries costs one measurement
		o.inst.retries.Record(ctx, int64(attempts-1), opts...)
		o.inst.delay.Record(ctx, waited.Seconds(), opts...)
	}
}

// scheduled records a failed attempt the loop retries.
func (o *Observer) scheduled(ctx context.Context, e observe.Event) {
	o.failed(e.Decision)
	if e.Decision.RetryAfter > 0 {
		o.counts.slept.n.Add(1)
	}
	if s, ok := span(ctx); ok {
		s.AddEvent("retry.scheduled", trace.WithAttributes(o.nameAttr, keyAttempt.Int(e.Attempt),
			keyClass.String(classes[classOf(e.Decision.Reason)]), keyDelay.Float64(e.Delay.Seconds())))
	}
}

func (o *Observer) failed(d classify.Decision) {
	v := 0
	if d.Verdict != classify.Retry {
		v = 1
	}
	o.counts.failed[classOf(d.Reason)][v].n.Add(1)
}

// gaveUp records a call that failed, and its last attempt unless a
// RetryScheduled already did (the call stopped during or after its wait:
// cancelled, or refused by a stage before its next attempt). A call the
// breaker refused is counted by retry.breaker.rejections too, and one that
// stopped before its first attempt because its key was cooling down by
// retry.cooldown.local_failures.
func (o *Observer) gaveUp(ctx context.Context, e observe.Event) {
	if re, ok := e.Err.(*retry.Error); ok && re != nil {
		if n := len(re.Failures); n > 0 && re.Failures[n-1].Delay == 0 {
			o.failed(e.Decision)
		}
		if re.RetryAfter > 0 {
			o.counts.returned.n.Add(1)
		}
	}
	switch {
	case e.Stop == policy.StopOpen:
		o.rejected(ctx, e.Err)
	case e.Err != nil && errors.Is(e.Err, breaker.ErrCooldown):
		o.inst.localFailures.Add(ctx, 1, o.breakers.plain...)
	}
	outcome := outcomeOf(e.Stop)
	o.ended(ctx, outcome, max(e.Attempt, e.Started), e.Waited, e.Elapsed)
	if s, ok := span(ctx); ok {
		s.AddEvent("retry.gave_up", trace.WithAttributes(o.nameAttr, keyAttempt.Int(e.Attempt),
			keyOutcome.String(outcomes[outcome]), keyClass.String(classes[classOf(e.Decision.Reason)])))
	}
}

// hedged records a hedge: counted here on its own, and with the call's
// retries when the call ends.
func (o *Observer) hedged(ctx context.Context, e observe.Event) {
	o.counts.hedges.n.Add(1)
	if s, ok := span(ctx); ok {
		s.AddEvent("retry.hedge_started", trace.WithAttributes(o.nameAttr, keyAttempt.Int(e.Attempt),
			keyDelay.Float64(e.Delay.Seconds())))
	}
}

// skipped records a hedge that a stage refused, by the outcome a call that
// stage stopped would have: budget, limited, breaker-open, or wait-too-long
// for a key cooling down.
func (o *Observer) skipped(ctx context.Context, e observe.Event) {
	i := outcomeOf(e.Stop)
	o.counts.skipped[i].n.Add(1)
	if e.Stop == policy.StopOpen {
		o.rejected(ctx, nil)
	}
	if s, ok := span(ctx); ok {
		s.AddEvent("retry.hedge_skipped", trace.WithAttributes(o.nameAttr, keyAttempt.Int(e.Attempt),
			keySkippedBy.String(outcomes[i])))
	}
}

// waited records a hold before an attempt: the limiter's, or a cooldown's.
func (o *Observer) waited(ctx context.Context, e observe.Event) {
	h, name := o.inst.limitWait, "retry.limiter_waited"
	if e.Kind == observe.CooldownWaited {
		h, name = o.inst.cooldownWait, "retry.cooldown_waited"
	}
	h.Record(ctx, e.Delay.Seconds(), o.counts.plain...)
	if s, ok := span(ctx); ok {
		s.AddEvent(name, trace.WithAttributes(o.nameAttr, keyAttempt.Int(e.Attempt), keyDelay.Float64(e.Delay.Seconds())))
	}
}
