package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
)

// limiters are the permissions BenchmarkLimit asks for, each while tokens
// are available: an Adaptive the server never throttled (one atomic load),
// an Adaptive that limits with tokens in its bucket (an atomic add and two
// loads), and a Throttler that refuses nothing (one atomic load).
func limiters(b *testing.B) []struct {
	name string
	l    limit.Limiter
} {
	var now atomic.Int64
	limiting := must(limit.NewAdaptive(limit.AdaptiveConfig{Burst: 1000 * time.Hour, Now: func() time.Duration { return time.Duration(now.Load()) }}))
	for range 1000 { // the server accepts 5,000 a second, then throttles
		now.Add(int64(200 * time.Microsecond))
		limiting.Record(context.Background(), limit.Outcome{Result: limit.Accepted})
	}
	limiting.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	if r := limiting.Rate(); r > 1e6 {
		b.Fatalf("the limiter does not limit: rate %v", r)
	}
	now.Add(int64(1000 * time.Hour)) // 1,000 hours of tokens: 16 billion
	return []struct {
		name string
		l    limit.Limiter
	}{
		{"adaptive_unthrottled", must(limit.NewAdaptive(limit.AdaptiveConfig{}))},
		{"adaptive_tokens", limiting},
		{"throttler", must(limit.NewThrottler(limit.ThrottlerConfig{}))},
	}
}

// BenchmarkLimitAcquire is the cost of asking a limiter for permission
// when tokens are available, from one goroutine and from every core
// (target: at most 30 ns, no allocation).
func BenchmarkLimitAcquire(b *testing.B) {
	ctx := context.Background()
	for _, c := range limiters(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.l.Acquire(ctx, time.Second) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(c.name+"_parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !c.l.Acquire(ctx, time.Second) {
						b.Error("refused")
						return
					}
				}
			})
		})
	}
}

// BenchmarkLimit is DoSuccess from every core at once through a prebuilt
// Retrier with a shared limiter: the cost a limiter adds to every call
// (its permission, and the Record of each success).
func BenchmarkLimit(b *testing.B) {
	ctx := context.Background()
	for _, c := range limiters(b) {
		r := must(retry.New(retry.WithLimiter(c.l)))
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = r.Do(ctx, succeed)
				}
			})
		})
	}
}
