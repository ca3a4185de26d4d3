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
		Backoff:     backoff.Exponential{Base: time.Second, MaxDelay: 10 * time.Second},
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
	// 3 0s max-attempts
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
	// 1m30s wait-too-long
}
