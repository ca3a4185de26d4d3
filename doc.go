// Package retry retries operations safely and cheaply: it retries only what
// can be retried, waits the way the server asks, never runs a timed-out
// operation twice unless that is safe, and reports every wait.
//
//	err := retry.Do(ctx, func(ctx context.Context) error {
//		return client.Send(ctx, msg)
//	})
//
// There is one per-call machine, and these ways into it:
//
//   - Do(ctx, op, opts...) retries op under the policy opts set;
//     DoValue is the same for an op that returns a value.
//   - New(opts...) builds a Retrier once, immutable and safe for concurrent
//     use: (*Retrier).Do is Do without the per-call option processing (a first
//     attempt that succeeds costs a clock read and no allocation),
//     (*Retrier).Run also reports the call's Stats, and Value is the typed
//     form. (*Retrier).With derives a Retrier that shares its stages.
//   - Wrap(op, opts...) turns op into its retried twin, a decorator;
//     WrapValue is the same for an op that returns a value.
//   - NewHedger(r, delay, maxInFlight) hedges the calls of a Retrier: an
//     attempt still running after the hedging delay (package hedge) gets
//     another alongside, and the first success wins. Its Do, Run and
//     HedgeValue may call the operation from several goroutines at once,
//     which is why a Hedger is a type of its own: Do, Run and Value of a
//     Retrier never do, and keep the operation on the caller's stack.
//
// The integrations take a Retrier as an argument and run each call through
// it: package httpretry (an http.RoundTripper), grpcretry (interceptors),
// stream (a stream until its first chunk), sqlretry (a whole transaction),
// idempotency and dlq.
//
// # The pipeline
//
// Every feature is a stage of the Retrier, and every call goes through the
// stages in this order, whatever the entry point:
//
//  1. Cooldowns (WithCooldowns): an attempt to a key cooling down after a
//     server's 503 (or gRPC UNAVAILABLE) with a Retry-After waits until the
//     cooldown ends, or the call stops with the wait (ErrWaitTooLong) when it
//     cannot wait that long; nothing is sent meanwhile.
//  2. Circuit breakers (WithBreakers), around the call or each attempt: an
//     open breaker refuses at once (ErrBreakerOpen), nothing sent.
//  3. The client-side rate limiter (WithLimiter): it paces every attempt, and
//     its refusal is local and never retried (ErrLimited).
//  4. The attempt timeout (WithAttemptTimeout) bounds each attempt.
//  5. The retry budget (WithBudget), shared by every call that uses it, hears
//     of every attempt and may refuse a retry (ErrBudget).
//  6. The policy (package policy) decides, after a failure, whether to retry
//     and how long to wait first.
//  7. Hedging (NewHedger) schedules attempts over the same per-call state:
//     each hedge goes through every stage above.
//
// Breakers and cooldowns keep one state per call key — a target and an
// operation (breaker.Key), set with breaker.WithKey; httpretry and grpcretry
// set it from the request.
//
// # What happens after a failed attempt
//
//  1. The error is classified: an error that an inner retry loop already
//     gave up on is never retried (retry in one layer); then the caller's
//     classifiers (WithClassifier), then cenkalti/backoff v4's Permanent marker
//     and classify.Default, then the fallback for unrecognised errors
//     (retried as "unclassified", or stopped with Strict); and last, what the
//     server said (classify.Server: a Retry-After, a gRPC pushback), which no
//     classifier overrides.
//  2. If the caller's context is done, the call stops with its cause. The
//     stages hear of the attempt: the budget, the limiter, the key's breaker
//     and cooldowns. A loop nested in an Outermost loop's operation returns
//     the error as it is.
//  3. The policy decides: stop if the failure is permanent; if it was a
//     timeout of work that is neither idempotent nor keyed; if MaxAttempts is
//     reached; if the class used up its Limit; if the server's Retry-After
//     exceeds MaxDelay (the wait is returned, not slept); if the wait would
//     pass MaxElapsed or the context's deadline. Otherwise it picks the wait:
//     Retry-After plus a small positive jitter, or the jittered backoff — and
//     the shared retry budget, if any, may still refuse (ErrBudget).
//  4. The observers hear of it, the call sleeps (one timer per call,
//     interrupted by the context), and the next attempt goes through the
//     stages again.
//
// Every failure returns an *Error: why the call stopped (Stop, one of the
// reasons of policy.Stop, the one list every integration derives from, and
// Reason, its sentinel such as ErrExhausted, or the context's cause), the
// last attempt's error, every attempt's error, the attempts made, the time
// waited and elapsed.
//
// # Under load
//
// A retry budget (budget.TokenBucket or budget.Ratio) is shared by every call
// that uses it: when a dependency fails for everyone, the budget stops the
// retries of all of them, not just the attempts of one. Every Retrier has one
// unless told otherwise (WithBudget, WithoutBudget): a token bucket of its
// own, so that a Retrier built once and shared by a process's calls to a
// dependency cannot keep it down with retries after a stall. A client-side rate
// limiter (limit.Adaptive or limit.Throttler) paces every attempt, the first
// included, so that callers sharing one rate limit stop spending requests on
// 429s.
//
// Nested retry loops multiply: three layers of three attempts make 27 calls.
// Retry in one layer: by default the innermost loop retries, and an outer loop
// never retries an *Error an inner loop returned (its Final method says it
// is final). Outermost makes a loop the one that retries instead, and the
// loops nested in its operation make one attempt each.
//
// # Observation
//
// One observer (package observe) hears of everything a call does: each
// attempt, each scheduled retry, each give-up, each hedge, each wait a
// limiter or a cooldown imposed, and the breakers and cooldowns the call
// moved. Give it with WithObserver; WithLogger logs the same events through
// log/slog (INFO for a wait a person would notice, DEBUG otherwise). Package
// otelretry implements it for OpenTelemetry.
//
// # Configuration
//
// One rule, everywhere in the library: data components — a budget, a
// limiter, breakers, cooldowns, a store, a queue, an observer — are built
// from a Config whose zero value means the defaults; behaviour combinators —
// this package's Retrier, the HTTP transport, the gRPC interceptor, the
// idempotency middleware — take options, validated when built; and the
// Retrier is passed to every integration as an argument. A bad option or
// field is an *InvalidError naming it and its value (errors.Is ErrInvalid).
//
// # Defaults
//
//	| setting        | default                                    | option                    |
//	|----------------|--------------------------------------------|---------------------------|
//	| attempts       | 3 (the first and 2 retries)                | WithMaxAttempts           |
//	| schedule       | exponential, 100ms doubling to 10s         | WithBackoff               |
//	| jitter         | full: uniform in [0, nominal)              | WithJitter                |
//	| longest wait   | 30s; a longer Retry-After is returned      | WithMaxDelay              |
//	| time budget    | none (the context's deadline applies)      | WithMaxElapsed            |
//	| attempt limit  | none                                       | WithAttemptTimeout        |
//	| unrecognised   | retried, reported as "unclassified"        | Strict                    |
//	| timed out      | not retried unless idempotent or keyed     | Idempotent, key           |
//	| randomness     | math/rand/v2, no lock                      | WithJitterSource          |
//	| observers      | none                                       | WithObserver              |
//	| logging        | none                                       | WithLogger                |
//	| retry budget   | a token bucket of its own (package budget) | WithBudget, WithoutBudget |
//	| rate limiter   | none                                       | WithLimiter               |
//	| breakers       | none                                       | WithBreakers              |
//	| cooldowns      | none                                       | WithCooldowns             |
//	| retrying layer | the innermost loop                         | Outermost                 |
//
// Presets for LLM calls, database writes, emails, payments and health checks
// are in package policy; use them with WithPolicy.
//
// # Testing code that retries
//
// Waits are real timers, so testing/synctest runs them on its fake clock: a
// test of five attempts with a 10s Retry-After between them runs in no real
// time. Seed the jitter (WithJitterSource(jitter.NewSeeded(n))) for the same
// waits on every run, inject failures from the operation, and assert on the
// call's Stats, or on the events an observer collects.
//
// # Context
//
// The context is checked before the first attempt and before every wait.
// Each attempt receives a context derived for it (with the attempt timeout,
// when set). The caller's cancellation or expiry stops the call at once and is
// reported with context.Cause; an attempt's own timeout is an ordinary,
// idempotency-gated, retryable failure. A wait that would end after the
// context's deadline is not started (ErrDeadline).
package retry
