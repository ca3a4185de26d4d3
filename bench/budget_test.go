package bench

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/budget"
)

// BenchmarkBudget is DoSuccess from every core at once through a prebuilt
// policy with a shared retry budget: the cost a budget adds to every call.
// retry uses its token bucket (one atomic load per success while the bucket
// is full) and, as retry_ratio, its ratio budget (a clock read and an atomic
// add per call, to count first attempts in the window); failsafe-go uses its
// budget of retries in flight.
func BenchmarkBudget(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, r *retry.Retrier) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = r.Do(ctx, succeed)
			}
		})
	}
	b.Run("retry", func(b *testing.B) {
		run(b, must(retry.New(retry.WithBudget(must(budget.NewTokenBucket(budget.TokenBucketConfig{}))))))
	})
	b.Run("retry_ratio", func(b *testing.B) {
		run(b, must(retry.New(retry.WithBudget(must(budget.NewRatio(budget.RatioConfig{}))))))
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := failsafe.With[any](retrypolicy.NewBuilder[any]().WithMaxAttempts(3).WithBudget(fsbudget.New()).Build())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = ex.Run(succeedNoCtx)
			}
		})
	})
}
