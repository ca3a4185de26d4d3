// Package limit paces the attempts of callers who share one rate limit, so
// that they stop spending requests to learn that the limit holds.
//
// A retry policy handles a 429 correctly — it waits the Retry-After — but
// each 429 is a request spent for nothing, and a hundred workers sharing one
// API key spend most of their calls that way. A Limiter is shared by all of
// them: retry.WithLimiter asks it before every attempt, the first included,
// and tells it how each attempt ended (OutcomeOf: accepted, throttled with
// the server's Retry-After, or other).
//
//	| limiter   | what it does                                        | after                   |
//	|-----------|-----------------------------------------------------|-------------------------|
//	| Adaptive  | a token bucket whose rate follows the server's:     | the AWS SDKs' adaptive  |
//	|           | cut to the rate the server accepted on a 429, grown | retry mode (CUBIC),     |
//	|           | back along CUBIC's curve, then probed slowly;       | improved                |
//	|           | callers wait their turn in line                     |                         |
//	| Throttler | refuses attempts locally with probability           | Google SRE, "Handling   |
//	|           | max(0, (requests − K·accepts)/(requests + 1))       | Overload"               |
//
// Keyed keeps a limiter per key — an API key, a host, a (host, model) — made
// on first use, each call's key read from its context: one key's limit does
// not slow another's (12 ns to find a key's limiter, bench: KeyedAcquire).
//
// Which one: an Adaptive limiter for a rate limit (429s), shared by every
// caller of the limit — one per API key, or per host and model — and, for a
// fleet sharing a key, its Redis form in the nested module limit/redis. A
// Throttler for a backend that fails under overload, to shed load before it
// is sent; it does not pace, and it refuses nothing while the backend
// accepts one request in K. A retry budget (package budget) bounds retries
// only; combine it with either. bench/ratelimit compares them.
//
// Zero fields of the configurations take these defaults:
//
//	| field                    | zero value means                               | from                 |
//	|--------------------------|------------------------------------------------|----------------------|
//	| AdaptiveConfig.MinRate   | 0.5 attempts a second at least                 | AWS minFillRate      |
//	| AdaptiveConfig.Beta      | a 429 cuts to 0.9 of the rate accepted         | AWS: 0.7 of the rate |
//	|                          | in the last Window                             | sent                 |
//	| AdaptiveConfig.Scale     | CUBIC's C = 0.4                                | AWS scaleConstant    |
//	| AdaptiveConfig.Probe     | past the last accepted rate, +2% of it a       | (CUBIC: the cube)    |
//	|                          | second; the cube again after Patience (10s),   |                      |
//	|                          | at once after a timeout's cut                  |                      |
//	| AdaptiveConfig.Burst     | 100ms of tokens at the current rate            |                      |
//	| AdaptiveConfig.Hold      | 100ms: 429s that soon after a cut are ignored  |                      |
//	| AdaptiveConfig.Window    | rates measured over the last 1s                |                      |
//	| AdaptiveConfig.Timeouts  | false: a timeout says nothing of the rate      |                      |
//	|                          | (true: a throttle, back to the rate before)    |                      |
//	| AdaptiveConfig.Start     | 0: no limit until the first 429 (a rate: start | TCP's slow start     |
//	|                          | there, double every Window/10 while used)      |                      |
//	| AdaptiveConfig.Now       | the monotonic clock                            |                      |
//	| ThrottlerConfig.K        | 2                                              | Google SRE           |
//	| ThrottlerConfig.Window   | 10s, sliding by a tenth                        |                      |
//	| ThrottlerConfig.Rand     | math/rand/v2, no lock                          |                      |
//	| ThrottlerConfig.Now      | the monotonic clock                            |                      |
//
// The clocks are a seam for simulations: bench/ratelimit and bench/storm
// run the limiters' own code on virtual time. Tests of code that uses a limiter need no fake
// clock of their own: testing/synctest fakes the default one.
//
// Both limiters are safe for concurrent use, and lock-free and free of
// allocations while they need not wait: asking an Adaptive the server never
// throttled is one atomic load, one with tokens in its bucket an atomic add
// and two loads, and asking a Throttler that refuses nothing one atomic load
// (bench: LimitAcquire, 1–7 ns from one goroutine or every core). Rate and
// RejectProbability report their state, for metrics.
//
// A limiter must be made by its constructor, which validates the
// configuration and returns an error matching retry.ErrInvalid that names the
// field and its value. A nil or zero Adaptive or Throttler refuses every
// attempt without panicking, and its Validate method — which
// retry.WithLimiter calls — reports it.
//
// # Budgets, limiters, throttlers: which one
//
// A retry policy waits out a 429 correctly, but every 429 is a request spent
// to learn that the limit still holds; a hundred workers sharing one API key
// spend most of their calls that way. Three shared mechanisms bound what a
// process sends, and they answer different questions:
//
//	| mechanism | asked | refuses or waits when | use it for |
//	| --- | --- | --- | --- |
//	| retry budget (`budget.NewTokenBucket`, `budget.NewRatio`) | before each retry | retries are too large a share of the traffic | a dependency that is down: stop multiplying the load by the retries |
//	| adaptive limiter (`limit.NewAdaptive`) | before every attempt, the first too | the attempt's turn at the rate the server accepts has not come (it waits, within `MaxDelay` and the deadline) | a rate limit (429): send at the limit instead of above it |
//	| throttler (`limit.NewThrottler`) | before every attempt | with probability max(0, (requests − K·accepts)/(requests + 1)) over 10 s | a backend that fails under overload: shed load before it is sent |
//
// For example:
//
//	// One limiter per API key (or per host and model), shared by every worker.
//	limiter, err := limit.NewAdaptive(limit.AdaptiveConfig{})
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithPolicy(policy.LLMCall()), retry.WithLimiter(limiter))
//	if err != nil {
//		return err
//	}
//	err = r.Do(ctx, generate)
//	if errors.Is(err, retry.ErrLimited) {
//		// Refused locally, nothing sent: requeue the job rather than retry at once.
//	}
//	return err
//
// The loop asks the limiter before every attempt and tells it how each ended
// (limit.OutcomeOf: accepted, throttled with the server's Retry-After, or
// other). A refusal — or a turn that would come later than MaxDelay,
// MaxElapsed or the context's deadline allow — ends the call with
// retry.ErrLimited, which says the refusal was local and nothing was sent; it
// is never retried. limit.Adaptive starts from the AWS SDKs' adaptive retry
// mode (a token bucket whose rate follows a CUBIC curve) and changes what wastes
// capacity: a 429 cuts the rate to 0.9 × the rate the server *accepted* in the
// last second (AWS: 0.7 × the rate *sent*, which above the limit is still above
// it), one cut per episode (429s within 100 ms of a cut answer attempts sent
// before it), the rate is not probed above the last accepted rate before the
// server's Retry-After has passed, and beyond it it grows by 2 % a second, not
// as a cube, because the server's bucket — refilled while the client was below
// the limit — hides an overshoot for seconds. Callers wait their turns in line,
// and a cut slows the turns already promised. Asking for permission costs 1–7 ns
// and no allocation while tokens are available, from one goroutine or every core
// (bench/: LimitAcquire); the rate (Rate()) and the throttler's
// RejectProbability() are there for metrics. Limits that belong to
// a key get a limiter per key: limit.NewKeyed makes them on first use and reads
// each call's key from its context; keyed by the call key (breaker.KeyOf), it
// limits each HTTP request's (host, model), which httpretry sets, or each gRPC
// call's (target, method) — see the second snippet below.
//
// A limiter's wait is visible like a retry's: observers receive an observe.LimiterWaited event just
// before the attempt it held (Attempt, and Delay: how long it was held), and
// retry.WithLogger logs it at INFO from one second, at DEBUG below. A permission given at
// once is no wait and reports nothing; a refusal is the call's GaveUp, with retry.ErrLimited
// (Stop policy.StopLimited).
// limit.OutcomeOf reads gRPC too: a RESOURCE_EXHAUSTED with a server wait (a pushback
// trailer or a RetryInfo detail) is throttled, with that wait, like a 429 with Retry-After;
// one without a wait is a quota, not a rate, and says nothing (Other), as UNAVAILABLE and
// the caller's CANCELLED do; codes the server answered for good (NOT_FOUND,
// INVALID_ARGUMENT, …) are accepted.
//
//	slow := retry.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
//		if e.Kind == observe.LimiterWaited && e.Delay > time.Second {
//			slog.WarnContext(ctx, "held by the rate limiter", "attempt", e.Attempt, "wait", e.Delay)
//		}
//	}))
//	limiter, err := limit.NewAdaptive(limit.AdaptiveConfig{})
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithLimiter(limiter), slow)
//	if err != nil {
//		return err
//	}
//	return r.Do(ctx, generate)
//
// And:
//
//	perModel, err := limit.NewKeyed(breaker.KeyOf,
//		func(breaker.Key) (limit.Limiter, error) { return limit.NewAdaptive(limit.AdaptiveConfig{}) }, 0)
//	if err != nil {
//		return err
//	}
//	paced, err := retry.New(retry.WithLimiter(perModel))
//	if err != nil {
//		return err
//	}
//	httpClient, err := httpretry.NewClient(paced, // sets each request's (host, model) as its call key
//		httpretry.WithModel(func(req *http.Request) string { return req.Header.Get("X-Model") }))
//	if err != nil {
//		return err
//	}
//
// A fleet that shares one key shares one limiter through Redis: limit/redis
// (one Lua round trip per permission, local limiting within 200 ms when Redis is
// away).
//
// The experiment that compares them on a model of a shared rate limit (go run ./bench/ratelimit) is in bench/README.md, "Client-side rate limiting".
package limit
