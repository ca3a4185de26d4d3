package policy_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

func ExamplePolicy_Next() {
	p := policy.Policy{
		MaxAttempts: 3,
		Backoff:     backoff.Exponential{Base: time.Second, Cap: 10 * time.Second},
		Jitter:      jitter.None{},
	}
	unavailable := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable}
	for n := 1; n <= 3; n++ {
		d, stop := p.Next(policy.State{Attempt: n, ClassFailures: n}, unavailable, 0)
		fmt.Println(n, d, stop)
	}
	// Output:
	// 1 1s continue
	// 2 2s continue
	// 3 0s attempts exhausted
}

func ExampleLLMCall() {
	p := policy.LLMCall()
	fmt.Println(p.Attempts(), p.Strict, p.MaxDelay)
	// A rate limit asking for 90s is longer than the preset's 60s MaxDelay: the
	// caller gets the wait back instead of being blocked.
	rateLimited := classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonTooManyRequests, RetryAfter: 90 * time.Second}
	fmt.Println(p.Next(policy.State{Attempt: 1, ClassFailures: 1}, rateLimited, 0))
	// Output:
	// 4 true 1m0s
	// 1m30s wait too long
}

func ExampleNewTokenBucket() {
	// The defaults: 500 tokens, 5 per failure (10 per timeout), 1 back per
	// success, no retry at or below 250.
	bucket, _ := policy.NewTokenBucket(policy.TokenBucketConfig{})
	for range 50 {
		bucket.Record(policy.Attempt{Outcome: policy.Failed})
	}
	fmt.Println(bucket.Allow(), bucket.State().Tokens)
	for range 10 {
		bucket.Record(policy.Attempt{Outcome: policy.Succeeded})
	}
	fmt.Println(bucket.Allow(), bucket.State().Tokens)
	// Output:
	// false 250
	// true 260
}

func ExampleNewRatioBudget() {
	budget, _ := policy.NewRatioBudget(policy.RatioBudgetConfig{Percent: 0.1, Window: time.Minute, MinPerSecond: -1})
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for range 50 {
		budget.RecordAt(now, policy.Attempt{}) // 50 calls made their first attempt
	}
	retries := 0
	for budget.AllowAt(now) {
		retries++
	}
	st := budget.StateAt(now)
	fmt.Println(retries, st.Calls, st.Ratio, st.Denied)
	// Output: 5 50 0.1 1
}
