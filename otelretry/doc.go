// Package otelretry reports what the retry library does as OpenTelemetry
// metrics and trace events: calls and their attempts, waits and outcomes
// (gRFC A96's per-call model, with gRFC A66's units and buckets), hedges,
// retry budgets, client-side rate limiters, circuit breakers, cooldowns,
// dead letters, the idempotency middleware and the status classes of HTTP
// attempts.
//
// # One observer
//
// Every component of the library reports to one interface,
// observe.Observer, and New makes the one that turns its events into
// metrics and trace events. Wire it once per component; it knows no
// internals:
//
//	| component                              | wire it with                   |
//	|----------------------------------------|--------------------------------|
//	| retry.Retrier, and its stages: budget, | retry.WithObserver(o)          |
//	| limiter, breakers, cooldowns, hedging  |                                |
//	| dlq.Monitor                            | dlq.MonitorConfig{Observer: o} |
//	| idempotency middleware                 | idempotency.WithObserver(o)    |
//	| a budget's, a limiter's or a cooldown  | o.Watch(v): read at collection |
//	| registry's state                       |                                |
//
// The name given to New is the retry.name attribute of every series: one
// per Retrier, queue or middleware that a dashboard tells apart; an
// Observer given to several components counts them together. Every other
// attribute value comes from a fixed set — the tables below, each derived
// from the library's own list where it has one — and never from an error's
// text, an idempotency key, a URL or a user id: 10,000 calls with distinct
// errors and keys add no series. What is not a fixed set — a breaker's key,
// a letter's source and root-cause group — is capped at MaxDistinct values.
//
// # Defaults
//
//	| Config field   | zero value means                                 |
//	|----------------|--------------------------------------------------|
//	| MeterProvider  | otel.GetMeterProvider(), read by New             |
//	| TracerProvider | otel.GetTracerProvider(), read by New            |
//	| AttemptSpans   | no span per attempt: events on the caller's span |
//	| HTTP           | attempts are not counted by status class         |
//
// The duration histograms use LatencyBuckets, the count histogram
// CountBuckets (gRFC A66); a View in the SDK changes them.
//
// # Metrics
//
// Every series carries retry.name; the attributes listed are the others.
//
//	| metric                         | instrument              | unit          | attributes                                          | from                                     |
//	|--------------------------------|-------------------------|---------------|-----------------------------------------------------|------------------------------------------|
//	| retry.call.duration            | histogram, latency      | s             | retry.outcome                                       | AttemptDone (success), GaveUp            |
//	| retry.call.retries             | histogram, count        | {retry}       | retry.outcome                                       | the same, calls of more than one attempt |
//	| retry.call.retry_delay         | histogram, latency      | s             | retry.outcome                                       | the same                                 |
//	| retry.attempts                 | counter (at collection) | {attempt}     | retry.verdict, retry.class (failures)               | AttemptDone, RetryScheduled, GaveUp      |
//	| retry.retry_after              | counter (at collection) | {retry_after} | retry.retry_after.action                            | RetryScheduled, GaveUp                   |
//	| retry.hedges                   | counter (at collection) | {hedge}       |                                                     | HedgeStarted                             |
//	| retry.hedges.skipped           | counter (at collection) | {hedge}       | retry.hedge.skipped_by                              | HedgeSkipped                             |
//	| retry.limit.wait.duration      | histogram, latency      | s             |                                                     | LimiterWaited                            |
//	| retry.cooldown.wait.duration   | histogram, latency      | s             |                                                     | CooldownWaited                           |
//	| retry.http.attempts            | counter (at collection) | {attempt}     | retry.http.status_class                             | AttemptDone, with Config.HTTP            |
//	| retry.breaker.state            | gauge                   | {state}       | retry.breaker.name, retry.breaker.state             | BreakerChanged                           |
//	| retry.breaker.transitions      | counter                 | {transition}  | retry.breaker.name, .from, .state                   | BreakerChanged                           |
//	| retry.breaker.rejections       | counter                 | {call}        | retry.breaker.name, retry.breaker.reason            | GaveUp, HedgeSkipped (breaker-open)      |
//	| retry.cooldown.started         | counter                 | {cooldown}    |                                                     | CooldownStarted                          |
//	| retry.cooldown.local_failures  | counter                 | {call}        |                                                     | GaveUp (breaker.ErrCooldown)             |
//	| retry.cooldown.keys            | gauge                   | {key}         |                                                     | a watched *breaker.Cooldowns             |
//	| retry.dlq.letters              | counter                 | {letter}      | retry.dlq.source, .group, .stop_reason, retry.class | LetterAdded                              |
//	| retry.dlq.replays              | counter                 | {letter}      | retry.dlq.replay.result                             | LetterReplayed                           |
//	| retry.dlq.depth                | gauge                   | {letter}      |                                                     | QueueCounted                             |
//	| retry.idempotency.requests     | counter                 | {request}     | retry.idempotency.outcome                           | Request                                  |
//	| retry.idempotency.store_errors | counter                 | {error}       | retry.idempotency.outcome                           | Request with an Err                      |
//	| retry.budget.tokens            | gauge                   | {token}       |                                                     | a watched *budget.TokenBucket            |
//	| retry.budget.threshold         | gauge                   | {token}       |                                                     | a watched *budget.TokenBucket            |
//	| retry.budget.ratio             | gauge                   | 1             |                                                     | a watched *budget.Ratio                  |
//	| retry.budget.available         | gauge                   | {retry}       |                                                     | a watched *budget.Ratio                  |
//	| retry.budget.refusals          | counter (at collection) | {retry}       |                                                     | a watched budget's own count             |
//	| retry.limit.rate               | gauge                   | {request}/s   |                                                     | a watched limiter with a Rate method     |
//	| retry.limit.reject_probability | gauge                   | 1             |                                                     | a watched limiter with RejectProbability |
//
// # Attribute values
//
// retry.outcome, how a call ended, is success or the label of its
// policy.Stop (Stop.String), from the one list of stop reasons
// (policy.Stops); a reason this version does not know is other:
//
//	| retry.outcome  | the call                                                           |
//	|----------------|--------------------------------------------------------------------|
//	| success        | succeeded                                                          |
//	| permanent      | failed in a way another attempt would repeat (retry.ErrPermanent)  |
//	| not-idempotent | timed out, and repeating it is not known to be safe                |
//	| max-attempts   | made its last attempt (retry.ErrExhausted)                         |
//	| class-limit    | used up its retries of the failure's class                         |
//	| wait-too-long  | was asked to wait longer than MaxDelay (a Retry-After, a cooldown) |
//	| elapsed        | would start its next attempt after MaxElapsed                      |
//	| deadline       | would wait past its context's deadline                             |
//	| budget         | was refused a retry by the retry budget                            |
//	| key-required   | had no idempotency key where the policy requires one               |
//	| limited        | was refused by the client-side rate limiter: nothing sent          |
//	| breaker-open   | was refused by its key's circuit breaker: nothing sent             |
//	| canceled       | was cancelled by its caller, or its context's deadline passed      |
//	| other          | stopped for a reason this version does not know                    |
//
// retry.class, a failure's class, is its classification reason when it is
// one of the library's classifiers' (classify.Reasons: "http 503",
// "connection reset", "sql serialization failure", "grpc unavailable",
// "idempotency key in progress", …), and other for a reason of a caller's
// own classifier. retry.verdict is success, retry (the classifier said the
// failure is transient) or stop (it said another attempt would fail the
// same way, or had no opinion).
//
//	| attribute                  | values                                                                                                                                             |
//	|----------------------------|----------------------------------------------------------------------------------------------------------------------------------------------------|
//	| retry.retry_after.action   | slept (a server's wait, before a retry), returned (to the caller, retry.Error.RetryAfter)                                                          |
//	| retry.hedge.skipped_by     | the retry.outcome the refusing stage gives a call: budget, limited, breaker-open, wait-too-long (the key cooling down)                             |
//	| retry.http.status_class    | 1xx, 2xx, 3xx, 4xx, 5xx, error                                                                                                                     |
//	| retry.breaker.name         | the breaker's key (breaker.Key.String: "api.example.com/qwen3"), other past MaxDistinct                                                            |
//	| retry.breaker.state, .from | closed, half_open, open                                                                                                                            |
//	| retry.breaker.reason       | open, half_open: the state that refused                                                                                                            |
//	| retry.dlq.stop_reason      | a retry.outcome's value but success; failed for an error that is not a retry loop's                                                                |
//	| retry.dlq.source, .group   | the letter's Job.Source and Group(); other, both, past MaxDistinct pairs                                                                           |
//	| retry.dlq.replay.result    | replayed, not_found, claimed, claim_lapsed, failed                                                                                                 |
//	| retry.idempotency.outcome  | idempotency.Event.Outcome with _ for a space: executed, replayed, in_progress, key_reuse, not_retained, store_failed, scope_full, rejected; other |
//
// # Calls, counted once
//
// A call is what the caller's Do, Run or Value is: retry.call.duration
// counts it once, with its outcome. retry.call.retries and
// retry.call.retry_delay are recorded for the calls that made more than one
// attempt; a call that succeeded or stopped at its first attempt is counted
// by retry.call.duration alone, so that it costs one measurement (the count
// of calls without retries is the duration's count less the retries'
// count). retry.attempts counts the attempts whose outcome the loop acted
// on: the winner, each failure it retried (RetryScheduled) or that ended
// the call (GaveUp). Nested loops (retry in one layer) are counted once:
// the events of a loop that defers to an enclosing Outermost loop
// (observe.Event.Deferred) count no call, attempt or hedge — its one
// attempt is the outer loop's — though its limiter's and cooldowns' waits
// are counted. A call the limiter, the budget or the breaker refused is
// counted with the outcome limited, budget or breaker-open; if nothing was
// sent, it has no attempt.
//
// # Hedged calls
//
// A retry.Hedger starts another attempt alongside a slow one
// (observe.HedgeStarted). Each hedge is counted by retry.hedges, and adds a
// "retry.hedge_started" event (retry.attempt, retry.delay) to the caller's
// span; a hedge a stage refused (observe.HedgeSkipped) is counted by
// retry.hedges.skipped. A hedged call is still one call: only its winner's
// success counts (the loop reports a loser that also succeeded as
// cancelled), and retry.call.retries counts every attempt it started after
// the first, hedges and retries alike, which is the extra load the call put
// on the dependency; retry.hedges says how much of it was hedging. gRFC A96
// reports a call's hedges in a histogram of their own because a gRPC method
// is either retried or hedged; here a hedged call also retries after a
// failure, and a second per-call histogram would cost a measurement on
// every hedged call for a figure the counter gives in aggregate. A
// successful hedged call's duration runs to its winner's success. An
// attempt still running when another won, or when the call had already
// decided to stop, is counted by retry.call.retries and not by
// retry.attempts.
//
// # HTTP and gRPC
//
// With Config.HTTP, every attempt is counted by retry.http.attempts with
// its status class: 2xx for a success, the class of the status its error
// carries (a method HTTPStatusCode() int anywhere in the chain), error for
// a failure without one (a transport error, a timeout, an attempt
// cancelled because another won). The method and the duration of each
// request on the wire are otelhttp's: put otelhttp.NewTransport inside the
// retry transport, and http.client.request.duration measures every
// attempt, with its method and status code.
//
// grpcretry runs every call through a Retrier: give that Retrier the
// Observer, and its calls are counted as any other, each attempt's
// retry.class being the status table's reason ("grpc unavailable", …), and
// a server's pushback counted by retry.retry_after like a Retry-After.
//
// # Breakers and cooldowns
//
// A Retrier's breakers (retry.WithBreakers) keep one breaker per call key:
// each of the first MaxDistinct keys the Observer hears of has its own
// retry.breaker.state (as of the last change heard of) and transitions;
// later keys are counted under retry.breaker.name="other", which has no
// state. A cooldown's key is never an attribute.
//
// # Watched state
//
// Watch reads a budget's, a limiter's or a cooldown registry's state when
// the meter provider collects, never on a call's path: one of each kind per
// Observer. A limit.Adaptive's rate has no point until the server first
// throttles (its rate is +Inf until then); a Throttler's probability is as
// of its last attempt. The limiters count no refusals of their own: a call
// refused is counted with the outcome limited, a hedge refused by
// retry.hedges.skipped.
//
// # Traces
//
// The Observer adds an event to the caller's span, if it is recording:
// "retry.scheduled" for each retry (retry.attempt, retry.class, retry.delay
// in seconds), "retry.gave_up" when the call fails (retry.attempt,
// retry.outcome, retry.class), "retry.hedge_started" and
// "retry.hedge_skipped", "retry.limiter_waited" and
// "retry.cooldown_waited" (retry.attempt, retry.delay),
// "retry.breaker_changed" (retry.breaker.name, .from, .state) and
// "retry.cooldown_started" (retry.delay). With Config.AttemptSpans,
// (*Observer).Traced wraps the operation so that each attempt gets a child
// span.
//
// With otelhttp, trace each HTTP attempt once: put otelhttp.NewTransport
// inside the retry transport, so that every request on the wire has its
// own client span and its own traceparent (OpenTelemetry's HTTP
// conventions: each resend is a span of its own), and the retry events land
// on the caller's span around them. Do not also use attempt spans on that
// client's Retrier, and do not wrap the retry transport in another otelhttp
// transport as well: either would trace each request twice.
//
// # Cost
//
// Without an observer the loop's first-attempt path is unchanged. With
// one, every attribute set is built by New; a first-attempt success makes
// one histogram measurement and one or two atomic adds, and allocates
// nothing. Counters that move on every attempt are kept in atomics and read
// when the meter provider collects. BenchmarkObserver has the figures: the
// SDK's own histogram measurement is most of it. The SDK's default exemplar
// filter looks for a sampled span in every measurement's context; an
// application that does not use exemplars saves a little with
// sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter).
package otelretry
