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
package limit
