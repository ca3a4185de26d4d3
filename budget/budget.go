package budget

import (
	"math"
	"strconv"
	"sync/atomic"

	"github.com/retrykit/retry/internal/argerr"
)

// Budget limits retries across every call that shares it, so that a
// dependency that is down is not hammered by every caller retrying at once.
// One budget is shared by any number of Retriers and goroutines; its methods
// must be safe for concurrent use and quick (they run on every attempt).
//
// The retry loop calls Record at the end of every attempt, and Allow when an
// attempt failed transiently and the policy would retry: false ends the call
// with the last error, reported as the budget's refusal (the point where a
// caller sends the work to a dead letter queue).
type Budget interface {
	Record(Attempt)
	Allow() bool
}

// Attempt is what a Budget learns of one attempt.
type Attempt struct {
	Retry   bool    // a retry, not a call's first attempt
	Outcome Outcome // how it ended
}

// Outcome classifies an attempt's end for a Budget.
type Outcome uint8

const (
	// Succeeded: the attempt returned no error.
	Succeeded Outcome = iota
	// Failed: a transient failure, the kind that is retried.
	Failed
	// TimedOut: a transient failure by timeout, which may cost more.
	TimedOut
	// Other: a failure that says nothing of the dependency's health (a
	// permanent error, the caller's cancellation).
	Other
)

// milli is the fixed-point scale of token counts: a thousandth of a token.
const milli = 1000

// TokenBucketConfig configures a TokenBucket. Zero fields take the defaults
// noted, from the AWS SDKs' "standard" retry mode; the threshold is gRPC's.
// Tokens are counted in thousandths.
type TokenBucketConfig struct {
	// Capacity is the bucket's size and its content at the start, at least
	// 0.001. 0 means 500 (AWS standard mode's initial retry tokens).
	Capacity float64
	// Cost is taken from the bucket by each transient failure. 0 means 5
	// (AWS standard mode's RETRY_COST).
	Cost float64
	// TimeoutCost is taken by each transient failure by timeout. 0 means 10
	// (AWS standard mode's RETRY_TIMEOUT_COST).
	TimeoutCost float64
	// Refund is put back by each success, up to Capacity. 0 means 1 (AWS
	// standard mode's NO_RETRY_INCREMENT).
	Refund float64
	// Threshold is the level at or below which retries stop. 0 means half the
	// capacity (gRPC's retry throttling, gRFC A6).
	Threshold float64
}

// TokenBucket is a retry budget in the manner of gRPC's retry throttling
// (gRFC A6) with the AWS SDKs' numbers: every transient failure takes tokens
// out (a timeout more), every success puts some back, and calls stop retrying
// while the bucket is at or below its threshold. With the defaults, about
// fifty failures more than successes/5 stop all retries until the dependency
// answers again.
//
// Its hot path — a success while the bucket is full — is one atomic load.
//
// A TokenBucket not made by NewTokenBucket — the zero value, or nil — has no
// capacity: Allow refuses every retry, Record does nothing, State is zero, and
// Validate reports it.
type TokenBucket struct {
	tokens                                         atomic.Int64 // thousandths of a token
	capacity, cost, timeoutCost, refund, threshold int64
	denied                                         atomic.Uint64
}

// NewTokenBucket returns a full bucket, or an error matching retry.ErrInvalid
// naming a negative or non-finite field, a capacity below 0.001, or a
// threshold not below the capacity.
func NewTokenBucket(c TokenBucketConfig) (*TokenBucket, error) {
	c = c.withDefaults()
	fields := []struct {
		name string
		v    float64
	}{{"Capacity", c.Capacity}, {"Cost", c.Cost}, {"TimeoutCost", c.TimeoutCost}, {"Refund", c.Refund}, {"Threshold", c.Threshold}}
	for _, f := range fields {
		if !(f.v >= 0 && f.v <= math.MaxInt64/milli/2) {
			return nil, argerr.Field("budget.TokenBucketConfig."+f.name, f.v, "must be a non-negative, finite number of tokens")
		}
	}
	switch {
	case toMilli(c.Capacity) < 1:
		return nil, argerr.Field("budget.TokenBucketConfig.Capacity", c.Capacity, "must be at least 0.001 (tokens are counted in thousandths)")
	case toMilli(c.Threshold) >= toMilli(c.Capacity):
		return nil, argerr.Field("budget.TokenBucketConfig.Threshold", c.Threshold, "must be below Capacity ("+formatFloat(c.Capacity)+")")
	}
	b := &TokenBucket{
		capacity: toMilli(c.Capacity), cost: toMilli(c.Cost), timeoutCost: toMilli(c.TimeoutCost),
		refund: toMilli(c.Refund), threshold: toMilli(c.Threshold),
	}
	b.tokens.Store(b.capacity)
	return b, nil
}

// Validate reports a bucket not made by NewTokenBucket: nil, or the zero
// value, which has no capacity.
func (b *TokenBucket) Validate() error {
	switch {
	case b == nil:
		return argerr.New("budget.TokenBucket", nil, "must be made by NewTokenBucket")
	case b.capacity == 0:
		return argerr.New("budget.TokenBucket", "{}", "must be made by NewTokenBucket: the zero value has no capacity")
	}
	return nil
}

func (c TokenBucketConfig) withDefaults() TokenBucketConfig {
	if c.Capacity == 0 {
		c.Capacity = 500
	}
	if c.Cost == 0 {
		c.Cost = 5
	}
	if c.TimeoutCost == 0 {
		c.TimeoutCost = 10
	}
	if c.Refund == 0 {
		c.Refund = 1
	}
	if c.Threshold == 0 {
		c.Threshold = c.Capacity / 2
	}
	return c
}

func toMilli(v float64) int64 { return int64(math.Round(v * milli)) }

// Record takes tokens for a transient failure and puts some back for a
// success; other outcomes leave the bucket alone.
func (b *TokenBucket) Record(a Attempt) {
	if b == nil {
		return
	}
	switch a.Outcome {
	case Succeeded:
		b.add(b.refund)
	case Failed:
		b.add(-b.cost)
	case TimedOut:
		b.add(-b.timeoutCost)
	}
}

// add moves the token count by delta, kept within [0, capacity], without a
// write when nothing would change.
func (b *TokenBucket) add(delta int64) {
	for {
		old := b.tokens.Load()
		next := min(max(old+delta, 0), b.capacity)
		if next == old || b.tokens.CompareAndSwap(old, next) {
			return
		}
	}
}

// Allow reports whether the bucket is above its threshold, counting a denial
// when it is not.
func (b *TokenBucket) Allow() bool {
	if b == nil {
		return false
	}
	if b.tokens.Load() > b.threshold {
		return true
	}
	b.denied.Add(1)
	return false
}

// TokenBucketState is a snapshot of a TokenBucket, for metrics.
type TokenBucketState struct {
	Tokens, Capacity, Threshold float64
	Denied                      uint64 // retries refused since the bucket was made
}

// State returns a snapshot of the bucket.
func (b *TokenBucket) State() TokenBucketState {
	if b == nil {
		return TokenBucketState{}
	}
	return TokenBucketState{
		Tokens:    float64(b.tokens.Load()) / milli,
		Capacity:  float64(b.capacity) / milli,
		Threshold: float64(b.threshold) / milli,
		Denied:    b.denied.Load(),
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
