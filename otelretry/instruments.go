package otelretry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// Buckets of gRFC A66, which gRFC A96's per-call retry metrics use.
var (
	// LatencyBuckets are the boundaries, in seconds, of the duration
	// histograms.
	LatencyBuckets = []float64{0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002,
		0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03,
		0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65,
		0.8, 1, 2, 5, 10, 20, 50, 100}
	// CountBuckets are the boundaries of the per-call count histograms
	// (retry.call.retries).
	CountBuckets = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
		16384, 32768, 65536}
)

// instruments are every instrument of an Observer, made by New. Those read
// at collection (observables) are reported by one callback, collect.
type instruments struct {
	// A call's, recorded when it ends.
	duration, delay metric.Float64Histogram
	retries         metric.Int64Histogram
	// Holds before an attempt.
	limitWait, cooldownWait metric.Float64Histogram
	// Counted in atomics, read at collection.
	attempts, retryAfter, hedges, skipped, httpAttempts metric.Int64ObservableCounter
	// Breakers and cooldowns.
	breakerState                           metric.Int64ObservableGauge
	transitions, rejections                metric.Int64Counter
	cooldowns, localFailures               metric.Int64Counter
	cooldownKeys                           metric.Int64ObservableGauge
	letters, replays, requests, storeFails metric.Int64Counter
	depth                                  metric.Int64ObservableGauge
	// Watched objects, read at collection.
	tokens, threshold, ratio, rate, reject metric.Float64ObservableGauge
	available                              metric.Int64ObservableGauge
	refusals                               metric.Int64ObservableCounter
}

// maker makes instruments on m and keeps the first error.
type maker struct {
	m    metric.Meter
	errs []error
}

func (k *maker) keep(err error) { k.errs = append(k.errs, err) }

func (k *maker) seconds(name, desc string) metric.Float64Histogram {
	h, err := k.m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(LatencyBuckets...))
	k.keep(err)
	return h
}

func (k *maker) counter(name, unit, desc string) metric.Int64Counter {
	c, err := k.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	k.keep(err)
	return c
}

func (k *maker) observed(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := k.m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	k.keep(err)
	return c
}

func (k *maker) gauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := k.m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	k.keep(err)
	return g
}

func (k *maker) fgauge(name, unit, desc string) metric.Float64ObservableGauge {
	g, err := k.m.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	k.keep(err)
	return g
}

func (in *instruments) make(m metric.Meter) error {
	k := &maker{m: m}
	in.calls(k)
	in.components(k)
	in.gauges(k)
	return errors.Join(k.errs...)
}

func (in *instruments) calls(k *maker) {
	in.duration = k.seconds("retry.call.duration",
		"Duration of a retried call, from just before its first attempt to its end, waits included.")
	var err error
	in.retries, err = k.m.Int64Histogram("retry.call.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts after the first, retries and hedges, of a call that made more than one; a call of one attempt is counted by retry.call.duration alone."),
		metric.WithExplicitBucketBoundaries(CountBuckets...))
	k.keep(err)
	in.delay = k.seconds("retry.call.retry_delay",
		"Time a call that retried spent with no attempt running, between attempts.")
	in.attempts = k.observed("retry.attempts", "{attempt}",
		"Attempts made, by verdict and, for a failure, by classification reason.")
	in.retryAfter = k.observed("retry.retry_after", "{retry_after}",
		"Server-requested waits (Retry-After): slept before a retry, or returned to the caller.")
	in.hedges = k.observed("retry.hedges", "{hedge}",
		"Hedges: attempts started alongside one still running because it had not finished after the hedging delay.")
	in.skipped = k.observed("retry.hedges.skipped", "{hedge}",
		"Hedges that were due and not sent, by the stage that refused them.")
	in.httpAttempts = k.observed("retry.http.attempts", "{attempt}",
		"HTTP attempts, by status class.")
	in.limitWait = k.seconds("retry.limit.wait.duration",
		"Time the client-side rate limiter held an attempt before letting it go.")
	in.cooldownWait = k.seconds("retry.cooldown.wait.duration",
		"Time an attempt waited for its key's cooldown to end.")
}

func (in *instruments) components(k *maker) {
	in.breakerState = k.gauge("retry.breaker.state", "{state}",
		"1 for the state the circuit breaker is in, 0 for the others.")
	in.transitions = k.counter("retry.breaker.transitions", "{transition}",
		"Changes of the circuit breaker's state.")
	in.rejections = k.counter("retry.breaker.rejections", "{call}",
		"Calls and hedges the circuit breaker refused: nothing was sent.")
	in.cooldowns = k.counter("retry.cooldown.started", "{cooldown}",
		"Cooldowns started by a 503 (or gRPC UNAVAILABLE) with Retry-After.")
	in.localFailures = k.counter("retry.cooldown.local_failures", "{call}",
		"Calls that failed locally, sending nothing, because their key was cooling down.")
	in.cooldownKeys = k.gauge("retry.cooldown.keys", "{key}",
		"Keys cooling down after a 503 with Retry-After.")
	in.letters = k.counter("retry.dlq.letters", "{letter}", "Letters recorded in the dead letter queue.")
	in.replays = k.counter("retry.dlq.replays", "{letter}", "Replays of letters, by result.")
	in.depth = k.gauge("retry.dlq.depth", "{letter}", "Letters in the dead letter queue, as last counted.")
	in.requests = k.counter("retry.idempotency.requests", "{request}",
		"Requests the idempotency middleware guarded, by what it did, and outcomes idempotency.Do or Once could not record after returning (executed).")
	in.storeFails = k.counter("retry.idempotency.store_errors", "{error}",
		"Requests during which the idempotency store failed.")
}

func (in *instruments) gauges(k *maker) {
	in.tokens = k.fgauge("retry.budget.tokens", "{token}",
		"Tokens in the retry budget's bucket: retries stop at or below the threshold.")
	in.threshold = k.fgauge("retry.budget.threshold", "{token}",
		"The level of tokens at or below which the budget refuses retries.")
	in.ratio = k.fgauge("retry.budget.ratio", "1",
		"Retries allowed in the budget's window, per first attempt in it.")
	in.available = k.gauge("retry.budget.available", "{retry}", "Retries the budget still allows in its window.")
	in.refusals = k.observed("retry.budget.refusals", "{retry}", "Retries the budget refused since it was made.")
	in.rate = k.fgauge("retry.limit.rate", "{request}/s",
		"The rate at which the client-side limiter lets attempts through; no point while it does not limit.")
	in.reject = k.fgauge("retry.limit.reject_probability", "1",
		"The probability with which the client-side throttler refuses the next attempt.")
}

// observables are the instruments collect reports.
func (in *instruments) observables() []metric.Observable {
	return []metric.Observable{
		in.attempts, in.retryAfter, in.hedges, in.skipped, in.httpAttempts,
		in.breakerState, in.cooldownKeys, in.depth,
		in.tokens, in.threshold, in.ratio, in.available, in.refusals, in.rate, in.reject,
	}
}

// collect reports every series read at collection.
func (o *Observer) collect(_ context.Context, obs metric.Observer) error {
	o.counts.report(&o.inst, obs)
	o.breakers.report(o.inst.breakerState, obs)
	o.dlq.report(o.inst.depth, obs)
	o.watched.report(&o.inst, obs)
	return nil
}
