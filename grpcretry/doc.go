// Package grpcretry retries gRPC client calls by the same rules as the
// library's HTTP client: unary and stream client interceptors that make
// every call one call of a retry.Retrier — one policy language for both
// wires, and the Retrier's stages: cooldowns, breakers, rate limiter,
// attempt timeout, budget, observers, errors. The interceptors are a thin
// adapter: they give each call its key, turn gRPC's answers into errors the
// Retrier's classifiers read, and leave every decision to the Retrier.
//
//	r, err := retry.New(…)                  // policy and stages, shared with HTTP calls if wanted
//	i, err := grpcretry.New(r)
//	opts, err := i.DialOptions()            // the interceptors, and grpc.WithDisableRetry()
//	cc, err := grpc.NewClient(target, append(opts, creds)...)
//
// DialOptions disables grpc-go's own retries (a service config's
// retryPolicy): two loops would multiply, 3×3 = 9 calls for one. grpc-go's
// transparent retry — of a call that never reached the server's
// application — stays on: it repeats nothing.
//
// Every attempt runs under the call's context: its deadline, which the
// server sees, and the Retrier's attempt timeout, if any. A retried or
// hedged attempt carries the grpc-previous-rpc-attempts metadata (gRFC A6):
// how many attempts of the call were sent before it; the first carries none.
//
// # The status table
//
// Classify is the table as a classify.Func. The interceptors mark each
// failure with its row (classify.Mark): protocol knowledge, which a
// classifier given to the Retrier (retry.WithClassifier) sees first and may
// override. A code outside the table has UNKNOWN's row.
//
//	| code                                    | decision                                                |
//	| --------------------------------------- | ------------------------------------------------------- |
//	| UNAVAILABLE                             | retry                                                   |
//	| DEADLINE_EXCEEDED                       | retry only if idempotent or keyed: the server may still  |
//	|                                         | be running it; never after the caller's own deadline    |
//	|                                         | (classify.ReasonGRPCCallerDeadline)                     |
//	| RESOURCE_EXHAUSTED                      | retry only when the server says when (pushback or       |
//	|                                         | RetryInfo); otherwise final, like a spend cap: it may   |
//	|                                         | be a quota measured in hours (AIP-194)                  |
//	| INTERNAL, UNKNOWN, a code past the      | retry once per call, like an HTTP 500: a proxy's reset   |
//	| table                                   | stream or a handler's plain error shows as these, and   |
//	|                                         | a second failure says it is not transient               |
//	| ABORTED                                 | final: the gRPC guide says retry "at a higher level" —  |
//	|                                         | the whole read-modify-write, not the one call; wrap the |
//	|                                         | sequence in a Retrier of its own for that               |
//	| CANCELLED, INVALID_ARGUMENT, NOT_FOUND, | final                                                   |
//	| ALREADY_EXISTS, PERMISSION_DENIED,      |                                                         |
//	| UNAUTHENTICATED, FAILED_PRECONDITION,   |                                                         |
//	| OUT_OF_RANGE, UNIMPLEMENTED, DATA_LOSS  |                                                         |
//
// Every row has a fixed Reason, classify.ReasonGRPC… (classify.ReasonGRPCUnavailable,
// …), fit for a metric attribute; an error that carries no status is left
// to the Retrier's own classifiers.
//
// # Server pushback
//
// The server's wait is authoritative, like HTTP's Retry-After: the
// grpc-retry-pushback-ms trailer (gRFC A6) and a google.rpc.RetryInfo detail
// both set it (the longer wins). It is what the server said, marked with
// classify.Said, which the Retrier applies after every classifier: no
// classifier, the caller's included, retries earlier than the server asked,
// nor retries when it said not to. A wait longer than the policy's MaxDelay
// is returned at once (retry.ErrWaitTooLong, the wait in Error.RetryAfter),
// not slept. A negative, malformed or repeated pushback means "do not
// retry" (classify.ReasonGRPCPushbackStop). A wait makes only
// RESOURCE_EXHAUSTED retryable: it never turns a final row into a retry
// (Spanner sends RetryInfo with ABORTED, for the whole transaction). An
// UNAVAILABLE with a wait starts its (target, method)'s cooldown when the
// Retrier has cooldowns (retry.WithCooldowns).
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
// idempotent nor keyed, a retryable row becomes a "may still be running"
// decision (classify.Decision.Timeout), which the Retrier retries only under
// retry.Idempotent(); otherwise the call ends with retry.ErrNotIdempotent —
// the error of a timed-out attempt, for the same reason: the server may
// still be running it. An attempt that never left the client — no
// connection, the picker failed it — repeats nothing and is retried by the
// table, whatever the method. (A call refused by the server before its
// application saw it, REFUSED_STREAM or GOAWAY, grpc-go already retries
// transparently.) A caller's classifier that says Retry decides alone: it
// should set Timeout for a failure that may have been processed.
//
// # Hedging
//
// WithHedging hedges unary calls as gRFC A6's hedging policy does, through
// a retry.Hedger built on the Retrier: the first attempt goes at once, and
// each time the hedging delay passes without an answer another starts
// alongside, up to the Retrier's MaxAttempts in all (hedges count) and
// maxInFlight at once. The first success wins; the others are cancelled. A
// failure with a retryable row is what A6 calls non-fatal: the next attempt
// goes at once, without a backoff. A fatal one — a final row — cancels the
// others and ends the call. A server's "do not retry" pushback stops the
// hedges — those in flight may still win — and a pushback's wait delays the
// next attempt, and the next hedge after it. Every hedge goes through the
// Retrier's stages; one that the budget, the limiter, a breaker or a
// cooldown would not let go at once is skipped (observe.HedgeSkipped).
//
// Only a call that may run twice at once is hedged: an idempotent method
// (by descriptor or WithIdempotentMethods), a keyed call, or any call of a
// retry.Idempotent Retrier; any other makes its attempts one at a time, as
// without hedging. So does a call whose reply is not a proto message (each
// hedge needs a reply of its own; the winner's is copied into the
// caller's), and a call given grpc.Header, grpc.Trailer or grpc.Peer
// (several attempts would write them at once). WithHedging hedges unary
// calls; streams are retried, not hedged: a stream's attempts go one at a
// time.
//
// # Streams
//
// A server-streaming call is retried only until its first message: the
// stream opens at the first RecvMsg, and a failure after a message arrived is
// never retried — RecvMsg returns a *stream.Error[any] with the messages
// delivered so far, the rule and type of stream.Open. Header or Context
// called before the first message opens the stream once, without retries,
// as grpc-go commits a stream then: the caller has what that attempt gave.
// Client-streaming and bidirectional calls are not replayed: only their
// opening, which sends no message, is retried — unless WithReplayableStreams
// names them; then what the caller sent before the first reply is kept and
// sent again on each new attempt, up to 256 KiB (grpc-go's retry buffer):
// past it, the stream is sent once, and a failure before its first reply
// ends the call (classify.ReasonGRPCReplayOverflow).
//
// # Breakers, cooldowns, limiters and budgets
//
// They are the Retrier's stages (retry.WithBreakers, retry.WithCooldowns,
// retry.WithLimiter, retry.WithBudget), shared with HTTP calls if the caller
// wants. Each call's key is breaker.Key{Target: the ClientConn's target,
// Operation: the full method name}, set in the call's context
// (breaker.WithKey) when a stage of the Retrier reads it (its Keyed method): a
// breaker and a cooldown per (target, method), and, with a limit.Keyed keyed
// by breaker.KeyOf, a limiter per (target, method):
//
//	keyed, err := limit.NewKeyed(breaker.KeyOf, func(breaker.Key) (limit.Limiter, error) {
//		return limit.NewAdaptive(limit.AdaptiveConfig{})
//	}, 0)
//	r, err := retry.New(retry.WithLimiter(keyed))
//	i, err := grpcretry.New(r)
//
// A RESOURCE_EXHAUSTED with the server's wait (pushback or RetryInfo) is a
// throttled answer for the limiter, like an HTTP 429 with Retry-After.
//
// # The status of a failed call
//
// A failed call returns the Retrier's *retry.Error (or an error wrapping
// it), whose Stop says why it stopped; its gRPC status — what status.Code
// and status.FromError report — follows from that reason, one row per
// policy.Stop:
//
//	| why the call stopped (policy.Stop)       | status                                              |
//	| ---------------------------------------- | --------------------------------------------------- |
//	| permanent, not-idempotent, max-attempts, | the last attempt's: the server's answer             |
//	| class-limit, budget                      |                                                     |
//	| wait-too-long, elapsed, deadline         | the last attempt's; UNAVAILABLE when a cooldown     |
//	|                                          | stopped the call before it sent anything            |
//	| limited: the Retrier's limiter refused   | RESOURCE_EXHAUSTED, the code gRPC gives a limit the |
//	|                                          | client itself hit, with the Retrier's message       |
//	|                                          | ("retry: refused locally by the client-side rate   |
//	|                                          | limiter, nothing sent …"); not UNAVAILABLE, which   |
//	|                                          | every retry layer around this one would retry       |
//	| breaker-open                             | UNAVAILABLE, with the Retrier's message             |
//	| key-required                             | FAILED_PRECONDITION, with the Retrier's message     |
//	| canceled: the caller's context ended it  | the context's, CANCELLED or DEADLINE_EXCEEDED, as   |
//	|                                          | grpc-go reports it: an *EndedError                  |
//
// errors.Is finds the reason's sentinel (retry.ErrLimited, …) and
// errors.As the *retry.Error, whatever the status.
//
// # Defaults
//
//	| setting                    | default                                                    |
//	| -------------------------- | ---------------------------------------------------------- |
//	| Retrier (the zero          | retry.New(): 3 attempts, exponential backoff from 100ms,   |
//	| Interceptor's)             | full jitter, MaxDelay 30s, a retry budget; one Retrier,    |
//	|                            | and so one budget, for every zero Interceptor              |
//	| idempotent methods         | those whose descriptor says NO_SIDE_EFFECTS or IDEMPOTENT  |
//	| descriptors                | protoregistry.GlobalFiles                                  |
//	| replayed streams           | server-streaming calls only                                |
//	| hedging                    | none (WithHedging)                                         |
//	| call key in the context    | only when a stage of the Retrier reads it                  |
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
//	| pushback trailer       | honoured, over any           | honoured, slept however     | ignored                     |
//	|                        | classifier; a wait over      | long                        |                             |
//	|                        | MaxDelay is returned         |                             |                             |
//	| RetryInfo detail       | honoured like pushback       | ignored                     | ignored                     |
//	| backoff                | exponential, full jitter,    | exponential, jittered       | linear 50ms, ±10% jitter    |
//	|                        | capped; never a wait past    |                             |                             |
//	|                        | the deadline                 |                             |                             |
//	| hedging                | unary calls, idempotent or   | hedgingPolicy (grpc-go does | none                        |
//	|                        | keyed only (WithHedging)     | not implement it)           |                             |
//	| grpc-previous-rpc-     | sent on every retried or     | sent                        | not sent                    |
//	| attempts               | hedged attempt               |                             |                             |
//	| server streaming       | until the first message (or  | until the first header or   | until the first message;    |
//	|                        | Header, Context); partial    | message (or Context)        | error as is                 |
//	|                        | output in the error          |                             |                             |
//	| client/bidi streaming  | opening only, or replayed    | replayed, up to a 256 KiB   | refused (UNIMPLEMENTED)     |
//	|                        | when declared, up to 256 KiB | buffer per call             | unless retries are off      |
//	| budget across calls    | retry.WithBudget (token      | retryThrottling per channel | none                        |
//	|                        | bucket or ratio, shared)     |                             |                             |
//	| breaker, cooldown      | the Retrier's, per (target,  | none                        | none                        |
//	|                        | method)                      |                             |                             |
//	| client-side rate limit | retry.WithLimiter: adaptive, | none                        | none                        |
//	|                        | throttler, per (target,      |                             |                             |
//	|                        | method) with limit.Keyed     |                             |                             |
//	| observation            | the Retrier's observers and  | channelz, stats handlers    | a retry callback, logs      |
//	|                        | slog; the error carries      |                             |                             |
//	|                        | every attempt                |                             |                             |
package grpcretry
