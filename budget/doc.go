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
package budget
