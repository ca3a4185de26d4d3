// Package retry retries operations safely and cheaply: it retries only what
// can be retried, waits the way the server asks, never runs a timed-out
// operation twice unless that is safe, and reports every wait.
//
//	if err := retry.Do(ctx, op); err != nil {
//		return err // a *retry.Error: why the call stopped, and every attempt's error
//	}
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
//	| setting | default | change with |
//	| --- | --- | --- |
//	| attempts | 3 (the first call and 2 retries) | `WithMaxAttempts` |
//	| schedule | exponential: 100 ms, doubling, capped at 10 s | `WithBackoff` |
//	| jitter | full: uniform in [0, nominal) | `WithJitter` |
//	| longest single wait | 30 s; a longer Retry-After is returned, not slept | `WithMaxDelay` |
//	| Retry-After | honoured for 429 and 503, plus up to min(10 %, 1 s) | — |
//	| time budget | none (the context's deadline applies) | `WithMaxElapsed` |
//	| per-attempt timeout | none | `WithAttemptTimeout` |
//	| unrecognised errors | retried, reported as "unclassified" | `Strict()` |
//	| HTTP 500 / other unlisted 5xx | retried once per call | a classifier |
//	| timed-out attempts | not retried unless idempotent or keyed | `Idempotent()`, `WithIdempotencyKey` |
//	| idempotency key | optional; at most 255 characters, no control characters | `policy.Payment()` requires one |
//	| randomness | `math/rand/v2` (per-thread, no lock), one draw per failing call | `WithJitterSource(jitter.NewSeeded(seed))` |
//	| logging | none | `WithLogger` |
//	| observers | none | `WithObserver` |
//	| retry budget | a token bucket of the Retrier's own (500 tokens; a failure takes 5, a timeout 10, a success puts 1 back; no retry at or below 250) | `WithBudget(…)` to share one, `WithoutBudget()` to have none |
//	| rate limiter | none | `WithLimiter(limit.NewAdaptive(…))`, `limit.NewThrottler(…)`, `limit.NewKeyed(…)` |
//	| circuit breakers | none | `WithBreakers(breaker.New(…))` |
//	| cooldowns after a 503 with Retry-After | none | `WithCooldowns(breaker.NewCooldowns(…))` |
//	| hedging | none | `retry.NewHedger(r, delay, maxInFlight)` |
//	| retrying layer (nested loops) | the innermost; outer loops never retry an inner `*retry.Error` | `Outermost()` |
//	| gateway "upstream error" (`classify.ErrUpstream`) | not retried | `WithClassifier(classify.UpstreamOnce)`: one extra attempt |
//	| spend cap / exhausted quota (`classify.ErrSpendCap`) | never retried | — |
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
//
// # The rules, in code
//
// The library enforces ten rules; here is the shortest code that applies each
// (the repository's tests type-check these snippets against the library, and
// none discards an error). First, an LLM call with its preset, a logger, the
// call's Stats and a Retry-After longer than the call may wait:
//
//	func complete(ctx context.Context, prompt string) (Reply, error) {
//		r, err := retry.New(retry.WithPolicy(policy.LLMCall()), retry.WithLogger(slog.Default()))
//		if err != nil {
//			return Reply{}, err // a bad option names itself and its value
//		}
//		reply, stats, err := retry.Value(ctx, r, func(ctx context.Context) (Reply, error) {
//			return client.Complete(ctx, prompt)
//		})
//		log.Printf("attempts=%d waited=%v", stats.Attempts, stats.Waited) // on failure too
//		var rerr *retry.Error
//		if errors.As(err, &rerr) && rerr.RetryAfter > 0 {
//			scheduleIn(rerr.RetryAfter) // the server asked for a longer wait than we block for
//		}
//		return reply, err
//	}
//
// Build the Retrier once and share it; it is shown inline here to keep the
// example whole.
//
// 1. Only transient failures are retried. Resets, refused connections,
// timeouts, 502/503/504 and 429 are; 400, 401, 403, validation errors, a TLS
// certificate the client rejects and an LLM's filtered answer are not; a 500
// once. An error nobody recognises is retried and reported as "unclassified" —
// unless the call is strict.
//
//	func send(ctx context.Context, input any) error {
//		r, err := retry.New() // or retry.New(retry.Strict()) for calls that cost money
//		if err != nil {
//			return err
//		}
//		return r.Do(ctx, func(ctx context.Context) error {
//			if bad(input) {
//				return classify.Permanent(errInvalidInput) // your own "never retry"
//			}
//			return call(ctx)
//		})
//	}
//
// 2. Only idempotent work is retried. A timed-out attempt may still be
// running; it is retried only for idempotent or keyed work, and the error says
// which rule applied. A timeout that provably sent nothing (a connect timeout)
// is retried like a refused connection.
//
//	ctx, err := retry.WithIdempotencyKey(ctx, "order-4417-summary") // the same key on every attempt
//	if err != nil {
//		return err // longer than 255 characters, or control characters: refused before sending
//	}
//	err = retry.Do(ctx, generate, retry.WithAttemptTimeout(30*time.Second))
//	if errors.Is(err, retry.ErrNotIdempotent) {
//		// without a key: timed out, may still be running, not retried
//	}
//	return err
//
// 3. Wait well. Exponential, capped, full jitter; Retry-After is
// authoritative, and a wait longer than the maximum is returned, not slept.
//
//	err := retry.Do(ctx, op,
//		retry.WithBackoff(backoff.Exponential{Base: time.Second, MaxDelay: time.Minute}),
//		retry.WithJitter(jitter.Full{}), // the default
//		retry.WithMaxDelay(time.Minute))
//	var rerr *retry.Error
//	if errors.As(err, &rerr) && errors.Is(err, retry.ErrWaitTooLong) {
//		scheduleIn(rerr.RetryAfter) // the server asked for longer than we block a caller
//	}
//	return err
//
// 4. Always bounded. Attempts, time, the context's deadline, per-class caps
// and a retry budget shared by every caller.
//
//	bucket, err := budget.NewTokenBucket(budget.TokenBucketConfig{}) // one per dependency, shared
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithMaxAttempts(4), retry.WithMaxElapsed(time.Minute), retry.WithBudget(bucket))
//	if err != nil {
//		return err
//	}
//	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // no wait starts that cannot end in time
//	defer cancel()
//	err = r.Do(ctx, op)
//	if errors.Is(err, retry.ErrBudget) {
//		// the dependency is down for everyone: hand the work to a dead letter queue
//	}
//	return err
//
// 5. Retry in one layer. By default the innermost loop retries and outer
// loops never retry what it gave up on; or choose the outer layer:
//
//	edge, err := retry.New(retry.Outermost()) // this layer retries; loops inside its op make one attempt
//	if err != nil {
//		return err
//	}
//
// 6. Breaker outside, retry inside, and a cooldown after a 503 with
// Retry-After, both per call key:
//
//	breakers, err := breaker.New(breaker.Config{}) // one breaker per key, around the whole retried call
//	if err != nil {
//		return err
//	}
//	cooldowns, err := breaker.NewCooldowns(breaker.CooldownConfig{}) // a 503 + Retry-After cools its key down
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithBreakers(breakers), retry.WithCooldowns(cooldowns))
//	if err != nil {
//		return err
//	}
//	ctx = breaker.WithKey(ctx, breaker.Key{Target: host, Operation: model}) // httpretry and grpcretry set it themselves
//	err = r.Do(ctx, op)
//	if errors.Is(err, retry.ErrBreakerOpen) {
//		// refused at once: nothing sent, no retry
//	}
//	return err
//
// 7. Streams retry only before the first chunk.
//
//	s, err := stream.Open(ctx, r, httpretry.OpenSSE(http.DefaultClient, req)) // retried until the first event only
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	for e, err := range s.All() {
//		var broken *stream.Error[httpretry.Event]
//		if errors.As(err, &broken) {
//			keep(broken.Partial) // broke after the first event: never retried
//		}
//		if err != nil {
//			return err
//		}
//		use(e)
//	}
//
// 8. Idempotency keys are stable across retries, derived where a job must
// resume, and a replay is told apart from a generation.
//
//	store, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{}) // or idempotency/redis for a fleet
//	if err != nil {
//		return err
//	}
//	fp := idempotency.NewFingerprint(body) // the bytes you send, not the server's model
//	key, err := idempotency.DeriveKey(runID, "summarize", fp.String())
//	if err != nil {
//		return err
//	}
//	res, err := idempotency.Do(ctx, store, key, fp, summarize) // at most once per key
//	if err != nil {
//		return err
//	}
//	if res.Replay {
//		log.Printf("replayed the generation billed as %s", res.ReplayOf)
//	}
//
// 9. Dead letters are diagnosis, not a cemetery.
//
//	q, err := dlq.NewMemory(0) // or dlq/sqlite, dlq/redis
//	if err != nil {
//		return err
//	}
//	mon, err := dlq.NewMonitor(q, dlq.MonitorConfig{}) // alerts once per crossing, through slog
//	if err != nil {
//		return err
//	}
//	err = dlq.Do(ctx, r, mon, dlq.Job{ID: id, Source: "llm-jobs", Payload: msg}, process)
//	switch {
//	case errors.Is(err, dlq.ErrDeadLettered):
//		// acknowledge the message: it is stored, with every attempt
//	case err != nil:
//		return err // not stored (cancelled, or the queue refused it): leave the message for redelivery
//	}
//	groups := dlq.GroupLetters(letters) // 5,000 letters, 3 causes
//	// after the fix:
//	report, err := dlq.Replay(ctx, mon, dlq.Filter{Group: groups[0].ID}, dlq.EnqueueFunc(enqueue))
//	log.Printf("replayed %d letters", len(report.Replayed))
//	if err != nil {
//		return err // the letters that failed stay in the queue; report.Failed says why
//	}
//
// 10. Waits are visible, in the log and as data, on failure too.
//
//	r, err := retry.New(retry.WithLogger(slog.Default())) // INFO for waits of 1s or more, DEBUG below
//	if err != nil {
//		return err
//	}
//	st, err := r.Run(ctx, op) // on failure too: err is a *retry.Error with the same Stats
//	log.Printf("attempts=%d waited=%v elapsed=%v", st.Attempts, st.Waited, st.Elapsed)
//	return err
//
// # Ways to run an operation
//
// There is one pipeline, the Retrier, and these ways into it. A bad option is
// refused once, by the constructor (and the Retrier it returns then fails
// every call with that error); no way in refuses a call for the stages the
// Retrier has.
//
//	| form | what it is for |
//	| --- | --- |
//	| `retry.Do(ctx, op, opts...)` | run `op` with retries under the options given; `retry.DoValue` for an `op` that returns a value |
//	| `retry.New(opts...)` then `r.Do(ctx, op)` | build the pipeline once, share it; `r.Run` also returns the call's `Stats` |
//	| `retry.Value(ctx, r, op)` | the typed form with a `Retrier`: value, `Stats`, error |
//	| `r.With(opts...)` | a `Retrier` with `r`'s configuration plus `opts`, sharing its stages (budget, limiter, breakers, cooldowns, observers): `r.With(retry.WithMaxAttempts(1))` for work that may be sent only once |
//	| `retry.Wrap(op, opts...)` | a decorator: `op`'s retried twin; `retry.WrapValue` for an `op` that returns a value |
//	| `retry.NewHedger(r, delay, maxInFlight)` then `h.Do`, `h.Run`, `retry.HedgeValue(ctx, h, op)` | a hedged call: another attempt alongside a slow one, through the same stages |
//	| `stream.Open(ctx, r, open)` | a stream, retried until its first chunk |
//	| `httpretry.NewClient(r, opts...)`, `httpretry.New(r, opts...)` | an `*http.Client` (or an `http.RoundTripper`) that runs every request through `r` |
//	| `grpcretry.New(r, opts...)` | gRPC client interceptors that run every call through `r` |
//	| `sqlretry.Tx(ctx, r, db, opts, fn)`, `sqlretry.PgxTx` | a whole SQL transaction, retried from `BEGIN` |
//	| `dlq.Do(ctx, r, queue, job, op)` | a job run through `r`, dead-lettered if it fails for good |
//
// # One pipeline of stages
//
// Every feature is a stage of the Retrier, and every call — plain, hedged,
// HTTP, gRPC, a stream, a transaction — goes through the same stages in the same
// order:
//
//	| stage | given with | what it does | stops the call with |
//	| --- | --- | --- | --- |
//	| cooldowns | `retry.WithCooldowns(breaker.NewCooldowns(…))` | an attempt to a key cooling down after a 503 (or gRPC UNAVAILABLE) with Retry-After waits until the cooldown ends | `ErrWaitTooLong` (or `ErrElapsed`, `ErrDeadline`) when it cannot wait that long |
//	| circuit breaker | `retry.WithBreakers(breaker.New(…))` | one breaker per key, around the whole call (or each attempt) | `ErrBreakerOpen` |
//	| rate limiter | `retry.WithLimiter(…)` (`limit.Adaptive`, `limit.Throttler`, `limit.Keyed`) | asked before every attempt, the first included; may hold it its turn | `ErrLimited` |
//	| attempt timeout | `retry.WithAttemptTimeout(d)` | bounds each attempt through its context | — (a timeout is a failure, retried only for idempotent or keyed work) |
//	| retry budget | `retry.WithBudget(…)` (`budget.TokenBucket`, `budget.Ratio`) | shared by every call to a dependency: asked before each retry | `ErrBudget` |
//	| policy | `retry.WithPolicy`, `WithMaxAttempts`, `WithMaxElapsed`, `WithMaxDelay`, `WithBackoff`, `WithJitter`, `WithClassifier`, `Strict`, `Idempotent` | classifies each failure and decides: retry after a wait, or stop | the rest of [the list](#why-a-call-stopped) |
//	| hedging | `retry.NewHedger(r, delay, maxInFlight)` | starts another attempt alongside a slow one; every hedge goes through the stages above | — (a hedge a stage refuses is skipped) |
//
// In detail:
//
//   - One call key. Breakers, cooldowns and a limit.Keyed keep one state per
//     breaker.Key{Target, Operation}, read from the call's context
//     (breaker.WithKey, breaker.KeyOf). httpretry sets each request's (host,
//     model), grpcretry each call's (target, method); other calls set it with
//     breaker.WithKey, or share the zero key. An integration sets it only when a
//     stage reads it (r.Keyed()).
//   - One observer. Package observe has one interface, observe.Observer
//     (observe.Func adapts a function), and one observe.Event for everything:
//     attempts, retries, give-ups, hedges, limiter and cooldown waits, breaker
//     transitions, dead letters, guarded requests. Wire it with
//     retry.WithObserver (the Retrier and all its stages),
//     dlq.MonitorConfig.Observer and idempotency.WithObserver;
//     otelretry.New(name, otelretry.Config{}) is one.
//   - One configuration rule. Data components — budgets, limiters, breakers,
//     cooldowns, hedging delays, stores, queues (dlq.NewMemory takes only its
//     bound) and their monitors, the OpenTelemetry observer — take a Config
//     whose zero value means the documented defaults
//     (breaker.New(breaker.Config{})). Behaviour combinators — the Retrier, the
//     HTTP transport, the gRPC interceptors, the idempotency middleware — take
//     options (retry.New(retry.WithMaxAttempts(4))). The Retrier is passed as
//     an argument to every integration — httpretry.New(r, …),
//     grpcretry.New(r, …), stream.Open(ctx, r, …), sqlretry.Tx(ctx, r, …),
//     dlq.Do(ctx, r, …) — never as an option. A bad field, option or argument,
//     a nil Retrier included, is a *retry.InvalidError naming it and its value
//     (breaker.Config.MaxKeys), returned before any work.
//
// # What it does
//
//   - Schedules (backoff): constant, linear, exponential — pure functions of
//     the attempt number, saturating at their MaxDelay (attempt 10,000 does not
//     overflow). backoff/cenkalti converts to and from cenkalti/backoff/v4
//     exactly as v4 computes, and v4's backoff.Permanent stops the loop.
//   - Jitter (jitter): full (default), equal, decorrelated, proportional,
//     none — pure functions given a random number; randomness from a lock-free
//     source, or a seeded one in tests.
//   - Classification (classify): the whole table of when to retry
//     (connection reset/refused, connect timeouts, other timeouts behind the
//     idempotency gate, 429/502/503/504, 500 once, never other 4xx, never a TLS
//     certificate failure, an unsupported scheme, an invalid header or a redirect
//     loop), Permanent/Retryable markers, Retry-After parsing (seconds and all
//     three HTTP-date forms, two-digit years as RFC 9110 reads them), result checks
//     (CheckResult: an LLM's empty or filtered answer is final), general and
//     strict modes (retry.Strict), and what a server said (classify.Said: a
//     pushback's "do not retry" or wait), which no classifier overrides. Every
//     class of failure the library's classifiers give — HTTP, network, SQL, gRPC,
//     idempotency, LLM results — is one list, classify.Reasons().
//   - Policies (policy): plain data — max attempts, max elapsed time,
//     per-attempt timeout, max single wait, per-class caps, deadline awareness —
//     one pure decision, and presets.
//   - Budgets (budget): a token bucket (gRPC A6 / AWS SDK) or a ratio
//     (Finagle), shared by every call to a dependency, lock-free.
//   - Safety: a timed-out attempt may still be running, so it is retried only
//     for work marked retry.Idempotent() or carrying an idempotency key
//     (retry.WithIdempotencyKey); the error says which rule applied.
//   - Retry-After is authoritative: it replaces the backoff (plus a small
//     positive jitter); a wait longer than the policy's max delay is returned in
//     the error (RetryAfter) instead of blocking the caller.
//   - Safe under load: budgets stop all callers from retrying a dependency
//     that is down; nested retry loops retry in one layer instead of multiplying
//     (3 × 3 × 3 = 27 calls); per-class caps (a 500 is retried once per call); a
//     gateway's "upstream error" is not retried (opt in to one extra attempt with
//     classify.UpstreamOnce); spend caps and quota errors never are.
//   - Visible waits: one observer (retry.WithObserver, package observe)
//     for every attempt, retry, give-up, hedge and wait of every stage, an
//     optional *slog.Logger (INFO for waits of 1 s or more, DEBUG below, silent
//     without a logger), and Stats (attempts, waited, elapsed) on success and
//     on failure, each with one meaning in every configuration. The same
//     observer hears a dead letter queue (dlq.MonitorConfig.Observer) and the
//     idempotency middleware (idempotency.WithObserver).
//   - Hedging (hedge, retry.NewHedger): a second copy of a slow call
//     after a fixed delay or the p95 of recent calls, only for idempotent or keyed
//     work, every hedge going through the stages (budget, limiter, breaker,
//     cooldowns).
//   - Circuit breakers and cooldowns (breaker, retry.WithBreakers,
//     retry.WithCooldowns): one breaker per call key, and a cooldown of a key
//     whose server answered 503 with Retry-After; breaker/redis shares a
//     breaker's state across a fleet.
//   - Client-side rate limiting (limit, retry.WithLimiter): an adaptive
//     limiter that learns the rate a server accepts from its 429s, and an SRE
//     throttler, asked before every attempt; limit/redis shares one across a
//     fleet.
//   - Where Go services talk (own modules): gRPC interceptors (grpcretry),
//     whole SQL transactions and exactly-once effects in PostgreSQL (sqlretry,
//     idempotency/postgres), OpenTelemetry metrics and traces (otelretry).
//   - Bad input is an error, never a panic: every invalid option, argument or
//     field is a *retry.InvalidError naming it and its value
//     (errors.Is(err, retry.ErrInvalid)), returned before any work; a Retrier
//     whose options were refused fails every call with it.
//
// # Why a call stopped
//
// Every failure is a *retry.Error — attempts, waited, elapsed, the last error,
// every attempt's error and classification — whose Stop says why the call
// stopped and that errors.Is matches against its reason and its last error.
// policy.Stop is the one list of reasons (policy.Stops() iterates it); its
// labels (Stop.String()) are what a dead letter stores as its stop reason and
// what the retry.outcome metric reports, and the HTTP and gRPC integrations
// answer each one by a table derived from it:
//
//	| `policy.Stop` | label | sentinel (`Error.Reason`) | meaning |
//	| --- | --- | --- | --- |
//	| `StopPermanent` | `permanent` | `ErrPermanent` | the failure is not transient (4xx, `Permanent`, a spend cap, an upstream error, an inner loop's final error, strict mode's unclassified, a server's "do not retry") |
//	| `StopNotIdempotent` | `not-idempotent` | `ErrNotIdempotent` | an attempt timed out (or may have reached the server) and the work is neither idempotent nor keyed |
//	| `StopAttempts` | `max-attempts` | `ErrExhausted` | max attempts reached |
//	| `StopClassLimit` | `class-limit` | `ErrClassLimit` | this kind of failure used its retries (a 500 is retried once) |
//	| `StopWaitTooLong` | `wait-too-long` | `ErrWaitTooLong` | the server (a Retry-After, a key's cooldown) asked to wait longer than the max wait; see `RetryAfter` |
//	| `StopElapsed` | `elapsed` | `ErrElapsed` | the time budget would be exceeded |
//	| `StopDeadline` | `deadline` | `ErrDeadline` | the next wait would outlast the context's deadline |
//	| `StopBudget` | `budget` | `ErrBudget` | the shared retry budget refused the retry |
//	| `StopKeyRequired` | `key-required` | `ErrKeyRequired` | the policy requires an idempotency key; nothing ran |
//	| `StopLimited` | `limited` | `ErrLimited` | the client-side rate limiter refused; nothing sent |
//	| `StopOpen` | `breaker-open` | `ErrBreakerOpen` | the call key's circuit breaker refused; nothing sent |
//	| `StopCanceled` | `canceled` | the context's cause | the caller cancelled, or its deadline passed |
//
// The classes of the failures themselves (Decision.Reason: "http 503",
// "connection reset", "sql serialization failure", "grpc unavailable",
// "idempotency key in progress", …) are the other list, classify.Reasons().
//
// # Retry in one layer
//
// Service A retrying B retrying C multiplies the calls: three layers of three
// attempts are 27 calls for one request. By default the loop closest to the
// dependency retries, and an outer loop never retries an error that an inner
// loop gave up on (*retry.Error reports Final() == true; the outer error
// says "already retried by an inner loop"). retry.Outermost() selects the
// outer layer instead: loops running inside its operation (same context chain)
// make one attempt and return the error unchanged for it to classify
// (retry.SingleAttempt(ctx) gives any context that effect; the events of such a
// loop are marked Deferred, and observers count the outer loop's). For work
// that may be sent only once, use a Retrier of one attempt instead,
// r.With(retry.WithMaxAttempts(1)): an ordinary call that every stage and
// observer sees. Either way
// the dependency sees one layer's attempts (TestRetryInOneLayer). Across a
// network boundary the error type is lost: that is what the gateway's
// "upstream error" rule is for.
//
// # A test on fake time
//
// Waits are real timers, so testing/synctest runs them on its fake clock:
// five attempts with a 10 s Retry-After between them take no real time. Seed
// the jitter for the same waits on every run, inject failures from the
// operation, and assert on the attempts, the waits and the Stats
// (testing_test.go is this test):
//
//	func TestRetriesOnFakeTime(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			var waits []time.Duration
//			r, err := retry.New(
//				retry.WithMaxAttempts(5),
//				retry.WithJitterSource(jitter.NewSeeded(42)), // the same waits on every run
//				retry.WithObserver(observe.Func(func(_ context.Context, e observe.Event) {
//					if e.Kind == observe.RetryScheduled {
//						waits = append(waits, e.Delay)
//					}
//				})),
//			)
//			if err != nil {
//				t.Fatal(err)
//			}
//			calls := 0
//			busy := &classify.StatusError{Code: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"10"}}}
//			st, err := r.Run(t.Context(), func(context.Context) error {
//				if calls++; calls < 5 {
//					return busy // inject the failure you want to test
//				}
//				return nil
//			})
//			if err != nil || calls != 5 || len(waits) != 4 || st.Waited < 40*time.Second {
//				t.Fatalf("err=%v calls=%d waits=%v stats=%+v", err, calls, waits, st)
//			}
//		})
//	}
//
// For HTTP, serve from httptest and count the requests the server saw; for a
// real redis-server or a clock you cannot fake, see how this repository's own
// tests do it (internal/redistest).
//
// # Layout
//
//	backoff  jitter  classify  budget   leaves: standard library only
//	      \    |     /
//	        policy                      pure data + a pure decision; policy.Stop, the one list of stop reasons
//	          |
//	        retry                       the pipeline: its stages, context, timers, observers, slog, *Error; Hedger
//	observe                             the one Observer interface and Event of every component
//	backoff/cenkalti                    adapter to and from cenkalti/backoff/v4 (its Permanent is honoured)
//	hedge                               hedging delays: fixed, or an adaptive percentile of recent latencies
//	stream                              streams retried until their first chunk
//	breaker                             circuit breakers and cooldowns per call key (breaker.Key): stages of the Retrier
//	breaker/redis                       (own module) a fleet's breaker state in Redis
//	limit                               client-side rate limiting: Adaptive (CUBIC, improved), Throttler (SRE), Keyed
//	limit/redis                         (own module) a fleet's limiter state in Redis
//	grpcretry                           (own module) gRPC client interceptors: the status table, pushback, hedging, streams
//	httpretry                           the HTTP client that retries (keys, 409 in progress, hedging); SSE streams
//	idempotency                         keys, Do/Once, stores, the HTTP middleware and the protocol's client helpers
//	idempotency/storetest               the conformance suite of idempotency stores
//	idempotency/redis                   (own module) the Redis store
//	idempotency/postgres                (own module) the PostgreSQL store; effect and key in one transaction
//	sqlretry                            (own module) whole transactions retried; an ambiguous COMMIT is not
//	dlq                                 letters, queues, alerts, grouping, replay
//	dlq/queuetest                       the conformance suite of dead letter queues
//	dlq/sqlite, dlq/redis               (own modules) durable and fleet queues
//	cmd/dlq                             (own module) the operator's command line
//	otelretry                           (own module) OpenTelemetry metrics and trace events: one Observer for every component
//	internal/argerr, internal/keys      the one invalid-argument error; the one key rule set
//	internal/rng, internal/sched        the loop's per-call random numbers; schedule arithmetic
//	internal/redisbound                 (own module) bounds each Redis call of breaker/redis and limit/redis by its context
//	internal/pgtest                     (own module) a real PostgreSQL per test package, a database per test; a proxy that loses a COMMIT
//	internal/redistest                  (own module) a real redis-server per test, on a free port (kill, SIGSTOP, AOF)
//	internal/matrix                     (own module) one test: every stage of the pipeline at every entry point
//	examples/                           runnable programs (own module)
//	bench/                              the peers side by side, the herd simulation (own module)
//
// Every nested module requires the root module (and the others it uses) at a
// real version, v0.1.0; in this repository go.work and each module's
// replace lines tie them to the local tree.
package retry
