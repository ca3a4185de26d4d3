// Package otelretry reports what the retry library does as OpenTelemetry
// metrics and trace events: calls and their attempts, waits and outcomes
// (gRFC A96's per-call model, with gRFC A66's units and buckets), retry
// budgets, circuit breakers, cooldowns, dead letters, the idempotency
// middleware and the HTTP client's attempts.
//
// Each component already reports through a hook of its own; this package
// subscribes to them and knows no internals:
//
//	| component              | observer                   | wire it with                                   |
//	|------------------------|----------------------------|------------------------------------------------|
//	| retry.Retrier          | NewRetrier(name).Hook      | retry.WithHook                                 |
//	| budget (bucket, ratio) | ObserveBudget(name, b)     | nothing more: read when the meter collects     |
//	| breaker.Breaker        | NewBreaker(name)           | Settings.OnStateChange; Observe(ctx, err)      |
//	| breaker.Cooldowns      | NewCooldowns(name)         | CooldownSettings.OnCooldown; Watch; Observe    |
//	| dlq.Monitor            | NewQueue(name).Hooks(mo)   | dlq.NewMonitor(q, mo)                          |
//	| idempotency.Middleware | NewServer(name).Hook       | idempotency.WithHook                           |
//	| httpretry.Transport    | NewHTTP(name).Hook         | httpretry.WithHook                             |
//
// The name given to each constructor is the main attribute of its series
// (retry.name, retry.breaker.name, …): one per Retrier, breaker or queue
// that a dashboard tells apart. Every other attribute value comes from a fixed
// set — outcomes, verdicts, the built-in classifiers' reasons, states,
// status classes — and never from an error's text, an idempotency key, a URL
// or a user id: 10,000 calls with distinct errors and keys add no series. A
// classification reason of a custom classifier is reported as "other"; a
// letter's source and root-cause group, which are not a fixed set, are
// capped at MaxDistinct pairs.
//
// # Defaults
//
//	| setting                      | default                                        | option              |
//	|------------------------------|------------------------------------------------|---------------------|
//	| meter provider               | otel.GetMeterProvider() when built             | WithMeterProvider   |
//	| tracer provider (spans)      | otel.GetTracerProvider() when built            | WithTracerProvider  |
//	| a child span per attempt     | none: events on the caller's span only         | WithAttemptSpans    |
//	| duration buckets             | LatencyBuckets (gRFC A66), seconds             | a View in the SDK   |
//	| count buckets                | CountBuckets (gRFC A66)                        | a View in the SDK   |
//
// # Calls, counted once
//
// A call is what the caller's Do, Run or Value is: retry.call.duration
// counts it once, with its outcome — success, or why it stopped (see the
// Outcome… constants). retry.call.retries and retry.call.retry_delay are
// recorded for the calls that retried; a call that succeeded or stopped at
// its first attempt is counted by retry.call.duration alone, so that it
// costs one measurement (the count of calls without retries is the
// duration's count less the retries' count). Nested loops (retry in one
// layer) are counted once: a loop that defers to an Outermost loop
// (retry.Deferred) is not observed, and its one attempt is the outer loop's.
//
// # Traces
//
// The Retrier's hook adds an event to the caller's span, if it is recording:
// "retry.scheduled" for each retry (retry.attempt, retry.class, retry.delay in
// seconds) and "retry.gave_up" when the call fails (retry.attempt,
// retry.outcome, retry.class). With WithAttemptSpans, (*Retrier).Traced wraps
// the operation so that each attempt gets a child span.
//
// With otelhttp, trace each HTTP attempt once: put otelhttp.NewTransport
// inside the retry transport, httpretry.WithBase(otelhttp.NewTransport(base)),
// so that every request on the wire has its own client span and its own
// traceparent (OpenTelemetry's HTTP conventions: each resend is a span of its
// own), and the retry events land on the caller's span around them. Do not
// also use WithAttemptSpans on that client's Retrier, and do not wrap the
// retry transport in another otelhttp transport as well: either would trace
// each request twice. To see one span per logical call instead, put
// otelhttp.NewTransport outside (around the retry transport) and otelhttp
// not inside; the retry events then land on that span.
//
// # Cost
//
// Without an observer the loop's first-attempt path is unchanged. With one,
// every attribute set is built when the observer is made; a first-attempt
// success makes one histogram measurement and one atomic add, and allocates
// nothing. Counters that move on every attempt are kept in atomics and read
// when the meter provider collects. bench/'s BenchmarkOTel has the figures.
package otelretry
