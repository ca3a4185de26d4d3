package bench

import (
	"context"
	"testing"

	backoff4 "github.com/cenkalti/backoff/v4"
	backoff7 "github.com/cenkalti/backoff/v7"
	sethretry "github.com/sethvargo/go-retry"
)

// BenchmarkDoSuccess is a call that succeeds on the first attempt, through a
// policy built once: the cost of wrapping a call that does not fail.
func BenchmarkDoSuccess(b *testing.B) {
	ctx := context.Background()
	b.Run("retry", func(b *testing.B) {
		r := successRetry()
		b.ReportAllocs()
		for b.Loop() {
			_ = r.Do(ctx, succeed)
		}
	})
	b.Run("cenkalti4", func(b *testing.B) {
		bo := successCenkalti4()
		b.ReportAllocs()
		for b.Loop() {
			_ = backoff4.Retry(succeedNoCtx, bo)
		}
	})
	b.Run("cenkalti7", func(b *testing.B) {
		opts := successCenkalti7()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = backoff7.Retry(ctx, succeedValue, opts...)
		}
	})
	b.Run("avast5", func(b *testing.B) {
		r := successAvast()
		b.ReportAllocs()
		for b.Loop() {
			_ = r.Do(succeedNoCtx)
		}
	})
	b.Run("sethvargo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = sethretry.Do(ctx, successSeth(), succeed)
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := successFailsafe()
		b.ReportAllocs()
		for b.Loop() {
			_ = ex.Run(succeedNoCtx)
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = opDirect(ctx)
		}
	})
}

// BenchmarkDoParallel is DoSuccess from every core at once. Where the library
// allows it the policy is one value shared by all goroutines; cenkalti's
// BackOff is stateful, so each goroutine gets its own, and go-retry's is
// single-use, so each call builds one, as in DoSuccess.
func BenchmarkDoParallel(b *testing.B) {
	ctx := context.Background()
	b.Run("retry", func(b *testing.B) {
		r := successRetry()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = r.Do(ctx, succeed)
			}
		})
	})
	b.Run("cenkalti4", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			bo := successCenkalti4()
			for pb.Next() {
				_ = backoff4.Retry(succeedNoCtx, bo)
			}
		})
	})
	b.Run("cenkalti7", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			opts := successCenkalti7()
			for pb.Next() {
				_, _ = backoff7.Retry(ctx, succeedValue, opts...)
			}
		})
	})
	b.Run("avast5", func(b *testing.B) {
		r := successAvast()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = r.Do(succeedNoCtx)
			}
		})
	})
	b.Run("sethvargo", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = sethretry.Do(ctx, successSeth(), succeed)
			}
		})
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := successFailsafe()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = ex.Run(succeedNoCtx)
			}
		})
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = opDirect(ctx)
			}
		})
	})
}

// BenchmarkDoTwoRetries is a call whose first two attempts fail with a
// transient error and whose third succeeds, with a 1 ns delay: the cost of
// the retry machinery per failing call, waits included. A 1 ns wait is not
// free: time.Sleep parks the goroutine on a timer (see plain), while a
// receive from a timer's channel that has already fired does not park.
func BenchmarkDoTwoRetries(b *testing.B) {
	ctx := context.Background()
	b.Run("retry", func(b *testing.B) {
		r := flakyRetry()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = r.Do(ctx, func(context.Context) error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
		}
	})
	b.Run("cenkalti4", func(b *testing.B) {
		bo := flakyCenkalti4()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = backoff4.Retry(func() error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			}, bo)
		}
	})
	b.Run("cenkalti7", func(b *testing.B) {
		opts := flakyCenkalti7()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_, _ = backoff7.Retry(ctx, func() (struct{}, error) {
				if n++; n <= 2 {
					return struct{}{}, errTransient
				}
				return struct{}{}, nil
			}, opts...)
		}
	})
	b.Run("avast5", func(b *testing.B) {
		r := flakyAvast()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = r.Do(func() error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
		}
	})
	b.Run("sethvargo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = sethretry.Do(ctx, flakySeth(), func(context.Context) error {
				if n++; n <= 2 {
					return errTransientSeth
				}
				return nil
			})
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := flakyFailsafe()
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = ex.Run(func() error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = plainRetry(ctx, func(context.Context) error {
				if n++; n <= 2 {
					return errTransient
				}
				return nil
			})
		}
	})
}
