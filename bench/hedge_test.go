package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
)

// hedger hedges the calls of an idempotent Retrier after d, two attempts
// in flight at most.
func hedger(d hedge.Delay) *retry.Hedger {
	return must(retry.NewHedger(must(retry.New(retry.Idempotent())), d, 2))
}

// BenchmarkHedgedSuccess is a call whose first attempt succeeds before the
// hedging delay: what hedging costs a call that does not need it. "plain" is
// the same Retrier's work without hedging (its Do, where the others call the
// Hedger's Run).
func BenchmarkHedgedSuccess(b *testing.B) {
	for _, parent := range []struct {
		name string
		ctx  func(b *testing.B) context.Context
	}{
		{"background", func(*testing.B) context.Context { return context.Background() }},
		{"cancellable", func(b *testing.B) context.Context { return b.Context() }},
	} {
		b.Run(parent.name, func(b *testing.B) {
			ctx := parent.ctx(b)
			b.Run("plain", func(b *testing.B) {
				r, _ := retry.New(retry.Idempotent())
				b.ReportAllocs()
				for b.Loop() {
					_ = r.Do(ctx, succeed)
				}
			})
			b.Run("retry-fixed", func(b *testing.B) {
				h := hedger(hedge.Fixed(10 * time.Millisecond))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = h.Run(ctx, succeed)
				}
			})
			b.Run("retry-adaptive", func(b *testing.B) {
				a, _ := hedge.NewAdaptive(hedge.AdaptiveConfig{})
				h := hedger(a)
				b.ReportAllocs()
				for b.Loop() {
					_, _ = h.Run(ctx, succeed)
				}
			})
			b.Run("failsafe", func(b *testing.B) {
				ex := failsafe.With[any](hedgepolicy.NewWithDelay[any](10 * time.Millisecond)).WithContext(ctx)
				b.ReportAllocs()
				for b.Loop() {
					_ = ex.Run(succeedNoCtx)
				}
			})
		})
	}
}

// BenchmarkHedgeFires is a call whose first attempt hangs until it is
// cancelled: the hedge, 20µs later, answers at once. It measures a hedge's
// timer, goroutine and cancellation (and the 20µs wait).
func BenchmarkHedgeFires(b *testing.B) {
	const delay = 20 * time.Microsecond
	ctx := context.Background()
	b.Run("retry", func(b *testing.B) {
		h := hedger(hedge.Fixed(delay))
		b.ReportAllocs()
		for b.Loop() {
			var n atomic.Int32
			_, _ = h.Run(ctx, func(ctx context.Context) error {
				if n.Add(1) == 1 {
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			})
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := failsafe.With[any](hedgepolicy.NewWithDelay[any](delay))
		b.ReportAllocs()
		for b.Loop() {
			var n atomic.Int32
			_ = ex.RunWithExecution(func(e failsafe.Execution[any]) error {
				if n.Add(1) == 1 {
					<-e.Canceled()
					return context.Canceled
				}
				return nil
			})
		}
	})
}
