// Package otelretry reports what the retry library does as OpenTelemetry
// metrics and trace events: calls and their attempts, waits and outcomes
// (gRFC A96's per-call model, with gRFC A66's units and buckets), retry
// budgets, client-side rate limiters, circuit breakers, cooldowns, dead
// letters, the idempotency middleware and the HTTP client's attempts.
//
// Each component already reports through a hook of its own; this package
// subscribes to them and knows no internals:
//
//	| component              | observer                   | wire it with                                   |
//	|------------------------|----------------------------|------------------------------------------------|
//	| retry.Retrier          | NewRetrier(name).Hook      | retry.WithHook                                 |
//	| budget (bucket, ratio) | ObserveBudget(name, b)     | nothing more: read when the meter collects     |
//	| limit (rate limiters)  | ObserveLimiter(name, l)    | nothing more: read when the meter collects     |
//	| breaker.Breaker        | NewBreaker(name)           | Settings.OnStateChange; Observe(ctx, err)      |
//	| breaker.Cooldowns      | NewCooldowns(name)         | CooldownSettings.OnCooldown; Watch; Observe    |
//	| dlq.Monitor            | NewQueue(name).Hooks(mo)   | dlq.NewMonitor(q, mo)                          |
//	| idempotency.Middleware | NewServer(name).Hook       | idempotency.WithHook                           |
//	| httpretry.Transport    | NewHTTP(name).Hook         | httpretry.WithHook                             |
//
// The name given to each constructor is the main attribute of its series
// (retry.name, retry.breaker.name, …): one per Retrier, breaker or queue
// that a dashboard tells apart. Every other attribute value comes from a fixed
// set — outcomes, verdicts, the built-in classifiers' reasons (grpcretry's
// status table among them: "grpc unavailable", …), states, status classes —
// and never from an error's text, an idempotency key, a URL or a user id:
// 10,000 calls with distinct errors and keys add no series. A
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
// recorded for the calls that made more than one attempt; a call that
// succeeded or stopped at its first attempt is counted by
// retry.call.duration alone, so that it costs one measurement (the count of
// calls without retries is the duration's count less the retries' count).
// Nested loops (retry in one
// layer) are counted once: a loop that defers to an Outermost loop
// (retry.Deferred) is not observed, and its one attempt is the outer loop's.
//
// # Hedged calls
//
// A Retrier WithHedging starts another attempt alongside a slow one
// (retry.HedgeStarted). Each hedge is counted by retry.hedges, read at
// collection like retry.attempts, and adds a "retry.hedge_started" event
// (retry.attempt, retry.delay) to the caller's span. A hedged call is still
// one call: only its winner's success counts (the loop reports a loser that
// also succeeded as cancelled), and retry.call.retries counts every attempt
// it started after the first, hedges and retries alike (retry.Event.Started
// at the end of the call), which is the extra load the call put on the
// dependency; retry.hedges says how much of it was hedging. gRFC A96 reports
// a call's hedges in a histogram of their own (grpc.client.call.hedges) next
// to grpc.client.call.retries, because a gRPC method is either retried or
// hedged; here a hedged call also retries after a failure, and a separate
// per-call histogram would cost a second measurement on every hedged call
// for a figure the counter gives in aggregate. A successful hedged call's
// duration runs to its winner's success (an operation that ignores its
// cancellation keeps the call from returning longer; Stats.Elapsed has that
// figure). retry.attempts counts the attempts whose outcome the loop acted
// on: the winner, each failure it retried or that ended the call; an
// attempt still running when another won, or when the call had already
// decided to stop, is counted by retry.call.retries and not by
// retry.attempts.
//
// # gRPC
//
// grpcretry's interceptors run every call through a Retrier: give that
// Retrier this package's hook, and its calls are counted as any other, each
// attempt's retry.class being the status table's reason ("grpc
// unavailable", "grpc resource exhausted", …; the constants are
// classify.ReasonGRPC…, so this module knows them without depending on
// grpc-go), and a server's pushback counted by retry.retry_after like a
// Retry-After.
//
// # Rate limiters
//
// ObserveLimiter reads a limiter's state at collection: the rate of a
// limit.Adaptive (retry.limit.rate, {request}/s; no point until the server
// first throttles, while every attempt goes through), the rejection
// probability of a limit.Throttler (retry.limit.reject_probability), and the
// fleet's rate of limit/redis's Limiter, which it takes as any limiter with a
// Rate method, so that this module does not depend on go-redis. A call the
// limiter refused is counted by its Retrier's observer with the outcome
// limited (retry.ErrLimited): nothing was sent, so it has no attempt.
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
// when the meter provider collects. bench/'s BenchmarkOTel has the figures:
// about 200 ns over a call without a hook, of which the SDK's own histogram
// measurement is about 155 ns. The SDK's default exemplar filter looks for a
// sampled span in every measurement's context; an application that does not
// use exemplars saves about 20 ns a call with
// sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter).
package otelretry
