package limit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/limit"
)

// plenty returns an Adaptive that limits, with tokens for any benchmark: a
// cut to 4,500 a second, then 1,000 hours on its clock and as long a burst.
func plenty(b *testing.B) *limit.Adaptive {
	var now atomic.Int64
	a, err := limit.NewAdaptive(limit.AdaptiveConfig{Burst: 1000 * time.Hour, Now: func() time.Duration { return time.Duration(now.Load()) }})
	if err != nil {
		b.Fatal(err)
	}
	for range 1000 { // 5,000 accepted a second
		now.Add(int64(200 * time.Microsecond))
		a.Record(context.Background(), accepted)
	}
	a.Record(context.Background(), throttled)
	if r := a.Rate(); r > 1e6 {
		b.Fatalf("the limiter does not limit: rate %v", r)
	}
	now.Add(int64(1000 * time.Hour))
	a.Acquire(context.Background(), time.Second) // fills the bucket
	return a
}

func BenchmarkAcquire(b *testing.B) {
	ctx := context.Background()
	unthrottled, err := limit.NewAdaptive(limit.AdaptiveConfig{})
	if err != nil {
		b.Fatal(err)
	}
	th, err := limit.NewThrottler(limit.ThrottlerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		l    limit.Limiter
	}{
		{"Adaptive/unthrottled", unthrottled},
		{"Adaptive/tokens", plenty(b)},
		{"Throttler/accepting", th},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.l.Acquire(ctx, time.Second) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
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

func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	a, _ := limit.NewAdaptive(limit.AdaptiveConfig{})
	th, _ := limit.NewThrottler(limit.ThrottlerConfig{})
	for _, c := range []struct {
		name string
		l    limit.Limiter
	}{{"Adaptive", a}, {"Throttler", th}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.l.Record(ctx, accepted)
			}
		})
	}
}

func BenchmarkKeyedAcquire(b *testing.B) {
	type key struct{}
	k, err := limit.NewKeyed(func(ctx context.Context) (string, bool) {
		s, ok := ctx.Value(key{}).(string)
		return s, ok
	}, func(string) (limit.Limiter, error) { return limit.NewAdaptive(limit.AdaptiveConfig{}) }, 0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), key{}, "api.example/qwen3")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !k.Acquire(ctx, time.Second) {
				b.Error("refused")
				return
			}
		}
	})
}
