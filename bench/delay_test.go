package bench

import (
	"math/bits"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v5"
	backoff4 "github.com/cenkalti/backoff/v4"
	backoff7 "github.com/cenkalti/backoff/v7"
	sethretry "github.com/sethvargo/go-retry"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/policy"
)

// The schedule of BenchmarkDelay: exponential from 100 ms, doubling, capped
// at 30 s, jittered; attempts cycle through the first eight.
const (
	delayBase = 100 * time.Millisecond
	delayCap  = 30 * time.Second
)

// sink keeps the delays alive, so that no computation is optimised away.
var sink time.Duration

// delayPolicy is the policy the retry loop consults, with full jitter.
func delayPolicy() policy.Policy {
	return policy.Policy{
		Backoff:  backoff.Exponential{Base: delayBase, Factor: 2, MaxDelay: delayCap},
		Jitter:   jitter.Full{},
		MaxDelay: delayCap,
	}
}

func delayCenkalti4() *backoff4.ExponentialBackOff {
	return backoff4.NewExponentialBackOff(
		backoff4.WithInitialInterval(delayBase),
		backoff4.WithMultiplier(2),
		backoff4.WithMaxInterval(delayCap),
		backoff4.WithMaxElapsedTime(0),
	)
}

func delayCenkalti7() *backoff7.ExponentialBackOff {
	return &backoff7.ExponentialBackOff{
		InitialInterval:     delayBase,
		RandomizationFactor: cenkaltiRand,
		Multiplier:          2,
		MaxInterval:         delayCap,
	}
}

// delayAvast holds the configuration avast's delay functions read.
func delayAvast() *avast.Retrier {
	return avast.New(avast.Delay(delayBase), avast.MaxDelay(delayCap))
}

func delaySeth() sethretry.Backoff {
	return sethretry.WithFullJitter(sethretry.WithCappedDuration(delayCap, sethretry.NewExponential(delayBase)))
}

// BenchmarkDelay computes the next delay of a jittered exponential schedule,
// the way each library's retry loop does between two attempts. Stateful
// schedules are reset (cenkalti) or rebuilt (go-retry, whose Backoff cannot be
// reset) every eight delays. failsafe-go is absent: it computes delays only
// inside an execution and exports no way to ask for one.
func BenchmarkDelay(b *testing.B) {
	b.Run("retry", func(b *testing.B) {
		p := delayPolicy()
		rng := wyrand{1} // the per-call generator the retry loop uses (internal/rng)
		b.ReportAllocs()
		var sum time.Duration
		n := 0
		for b.Loop() {
			sum += p.Delay(n&7+1, 0, 0, rng.Uint64()) // attempts are 1-based
			n++
		}
		sink = sum
	})
	b.Run("cenkalti4", func(b *testing.B) {
		bo := delayCenkalti4()
		b.ReportAllocs()
		var sum time.Duration
		n := 0
		for b.Loop() {
			if n&7 == 0 {
				bo.Reset()
			}
			sum += bo.NextBackOff()
			n++
		}
		sink = sum
	})
	b.Run("cenkalti7", func(b *testing.B) {
		bo := delayCenkalti7()
		b.ReportAllocs()
		var sum time.Duration
		n := 0
		for b.Loop() {
			if n&7 == 0 {
				bo.Reset()
			}
			sum += bo.NextBackOff()
			n++
		}
		sink = sum
	})
	b.Run("avast5", func(b *testing.B) {
		r := delayAvast()
		b.ReportAllocs()
		var sum time.Duration
		n := 0
		for b.Loop() {
			sum += avast.FullJitterBackoffDelay(uint(n&7), nil, r)
			n++
		}
		sink = sum
	})
	b.Run("sethvargo", func(b *testing.B) {
		var bo sethretry.Backoff
		b.ReportAllocs()
		var sum time.Duration
		n := 0
		for b.Loop() {
			if n&7 == 0 {
				bo = delaySeth()
			}
			d, _ := bo.Next()
			sum += d
			n++
		}
		sink = sum
	})
}

// wyrand is the retry loop's per-call generator (internal/rng), which the
// bench module cannot import.
type wyrand struct{ s uint64 }

func (r *wyrand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}
