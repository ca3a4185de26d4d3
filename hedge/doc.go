// Package hedge provides the delays of hedged calls (retry.NewHedger):
// how long a call waits for an attempt before it starts another alongside.
//
// Dean and Barroso ("The Tail at Scale", CACM 56(2), 2013) describe the
// technique: send a request, and if it has not answered within the 95th
// percentile of its expected latency, send a second copy and use whichever
// answers first. The extra load is about 5%, and the tail shrinks by an
// order of magnitude when slowness is transient (a busy server, a pause)
// rather than in the request itself.
//
//	| delay       | waits                                    | learns |
//	|-------------|------------------------------------------|--------|
//	| Fixed(d)    | d, on every call                         | no     |
//	| Adaptive    | a percentile of recent successful calls' | yes    |
//	|             | latencies, within a floor and a cap      |        |
//
// Zero fields of an AdaptiveConfig take these defaults:
//
//	| field      | zero value means                                           |
//	|------------|------------------------------------------------------------|
//	| Percentile | 0.95: hedge the slowest 5% of calls                        |
//	| Floor      | 1ms                                                        |
//	| Cap        | 1s; also the delay until the first estimate (16 calls)     |
//	| Window     | 1024 calls between estimates; each halves older latencies' |
//	|            | weight                                                     |
//
// Any type with Next and Observe is a Delay. Delays validate themselves
// (Validate); retry.NewHedger reports a bad one as a *retry.InvalidError
// naming the field and its value.
//
// # Hedged calls
//
// Retries fix failures; they do nothing for a call that is merely slow. A hedged call sends a
// second copy of a request that has not answered within a delay and takes whichever answers
// first — the remedy Dean and Barroso measured in "The Tail at Scale" (CACM 56(2), 2013).
//
//	func read(ctx context.Context, key string, shared budget.Budget) ([]byte, retry.Stats, error) {
//		delay, err := hedge.NewAdaptive(hedge.AdaptiveConfig{}) // the p95 of recent calls, within 1ms..1s
//		if err != nil {
//			return nil, retry.Stats{}, err
//		}
//		r, err := retry.New(
//			retry.Idempotent(),       // hedging runs the operation twice at once: only for work that may
//			retry.WithBudget(shared), // each hedge asks the budget, and counts as a retry
//		)
//		if err != nil {
//			return nil, retry.Stats{}, err
//		}
//		h, err := retry.NewHedger(r, delay, 2) // at most 2 attempts in flight
//		if err != nil {
//			return nil, retry.Stats{}, err
//		}
//		// st.Hedges: attempts started by the delay; st.Winner: the attempt that answered.
//		return retry.HedgeValue(ctx, h, func(ctx context.Context) ([]byte, error) { return fetch(ctx, key) })
//	}
//
//	func fetch(ctx context.Context, key string) ([]byte, error) { return []byte(key), ctx.Err() }
//
// (Build the Hedger and the Adaptive once and share them; they are built inline here to keep
// the snippet short. An Adaptive learns from the calls of the Hedger it is given to.)
//
//   - How it runs. The first attempt runs on the calling goroutine. If it has not finished after
//     the delay, a timer starts another alongside it on a goroutine of its own, up to maxInFlight
//     at once; the first success wins and the others' contexts are cancelled. A retryable failure
//     starts the next attempt at once; a server's wait (Retry-After, a gRPC pushback) is still
//     waited, and delays the next hedge too. The call returns when its winner has answered and the
//     losers have returned: no attempt outlives its call. MaxAttempts counts hedges;
//     MaxElapsed, the context's deadline and the retry budget still bound the call. A failure the
//     classifier says is permanent cancels the attempts in flight; a stop that only forbids new
//     attempts (attempts, elapsed, deadline, budget, limiter, breaker, a class's limit, the
//     server's "do not retry") lets them still win. When every attempt fails, the *retry.Error
//     lists every attempt's failure. An attempt that panics ends the call, and the panic reaches
//     the caller's goroutine once the other attempts have returned.
//   - Safe by construction. A hedged call that is neither idempotent (retry.Idempotent())
//     nor keyed (retry.WithIdempotencyKey) makes its attempts one at a time, with no hedges, as
//     the Retrier alone would; so does a call under retry.SingleAttempt.
//   - Every stage applies to every attempt, hedges included. The first attempt, and an attempt
//     after a failure, go through the cooldowns, the breaker and the limiter as a plain call's do
//     (the limiter may hold them their turn, within MaxDelay, MaxElapsed and the deadline). A
//     hedge is optional, so it waits for nothing: a hedge that the budget, the limiter (asked
//     without waiting), the breaker (per attempt) refuses, or whose key is cooling down, is not
//     sent (observe.HedgeSkipped, its Stop naming the stage), the attempts in flight go on,
//     and no other hedge comes until another attempt starts. Every attempt sent is reported to the
//     limiter (limit.OutcomeOf; a loser cancelled because another won is limit.Other), so a
//     throttler or an adaptive limiter sees the hedges it let go as the requests they are. A
//     breaker around the whole call gives a hedged call one permit, its hedges included.
//
// For example:
//
//	limiter, err := limit.NewAdaptive(limit.AdaptiveConfig{}) // one per dependency, shared
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.Idempotent(), retry.WithLimiter(limiter))
//	if err != nil {
//		return err
//	}
//	h, err := retry.NewHedger(r, hedge.Fixed(50*time.Millisecond), 2) // a hedge the limiter cannot let go at once is not sent
//	if err != nil {
//		return err
//	}
//	st, err := h.Run(ctx, op)
//	keep(st.Hedges) // the hedges sent; a skipped one is not counted
//	return err
//
// In detail:
//
//   - A Hedger is its own type. Hedging calls the operation from several goroutines, so the
//     operation must live on the heap; a Retrier's Do, Run and Value keep theirs on the
//     caller's stack — that is what makes them allocate nothing — and never hedge. A
//     retry.Hedger, built once from a Retrier with retry.NewHedger(r, delay, maxInFlight),
//     runs calls through that Retrier's stages with hedging: h.Do, h.Run (with the Stats)
//     and retry.HedgeValue(ctx, h, op). NewHedger refuses a nil Retrier, a bad delay or a
//     maxInFlight below 2 with a *retry.InvalidError; no call is refused for hedging.
//   - Visible. Stats.Hedges, Stats.Winner, the observer's observe.HedgeStarted and
//     observe.HedgeSkipped events, and a DEBUG line from retry.WithLogger. Observers see one
//     success per call: a loser's AttemptDone carries the error it returned, or
//     context.Canceled if it succeeded after the winner, and Event.Started is the number of
//     attempts the call had started.
//   - HTTP and gRPC. httpretry.WithHedging(delay, maxInFlight) hedges the requests the
//     transport may repeat — GET, HEAD, OPTIONS, PUT, DELETE, TRACE and keyed requests (a POST
//     without a key is still sent exactly once) — replays bodies with GetBody, and drains and
//     closes every response but the winner's; the Retrier's breakers apply to hedges like every
//     stage. grpcretry.WithHedging(delay, maxInFlight) hedges unary calls of idempotent methods
//     and keyed calls, as gRFC A6's hedging policy does.
//   - Cost. A hedged call whose first attempt answers before the delay starts no goroutine and
//     allocates 2 objects (its attempt's cancellable context); the call's state and timer are kept
//     for reuse. In one run on the shared 2-core machine it cost 400–800 ns more than the plain
//     call (failsafe-go's hedge policy: 3.1–4.7 µs and 24 allocations); see bench/README.md.
//
// # When to hedge, when not
//
// Hedge when the slowness is in the server, not in the request, and transient: garbage
// collection, a busy neighbour, a queue behind one slow request, a packet lost and resent. Then a
// copy sent elsewhere, or a little later, is very likely fast, and hedging at the p95 buys an
// order of magnitude in the tail for about 5 % more requests. Reads, idempotent writes, keyed
// writes; fan-outs most of all, where one slow key in a thousand holds the whole operation.
//
// Do not hedge:
//
//   - work that may not run twice (the library makes its attempts one at a time): a charge, an email, an LLM call
//     billed per attempt — unless it carries an idempotency key the server honours;
//   - when the request itself is slow (a large scan, a cold cache miss that every copy will
//     also miss): every copy is slow, and the hedge only doubles the work;
//   - a light-tailed service (p99.9 within a few times the median): the hedge must wait for the
//     p95 before it starts, by which time the first copy is nearly done — in the experiment below
//     it gained nothing and cost 5 % more requests;
//   - a dependency that is overloaded (queueing): a hedge is more load on the servers that are
//     slow because of load. Keep the delay at the p95 or later, keep a retry budget (each hedge asks
//     it), and prefer one hedge to several.
//
// The experiment, go run ./bench/tail, is in bench/README.md ("The Tail at Scale, in simulation").
package hedge
