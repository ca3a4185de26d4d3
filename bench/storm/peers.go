package main

import (
	"math"
	"time"

	"github.com/retrykit/retry/limit"
)

// The peers, each with the defaults read from its source. The simulation
// has its own model of each policy: the constants below are theirs, the
// code is not.

// noLimiter is embedded by the behaviours whose attempts wait for nothing.
type noLimiter struct{}

func (noLimiter) limiter(*request) *limit.Adaptive { return nil }

// noRetries gives up at the first timeout.
type noRetries struct{ noLimiter }

func (noRetries) answered(*request) {}

func (noRetries) timedOut(*request, time.Duration) (time.Duration, bool) { return 0, false }

// retryablehttp is hashicorp/go-retryablehttp v0.7.8 (client.go):
// defaultRetryMax = 4 retries after the first attempt, DefaultBackoff waits
// RetryWaitMin·2^i (defaultRetryWaitMin 1s) after failed attempt i+1, capped
// at defaultRetryWaitMax (30s), without jitter; baseRetryPolicy retries
// every error that is not a redirect, scheme, header or certificate error
// (a client timeout included).
type retryablehttp struct{ noLimiter }

func (retryablehttp) answered(*request) {}

func (retryablehttp) timedOut(q *request, _ time.Duration) (time.Duration, bool) {
	const retryMax, waitMin, waitMax = 4, time.Second, 30 * time.Second
	i := int(q.attempts) - 1
	if retryMax-i <= 0 {
		return 0, false
	}
	return min(waitMin<<i, waitMax), true
}

// cenkalti is cenkalti/backoff v4.3.0's Retry with NewExponentialBackOff()
// (exponential.go): DefaultInitialInterval 500ms, DefaultRandomizationFactor
// 0.5 (a wait drawn in [0.5, 1.5] of the interval), DefaultMultiplier 1.5,
// DefaultMaxInterval 60s, and DefaultMaxElapsedTime 15 minutes: it stops only
// when the elapsed time plus the next wait would pass 15 minutes, which no
// call of a 240 s run reaches.
type cenkalti struct {
	noLimiter
	e env
}

func (cenkalti) answered(*request) {}

func (c cenkalti) timedOut(q *request, now time.Duration) (time.Duration, bool) {
	const initial, factor, multiplier, maxInterval, maxElapsed = 500 * time.Millisecond, 0.5, 1.5, 60 * time.Second, 15 * time.Minute
	if q.interval == 0 { // Retry calls Reset before the first attempt
		q.interval = initial
	}
	cur := float64(q.interval)
	delta := factor * cur
	next := time.Duration(cur - delta + c.e.rng.Float64()*(2*delta+1)) // getRandomValueFromInterval
	if cur >= float64(maxInterval)/multiplier {                        // incrementCurrentInterval
		q.interval = maxInterval
	} else {
		q.interval = time.Duration(cur * multiplier)
	}
	if now-q.start+next > maxElapsed {
		return 0, false
	}
	return next, true
}

// avast is avast/retry-go v5.1.1's defaults (options.go, retry.go): 10
// attempts, DelayType CombineDelay(BackOffDelay, RandomDelay): before
// attempt n+1, delay·2^(n−1) (delay 100ms) plus a uniform jitter below
// maxJitter (100ms); no MaxDelay; every error retried.
type avast struct {
	noLimiter
	e env
}

func (avast) answered(*request) {}

func (a avast) timedOut(q *request, _ time.Duration) (time.Duration, bool) {
	const attempts, delay, maxJitter = 10, 100 * time.Millisecond, 100 * time.Millisecond
	if q.attempts >= attempts {
		return 0, false
	}
	return delay<<(q.attempts-1) + time.Duration(a.e.rng.Int64N(int64(maxJitter))), true
}

// grpcThrottle is gRPC's retry throttling as grpc-go implements it
// (clientconn.go retryThrottler, stream.go shouldRetry), with gRFC A6's
// example settings: maxTokens 10, tokenRatio 0.1, the threshold
// maxTokens/2. Every attempt that fails with a retryable code takes a token
// (the count floored at 0) and the call is not retried while the count is
// at or below the threshold; every call that succeeds puts back tokenRatio.
// The retry policy is A6's example: maxAttempts 4, initialBackoff 0.1s,
// maxBackoff 1s, backoffMultiplier 2, and grpc-go's jitter (the wait times a
// uniform factor in [0.8, 1.2]). The attempt timeout is taken as a retryable
// code, as the model requires.
type grpcThrottle struct {
	noLimiter
	e      env
	tokens []float64 // one count per client, or one for all
}

const grpcMaxTokens, grpcTokenRatio = 10, 0.1

func newGRPC(e env, n int) *grpcThrottle {
	g := &grpcThrottle{e: e, tokens: make([]float64, n)}
	for i := range g.tokens {
		g.tokens[i] = grpcMaxTokens
	}
	return g
}

func (g *grpcThrottle) count(q *request) *float64 { return &g.tokens[int(q.client)%len(g.tokens)] }

func (g *grpcThrottle) answered(q *request) {
	t := g.count(q)
	*t = min(*t+grpcTokenRatio, grpcMaxTokens)
}

func (g *grpcThrottle) timedOut(q *request, _ time.Duration) (time.Duration, bool) {
	const maxAttempts, initial, maxBackoff, multiplier = 4, 100 * time.Millisecond, time.Second, 2.0
	t := g.count(q)
	*t = max(*t-1, 0)
	if *t <= grpcMaxTokens/2 || q.attempts >= maxAttempts {
		return 0, false
	}
	cur := min(float64(initial)*math.Pow(multiplier, float64(q.attempts-1)), float64(maxBackoff))
	return time.Duration(cur * (0.8 + 0.4*g.e.rng.Float64())), true
}

// awsQuota is the AWS SDK for Go v2's standard retryer and its retry quota
// (aws/retry/standard.go, middleware.go, jitter_backoff.go,
// aws/ratelimit/token_rate_limit.go and token_bucket.go): 3 attempts; a
// retry takes its cost from a bucket of 500 tokens (DefaultRetryRateTokens)
// and is not made if the bucket holds less; a retry that succeeds gives its
// cost back; a first attempt that succeeds adds 1 (DefaultNoRetryIncrement).
//
// Two generations of defaults:
//   - v1.48.0 ("Retry Behavior 2.1", the default since 2026-11-10): a retry
//     costs 14 tokens, timeouts included (RetryTimeoutCost is deprecated and
//     unused); the wait before retry i (from 0) is a uniform draw below
//     min(50ms·2^i, 20s); only a first attempt's success adds 1.
//   - v1.39.0 and before ("legacy"): a retry after a timeout costs 10
//     (DefaultRetryTimeoutCost; 5 otherwise); the wait after attempt n is a
//     uniform draw below 2^n seconds (20s from n = 5); every attempt that
//     succeeds adds 1 (GetAttemptToken returned GetInitialToken for all).
type awsQuota struct {
	noLimiter
	e      env
	legacy bool
	tokens []uint // one bucket per client, or one for all
}

const awsTokens = 500

func newAWS(e env, n int, legacy bool) *awsQuota {
	a := &awsQuota{e: e, legacy: legacy, tokens: make([]uint, n)}
	for i := range a.tokens {
		a.tokens[i] = awsTokens
	}
	return a
}

func (a *awsQuota) bucket(q *request) *uint { return &a.tokens[int(q.client)%len(a.tokens)] }

func (a *awsQuota) answered(q *request) {
	b := a.bucket(q)
	if q.attempts == 1 || a.legacy {
		*b = min(*b+1, awsTokens)
	}
	*b = min(*b+q.held, awsTokens)
	q.held = 0
}

func (a *awsQuota) timedOut(q *request, _ time.Duration) (time.Duration, bool) {
	const maxAttempts, maxBackoff = 3, 20 * time.Second
	q.held = 0 // a failed retry keeps its cost
	b := a.bucket(q)
	cost := uint(14)
	if a.legacy {
		cost = 10
	}
	if q.attempts >= maxAttempts || cost > *b {
		return 0, false
	}
	*b -= cost
	q.held = cost
	n := int(q.attempts)
	if a.legacy {
		if n > int(math.Log2(float64(maxBackoff/time.Second))) {
			return maxBackoff, true
		}
		return time.Duration(a.e.rng.Float64() * float64(time.Second<<n)), true
	}
	return time.Duration(a.e.rng.Float64() * float64(min(50*time.Millisecond<<(n-1), maxBackoff))), true
}
