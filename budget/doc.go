// Package budget limits retries across every call that shares a budget, so
// that a dependency failing for everyone is not hammered by everyone's
// retries.
//
// A retry policy bounds one call: three attempts, say. When a dependency goes
// down, every call's first attempt fails and every call retries: the load on
// the dependency triples at the moment it can least take it. A budget is
// shared by all those calls. It lets retries through while they are a small
// share of the traffic and refuses them once they are not; a refused call
// ends at once with its last error (retry.ErrBudget), the point where a caller
// hands the work to a dead letter queue. Give one budget to retry.WithBudget
// on every Retrier that calls the same dependency.
//
//	| budget      | refuses a retry when                              | after                      |
//	|-------------|---------------------------------------------------|----------------------------|
//	| TokenBucket | its tokens are at or below the threshold: each    | gRPC's retry throttling,   |
//	|             | transient failure takes tokens, each success puts | with the AWS SDKs' numbers |
//	|             | some back                                         |                            |
//	| Ratio       | the window's retries reach Percent of its first   | Finagle's RetryBudget      |
//	|             | attempts, plus a floor of MinPerSecond            |                            |
//
// Any type with Record and Allow is a Budget. Zero fields of the
// configurations take these defaults:
//
//	| field                         | zero value means                            | from                   |
//	|-------------------------------|---------------------------------------------|------------------------|
//	| TokenBucketConfig.Capacity    | 500 tokens, the bucket full at the start    | AWS standard mode      |
//	| TokenBucketConfig.Cost        | 5 tokens per transient failure              | AWS RETRY_COST (1)     |
//	| TokenBucketConfig.TimeoutCost | 10 tokens per timeout                       | AWS RETRY_TIMEOUT_COST |
//	| TokenBucketConfig.Refund      | 1 token back per success                    | AWS NO_RETRY_INCREMENT |
//	| TokenBucketConfig.Threshold   | Capacity/2: no retry at or below 250 tokens | gRPC (gRFC A6)         |
//	| RatioConfig.Percent           | 0.2: retries up to 20% of first attempts    | Finagle                |
//	| RatioConfig.Window            | 10s                                         | Finagle's ttl          |
//	| RatioConfig.MinPerSecond      | 10 retries a second (negative: no floor)    | Finagle                |
//
// (1) The AWS SDK for Go v2's standard mode used these until v1.48.0; it now
// takes 14 tokens for any retry, timeouts included. The library keeps 5 and
// 10, which close the bucket after 25 timeouts or 50 failures: bench/storm
// shows a shared default bucket recovering from a stall as fast as no
// retries with either.
//
// Both budgets are safe for concurrent use and lock-free; a first attempt that
// succeeds costs a TokenBucket one atomic load while the bucket is full, and a
// Ratio a read of the monotonic clock and one compare-and-swap. Their State
// methods return snapshots for metrics.
//
// A budget must be made by its constructor, which validates the configuration
// and returns an error matching retry.ErrInvalid that names the field and its
// value. A zero or nil TokenBucket or Ratio is not a budget: it refuses every
// retry and counts nothing, without panicking, and its Validate method — which
// retry.WithBudget calls — reports it.
//
// # Sharing a budget
//
//	| budget | model | defaults (source) | hot path |
//	| --- | --- | --- | --- |
//	| `NewTokenBucket` | a transient failure takes tokens (a timeout more), a success puts some back, no retry at or below the threshold | capacity 500, cost 5, timeout cost 10, refund 1 (AWS SDK for Go v2 standard retry mode before v1.48); threshold half the capacity (gRPC gRFC A6) | one atomic load per success while full |
//	| `NewRatio` | retries in the window at most a share of the first attempts in it, plus a floor per second | 20 %, 10 s window, 10 retries/s (Finagle `RetryBudget`) | one clock read and one atomic add per call |
//
// Every Retrier has a token bucket with these defaults unless it is given a
// budget (WithBudget) or none (WithoutBudget()): it lets retries through
// while failures are rare, and stops them within a few dozen failures when a
// dependency fails for everyone, so that the retries of a Retrier shared by a
// process's calls cannot keep a stalled dependency down after it comes back
// (see "Retry storms" in bench/README.md). Build the
// Retrier once and share it: a Retrier built per call (retry.Do with
// options) has a bucket per call, which protects nothing. A transaction's
// serialization failure or deadlock, or an idempotency key in progress, does
// not spend it: the dependency works, the work contends.
//
// Both are lock-free, shared by any number of Retriers and goroutines, and
// observable (State(): tokens or ratio, retries left, denials). When a budget
// refuses, the call ends at once with the last error and ErrBudget — distinct
// from ErrExhausted, and the point to hand the work to a dead letter queue.
// Against a dependency that is down, 1,000 callers with 3 retries each make
// 4,000 calls without a budget, 1,049 with the default token bucket and 1,300
// with the default ratio budget (TestBudgetsBoundTheCallsToADeadDependency).
//
// # Retry storms
//
// A dependency that stalls for 10 s makes every caller's attempts time out; retries that keep
// its queue full after it returns make the outage permanent. The defaults prevent that when one
// Retrier carries a process's calls to a dependency: its default budget stops retrying after 25
// timeouts and reopens as answers return. In bench/storm (1,000 requests/s of capacity, a
// 10 s stall at 70 % and 90 % load; bench/README.md), the shared default
// Retrier recovers as fast as no retries (21 s and 80 s: the queue's drain time) with 1.00× the
// attempts, where go-retryablehttp, cenkalti/backoff and avast/retry-go with their defaults never
// recover. Build the Retrier once and share it: a Retrier built per call (retry.Do with
// options, or retry.Wrap called for each call) has a full budget of its own and retries a
// storm like a library without one. A fleet of processes, each too small for its budget to close, shares a limiter
// that takes timeouts as overload — limit/redis with
// Config{Adaptive: limit.AdaptiveConfig{Timeouts: true}}, through retry.WithLimiter — which
// sheds the load while the dependency stalls and serves it again about a second after it returns.
//
//	| setup (bench/storm, 10 s stall) | recovery at 700/s | at 900/s | attempts ÷ requests |
//	|---|--:|--:|--:|
//	| no retries | 21.3 s | 80.1 s | 1.00 |
//	| go-retryablehttp, cenkalti/backoff v4, avast/retry-go v5 (defaults) | never | never | 4.35, 9.7, 8.3 |
//	| retry: the default Retrier, shared by the process | 21.4 s | 80.2 s | 1.00 |
//	| retry: a Retrier per call | never | never | 2.74 |
//	| retry: a fleet of Retriers sharing the limiter with `Timeouts` | 4.2 s | 1.2 s | 0.96 |
package budget
