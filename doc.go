// Package retry retries operations safely and cheaply: it retries only what
// can be retried, waits the way the server asks, never runs a timed-out
// operation twice unless that is safe, and reports every wait.
//
//	err := retry.Do(ctx, func(ctx context.Context) error {
//		return client.Send(ctx, msg)
//	})
//
// There is one loop, and these ways into it:
//
//   - Do(ctx, op, opts...) retries op under the policy opts set;
//     DoValue is the same for an op that returns a value.
//   - New(opts...) builds a Retrier once, immutable and safe for concurrent
//     use: (*Retrier).Do is Do without the per-call option processing (a first
//     attempt that succeeds costs a clock read and no allocation), and
//     (*Retrier).Run also reports the call's Stats.
//   - Value(ctx, r, op) is the typed form with a Retrier: the value, the
//     Stats and the error.
//   - Wrap(op, opts...) turns op into its retried twin, a decorator;
//     WrapValue is the same for an op that returns a value.
//   - (*Retrier).Hedge and HedgeValue run a Retrier built WithHedging: an
//     attempt still running after the hedging delay (package hedge) gets
//     another alongside, and the first success wins.
//
// Package stream retries a stream until its first chunk; packages breaker,
// httpretry, idempotency and dlq build on the same loop.
//
// # What happens after a failed attempt
//
//  1. The error is classified: an error that an inner retry loop already
//     gave up on is never retried (retry in one layer); then the caller's
//     classifiers (WithClassifier), then cenkalti/backoff v4's Permanent marker
//     and classify.Default, then the fallback
//     for unrecognised errors (retried as "unclassified", or stopped with
//     Strict).
//  2. If the caller's context is done, the call stops with its cause. The
//     retry budget, if any, hears of the failure. A loop nested in an
//     Outermost loop's operation returns the error as it is.
//  3. The policy (package policy) decides: stop if the failure is permanent;
//     if it was a timeout of work that is neither idempotent nor keyed; if
//     MaxAttempts is reached; if the class used up its Limit; if the server's
//     Retry-After exceeds MaxDelay (the wait is returned, not slept); if the
//     wait would pass MaxElapsed or the context's deadline. Otherwise it
//     picks the wait: Retry-After plus a small positive jitter, or the
//     jittered backoff — and the shared retry budget, if any, may still
//     refuse (ErrBudget).
//  4. The hook and logger hear of it, the call sleeps (one timer per call,
//     interrupted by the context), the rate limiter, if any, lets the next
//     attempt go (the hook and logger hear of a wait it imposed:
//     LimiterWaited), and the next attempt starts.
//
// # Under load
//
// A retry budget (WithBudget with a budget.TokenBucket or budget.Ratio)
// is shared by every call that uses it: when a dependency fails for everyone,
// the budget stops the retries of all of them, not just the attempts of one.
// A client-side rate limiter (WithLimiter with a limit.Adaptive or
// limit.Throttler) paces every attempt, the first included, so that callers
// sharing one rate limit stop spending requests on 429s; its refusal is local
// and never retried (ErrLimited). A hedging Retrier asks it for every attempt
// too, and a hedge the limiter cannot let go at once is not sent.
//
// Nested retry loops multiply: three layers of three attempts make 27 calls.
// Retry in one layer: by default the innermost loop retries, and an outer loop
// never retries an *Error an inner loop returned (its Final method says it
// is final). Outermost makes a loop the one that retries instead, and the
// loops nested in its operation make one attempt each.
//
// Every failure returns an *Error: the reason (a sentinel such as
// ErrExhausted, or the context's cause), the last attempt's error, every
// attempt's error, the attempts made, the time waited and elapsed.
//
// # Defaults
//
//	| setting        | default                                        | option               |
//	|----------------|------------------------------------------------|----------------------|
//	| attempts       | 3 (the first and 2 retries)                    | WithMaxAttempts      |
//	| schedule       | exponential, 100ms doubling to 10s             | WithBackoff          |
//	| jitter         | full: uniform in [0, nominal)                  | WithJitter           |
//	| longest wait   | 30s; a longer Retry-After is returned          | WithMaxDelay         |
//	| time budget    | none (the context's deadline applies)          | WithMaxElapsed       |
//	| attempt limit  | none                                           | WithAttemptTimeout   |
//	| unrecognised   | retried, reported as "unclassified"            | Strict               |
//	| timed out      | not retried unless idempotent or keyed         | Idempotent, key      |
//	| randomness     | math/rand/v2, no lock                          | WithJitterSource     |
//	| logging        | none                                           | WithLogger           |
//	| retry budget   | none                                           | WithBudget           |
//	| rate limiter   | none                                           | WithLimiter          |
//	| retrying layer | the innermost loop                             | Outermost            |
//	| hedging        | none                                           | WithHedging          |
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
// call's Stats, or on the events a WithHook collects.
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
