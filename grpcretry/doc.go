// Package grpcretry retries gRPC client calls by the same rules as the
// library's HTTP client: unary and stream client interceptors that run
// every call through the retry loop of a retry.Retrier — one loop, one
// policy language for both wires, the same budget, rate limiters, breakers,
// cooldowns, hooks and errors.
//
//	i, err := grpcretry.New(grpcretry.WithRetrier(r))
//	opts, err := i.DialOptions() // the interceptors, and grpc.WithDisableRetry()
//	cc, err := grpc.NewClient(target, append(opts, creds)...)
//
// DialOptions disables grpc-go's own retries (a service config's
// retryPolicy): two loops would multiply, 3×3 = 9 calls for one. grpc-go's
// transparent retry — of a call that never reached the server's
// application — stays on: it repeats nothing.
//
// Every attempt runs under the call's context: its deadline, which the
// server sees, and the Retrier's attempt timeout, if any. A failed call
// returns the *retry.Error that ended it; status.Code and status.FromError
// find the last attempt's status through it. A call that the caller's
// context ended returns an *EndedError around it, whose status is the
// context's (CANCELLED, DEADLINE_EXCEEDED), as grpc-go reports such a call.
//
// # The status table
//
// Classify is the table as a classify.Func. The interceptors apply it after
// the caller's own classifiers (WithClassifier; a retry.WithClassifier of
// the Retrier sees the classified error first too), so either can override
// any row.
//
//	| code                                    | decision                                                |
//	| --------------------------------------- | ------------------------------------------------------- |
//	| UNAVAILABLE                             | retry                                                   |
//	| DEADLINE_EXCEEDED                       | retry only if idempotent or keyed: the server may still  |
//	|                                         | be running it; never after the caller's own deadline    |
//	| RESOURCE_EXHAUSTED                      | retry only when the server says when (pushback or       |
//	|                                         | RetryInfo); otherwise final, like a spend cap: it may   |
//	|                                         | be a quota measured in hours (AIP-194)                  |
//	| INTERNAL, UNKNOWN                       | retry once per call, like an HTTP 500: a proxy's reset   |
//	|                                         | stream or a handler's plain error shows as these, and   |
//	|                                         | a second failure says it is not transient               |
//	| ABORTED                                 | final: the gRPC guide says retry "at a higher level" —  |
//	|                                         | the whole read-modify-write, not the one call; wrap the |
//	|                                         | sequence in a Retrier of its own for that               |
//	| CANCELLED, INVALID_ARGUMENT, NOT_FOUND, | final                                                   |
//	| ALREADY_EXISTS, PERMISSION_DENIED,      |                                                         |
//	| UNAUTHENTICATED, FAILED_PRECONDITION,   |                                                         |
//	| OUT_OF_RANGE, UNIMPLEMENTED, DATA_LOSS  |                                                         |
//
// Every row has a fixed Reason (ReasonUnavailable, …), fit for a metric
// attribute; an error that carries no status gets no opinion, and the
// Retrier's own classifiers decide.
//
// # Server pushback
//
// The server's wait is authoritative, like HTTP's Retry-After: the
// grpc-retry-pushback-ms trailer (gRFC A6) and a google.rpc.RetryInfo detail
// both set it (the longer wins), and the call never retries earlier. A wait
// longer than the policy's MaxDelay is returned at once (retry.ErrWaitTooLong,
// the wait in Error.RetryAfter), not slept. A negative, malformed or repeated
// pushback means "do not retry" (ReasonPushbackStop). A wait makes only
// RESOURCE_EXHAUSTED retryable: it never turns a final row into a retry
// (Spanner sends RetryInfo with ABORTED, for the whole transaction).
//
// # Which calls are repeated
//
// A call is idempotent when its method descriptor, registered in
// protoregistry.GlobalFiles (or WithFiles), has idempotency_level
// NO_SIDE_EFFECTS or IDEMPOTENT — grpc-go itself ignores the option — or
// when WithIdempotentMethods names it. A call is keyed when it carries an
// idempotency key: from retry.WithIdempotencyKey, sent as the MetadataKey
// metadata, or set in that metadata by the caller; the same key goes with
// every attempt.
//
// The gate: an attempt that failed after it reached the server (it had a
// transport stream) may have been processed. For a call that is neither
// idempotent nor keyed, its failure is a "may still be running" decision
// (classify.Decision.Timeout), which the loop retries only under
// retry.Idempotent(); otherwise the call ends with retry.ErrNotIdempotent —
// the error of a timed-out attempt, for the same reason: the server may
// still be running it. An
// attempt that never left the client — no connection, the picker failed it —
// repeats nothing and is retried by the table, whatever the method. (A call
// refused by the server before its application saw it, REFUSED_STREAM or
// GOAWAY, grpc-go already retries transparently.)
//
// # Streams
//
// A server-streaming call is retried only until its first message: the
// stream opens at the first RecvMsg, and a failure after a message arrived is
// never retried — RecvMsg returns a *stream.Error[any] with the messages
// delivered so far, the rule and type of stream.Open. Client-streaming and
// bidirectional calls are not replayed: only their opening, which sends no
// message, is retried — unless WithReplayableStreams names them; then what
// the caller sent before the first reply is kept and sent again on each new
// attempt, up to MaxReplay bytes (grpc-go's retry buffer): past it, the
// stream is sent once.
//
// # Breakers, cooldowns and budgets
//
// WithBreakers gives each (target, method) its own breaker around the
// retried call; WithCooldowns makes a (target, method) that answered
// UNAVAILABLE with a server wait fail locally until the wait is over. The
// retry budget is the Retrier's (retry.WithBudget), shared with HTTP calls
// if the caller wants. Each reports through its own hook; the Retrier's
// hooks and logger see every attempt.
//
// # Rate limiters
//
// A limiter is the Retrier's (retry.WithLimiter): a limit.Adaptive, a
// limit.Throttler, limit/redis's fleet Limiter, or any limit.Limiter. The
// loop asks it before every attempt, the first included, and tells it how
// each attempt ended; a RESOURCE_EXHAUSTED with the server's wait (pushback
// or RetryInfo) is a throttled answer, like an HTTP 429 with Retry-After.
// A limit belongs to a dependency, so give each target a Retrier with a
// limiter of its own, or share one Retrier with a limit.Keyed per (target,
// method): WithTargetMethodContext puts each call's (target, method) in the
// loop's context, and TargetMethodOf is the Keyed's key function.
//
//	keyed, err := limit.NewKeyed(grpcretry.TargetMethodOf, func(breaker.HostModel) (limit.Limiter, error) {
//		return limit.NewAdaptive(limit.AdaptiveConfig{})
//	}, 0)
//	r, err := retry.New(retry.WithLimiter(keyed))
//	i, err := grpcretry.New(grpcretry.WithRetrier(r), grpcretry.WithTargetMethodContext())
//
// A call the limiter refuses sends nothing and is never retried: it returns
// the loop's *retry.Error with the reason retry.ErrLimited, whose gRPC
// status is RESOURCE_EXHAUSTED — the code gRPC gives a limit the client
// itself hit — with the loop's message ("retry: refused locally by the
// client-side rate limiter, nothing sent …"). Not UNAVAILABLE, which every
// retry layer around this one would retry; and not the last attempt's code,
// which is the server's, or UNKNOWN when nothing was sent.
//
// # Defaults
//
//	| setting                    | default                                                    |
//	| -------------------------- | ---------------------------------------------------------- |
//	| Retrier                    | retry.New(): 3 attempts, exponential backoff from 100ms,   |
//	|                            | full jitter, MaxDelay 30s                                  |
//	| idempotent methods         | those whose descriptor says NO_SIDE_EFFECTS or IDEMPOTENT  |
//	| descriptors                | protoregistry.GlobalFiles                                  |
//	| replayed streams           | server-streaming calls only                                |
//	| breakers, cooldowns        | none                                                       |
//	| rate limiter               | none: the Retrier's (retry.WithLimiter)                    |
//	| (target, method) in ctx    | no (WithTargetMethodContext)                               |
//	| idempotency key metadata   | "idempotency-key" (MetadataKey)                            |
//
// # Compared with grpc-go's retry and go-grpc-middleware's
//
//	| behaviour              | grpcretry                    | grpc-go service config (A6) | go-grpc-middleware v2 retry |
//	| ---------------------- | ---------------------------- | --------------------------- | --------------------------- |
//	| configured with        | a retry.Retrier, Go options, | JSON per service/method     | interceptor and call options|
//	|                        | the same as for HTTP         |                             |                             |
//	| retries by default     | yes, 3 attempts              | no (transparent retry only) | no (WithMax defaults to 0)  |
//	| codes retried          | the table above              | those the config lists      | UNAVAILABLE,                |
//	|                        |                              |                             | RESOURCE_EXHAUSTED          |
//	| a call that reached    | repeated only if idempotent  | repeated (the config's      | repeated                    |
//	| the server             | (descriptor, list) or keyed  | author decides)             |                             |
//	| idempotency_level      | read                         | ignored                     | ignored                     |
//	| DEADLINE_EXCEEDED      | idempotent or keyed only;    | if listed; one deadline for | not retried if it is the    |
//	|                        | never past the caller's      | all attempts                | caller's; per-attempt       |
//	|                        | deadline                     |                             | timeout optional            |
//	| pushback trailer       | honoured; a wait over        | honoured, slept however     | ignored                     |
//	|                        | MaxDelay is returned         | long                        |                             |
//	| RetryInfo detail       | honoured like pushback       | ignored                     | ignored                     |
//	| backoff                | exponential, full jitter,    | exponential, jittered       | linear 50ms, ±10% jitter    |
//	|                        | capped; never a wait past    |                             |                             |
//	|                        | the deadline                 |                             |                             |
//	| server streaming       | until the first message;     | until the first header or   | until the first message;    |
//	|                        | partial output in the error  | message                     | error as is                 |
//	| client/bidi streaming  | opening only, or replayed    | replayed, up to a 256 KiB   | refused (UNIMPLEMENTED)     |
//	|                        | when declared, up to 256 KiB | buffer per call             | unless retries are off      |
//	| budget across calls    | retry.WithBudget (token      | retryThrottling per channel | none                        |
//	|                        | bucket or ratio, shared)     |                             |                             |
//	| breaker, cooldown      | per (target, method)         | none                        | none                        |
//	| client-side rate limit | retry.WithLimiter: adaptive, | none                        | none                        |
//	|                        | throttler, per (target,      |                             |                             |
//	|                        | method) with limit.Keyed     |                             |                             |
//	| observation            | retry hooks and slog, the    | channelz, stats handlers    | a retry callback, logs      |
//	|                        | error carries every attempt  |                             |                             |
package grpcretry
