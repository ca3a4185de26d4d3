package budget_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/budget"
)

func ExampleNewTokenBucket() {
	// The defaults: 500 tokens, 5 per failure (10 per timeout), 1 back per
	// success, no retry at or below 250.
	bucket, _ := budget.NewTokenBucket(budget.TokenBucketConfig{})
	for range 50 {
		bucket.Record(budget.Attempt{Outcome: budget.Failed})
	}
	fmt.Println(bucket.Allow(), bucket.State().Tokens)
	for range 10 {
		bucket.Record(budget.Attempt{Outcome: budget.Succeeded})
	}
	fmt.Println(bucket.Allow(), bucket.State().Tokens)
	// Output:
	// false 250
	// true 260
}

func ExampleNewRatio() {
	b, _ := budget.NewRatio(budget.RatioConfig{Percent: 0.1, Window: time.Minute, MinPerSecond: -1})
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for range 50 {
		b.RecordAt(now, budget.Attempt{}) // 50 calls made their first attempt
	}
	retries := 0
	for b.AllowAt(now) {
		retries++
	}
	st := b.StateAt(now)
	fmt.Println(retries, st.Calls, st.Ratio, st.Denied)
	// Output: 5 50 0.1 1
}

func ExampleTokenBucket_Validate() {
	// A budget must come from its constructor: the zero value has no
	// capacity, refuses every retry, and says so when validated.
	var zero budget.TokenBucket
	fmt.Println(zero.Allow())
	fmt.Println(zero.Validate())
	_, err := budget.NewTokenBucket(budget.TokenBucketConfig{Threshold: 600})
	fmt.Println(err)
	// Output:
	// false
	// budget.TokenBucket({}): must be made by NewTokenBucket: the zero value has no capacity
	// budget.TokenBucketConfig.Threshold = 600: must be below Capacity (500)
}
