package redis_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/faultproxy"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every outage test asserts three things: no caller blocks past its
// deadline plus overrun; nothing recorded is lost or counted twice; the
// fleet decides again within Recheck (plus OpTimeout) of Redis's return.
const overrun = 100 * time.Millisecond

// fleet is one instance of a fleet that limits at rate a second (its
// MinRate: the throttle it was told of came with nothing accepted), with
// the go-redis client a user has by default, and a client of the test's
// own that reads the fleet's state straight from the server.
type fleet struct {
	l      *lredis.Limiter
	client *goredis.Client
	rate   float64
}

func limiting(t *testing.T, addr string, rate float64) fleet {
	t.Helper()
	return limitingThrough(t, addr, addr, rate)
}

// limitingThrough is limiting with the instance's client dialing via, a
// fault proxy before the server at addr.
func limitingThrough(t *testing.T, via, addr string, rate float64) fleet {
	t.Helper()
	l, err := lredis.New(newClient(t, via), "k", lredis.Config{OpTimeout: opTimeout, Recheck: recheck,
		Adaptive: limit.AdaptiveConfig{MinRate: rate, Burst: time.Millisecond}})
	require.NoError(t, err)
	ctx := context.Background()
	require.True(t, l.Acquire(ctx, time.Second), "the fleet's measurement starts")
	time.Sleep(150 * time.Millisecond) // past Hold
	l.Record(ctx, limit.Outcome{Result: limit.Throttled})
	require.True(t, l.Acquire(ctx, time.Second))
	require.Equal(t, rate, l.Rate(), "the fleet limits: every Acquire asks Redis")
	return fleet{l: l, client: newClient(t, addr), rate: rate}
}

// tally is what callers saw.
type tally struct {
	admitted, refused atomic.Int64
	worst             atomic.Int64 // the longest time past a caller's deadline, ns
}

// hammer runs callers for d, each Acquire with its own context of the
// given deadline, and records each admitted attempt as accepted.
func hammer(f fleet, callers int, d, deadline, maxWait time.Duration) *tally {
	var s tally
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				ok := f.l.Acquire(ctx, maxWait)
				past := time.Since(start) - deadline
				cancel()
				for w := s.worst.Load(); int64(past) > w && !s.worst.CompareAndSwap(w, int64(past)); w = s.worst.Load() {
				}
				if !ok {
					s.refused.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				s.admitted.Add(1)
				f.l.Record(context.Background(), accepted)
			}
		})
	}
	wg.Wait()
	return &s
}

// recovers checks that the fleet takes in the instance's news again
// within Recheck and OpTimeout of Redis's return: that its count of
// accepted answers reaches want, each counted once.
func (f fleet) recovers(t *testing.T, want int64) {
	t.Helper()
	ctx := context.Background()
	healed := time.Now()
	var acc int64
	for {
		f.l.Acquire(ctx, time.Second)
		acc, _ = f.client.HGet(ctx, "retry:limit:k", "acc").Int64()
		if acc >= want || time.Since(healed) > recheck+opTimeout+slack {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the fleet took in the news %v after Redis came back", time.Since(healed).Round(time.Millisecond))
	assert.Equal(t, want, acc, "every accepted answer counted, once")
	assert.InDelta(t, f.rate, f.l.Rate(), f.rate*0.05, "the fleet's rate again")
}

// TestAHungRedisGivesCallersOfAnyDeadlineLocalLimiting: callers whose
// deadline (100ms) is shorter than OpTimeout (200ms) are limited locally
// while Redis hangs, each within its deadline, and every answer they
// recorded reaches the fleet once.
func TestAHungRedisGivesCallersOfAnyDeadlineLocalLimiting(t *testing.T) {
	srv := redistest.Start(t)
	f := limiting(t, srv.Addr, 1000)
	before, err := f.client.HGet(context.Background(), "retry:limit:k", "acc").Int64()
	require.NoError(t, err)

	srv.Pause()
	s := hammer(f, 8, time.Second, 100*time.Millisecond, time.Second)
	srv.Resume()
	t.Logf("during the hang: %d admitted, %d refused; worst overrun %v", s.admitted.Load(), s.refused.Load(), time.Duration(s.worst.Load()))
	assert.Less(t, time.Duration(s.worst.Load()), overrun, "no caller blocked past its deadline")
	assert.Greater(t, s.admitted.Load(), 8*s.refused.Load(), "the local limiter, at 1000 a second, lets nearly all through")
	f.recovers(t, before+s.admitted.Load())
}

// TestAKilledRedisGivesCallersOfAnyDeadlineLocalLimiting: after a SIGKILL,
// go-redis's dial retries outlast a 150ms deadline; callers are limited
// locally all the same, and the fleet decides again once Redis is back
// (empty).
func TestAKilledRedisGivesCallersOfAnyDeadlineLocalLimiting(t *testing.T) {
	srv := redistest.Start(t)
	f := limiting(t, srv.Addr, 1000)
	srv.Stop()
	s := hammer(f, 8, time.Second, 150*time.Millisecond, time.Second)
	t.Logf("while Redis is gone: %d admitted, %d refused; worst overrun %v", s.admitted.Load(), s.refused.Load(), time.Duration(s.worst.Load()))
	assert.Less(t, time.Duration(s.worst.Load()), overrun, "no caller blocked past its deadline")
	assert.Greater(t, s.admitted.Load(), 8*s.refused.Load(), "the local limiter lets nearly all through")
	srv.Restart(t)
	f.recovers(t, s.admitted.Load()) // what the instance told the Redis that died is gone with it
}

// TestAScriptWhoseCallerGaveUpReservesNothing: callers give up on a hung
// Redis; when it resumes, the scripts they sent run, and must not move the
// fleet's line: the next caller is served at once.
func TestAScriptWhoseCallerGaveUpReservesNothing(t *testing.T) {
	srv := redistest.Start(t)
	f := limiting(t, srv.Addr, 20) // a turn every 50ms
	srv.Pause()
	s := hammer(f, 8, 300*time.Millisecond, 100*time.Millisecond, time.Second)
	srv.Resume()
	t.Logf("during the hang: %d admitted, %d refused", s.admitted.Load(), s.refused.Load())
	ctx := context.Background()
	require.NoError(t, f.client.Ping(ctx).Err()) // after the scripts queued before it
	tat, err := f.client.HGet(ctx, "retry:limit:k", "tat").Float64()
	require.NoError(t, err)
	now, err := f.client.Time(ctx).Result()
	require.NoError(t, err)
	ahead := time.Duration(tat)*time.Microsecond - time.Duration(now.UnixMicro())*time.Microsecond
	t.Logf("the line is %v ahead of now", ahead.Round(time.Millisecond))
	assert.Less(t, ahead, 100*time.Millisecond, "the line is where it was, not a turn further for each caller who left")
}

// TestAFleetRestartedEmptyStartsFromTheRateItsInstancesKnew: Redis comes
// back empty; the first instance to ask seeds the fleet with the rate it
// knew, instead of the fleet letting everything through until a 429.
func TestAFleetRestartedEmptyStartsFromTheRateItsInstancesKnew(t *testing.T) {
	srv := redistest.Start(t)
	f := limiting(t, srv.Addr, 20)
	srv.Restart(t)
	s := hammer(f, 8, time.Second, time.Second, 0)
	t.Logf("in the first second after the restart: %d admitted, %d refused", s.admitted.Load(), s.refused.Load())
	assert.Less(t, s.admitted.Load(), int64(3*20), "about 20 a second, as before the restart")
	assert.InDelta(t, 20.0, f.l.Rate(), 1, "probing slowly up from there")
}

// TestAnswersRecordedDuringAHangAreCountedOnce: an instance records
// answers while Redis hangs, and asks it in vain; when Redis resumes, the
// scripts it sent run, and the news they carried must not be told again.
func TestAnswersRecordedDuringAHangAreCountedOnce(t *testing.T) {
	srv := redistest.Start(t)
	f := limiting(t, srv.Addr, 1000)
	ctx := context.Background()
	before, err := f.client.HGet(ctx, "retry:limit:k", "acc").Int64()
	require.NoError(t, err)
	srv.Pause()
	const n = 60
	for range n {
		f.l.Record(ctx, accepted)
		f.l.Acquire(ctx, time.Second)
		time.Sleep(10 * time.Millisecond)
	}
	srv.Resume()
	f.recovers(t, before+n)
}

// TestANetworkBlackHoleGivesCallersLocalLimiting: the network between the
// instance and Redis holds every byte (a partition), then lets them through.
func TestANetworkBlackHoleGivesCallersLocalLimiting(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr, faultproxy.Config{})
	f := limitingThrough(t, p.Addr(), srv.Addr, 1000)
	before, err := f.client.HGet(context.Background(), "retry:limit:k", "acc").Int64()
	require.NoError(t, err)
	p.Set(faultproxy.Faults{BlackHole: true})
	s := hammer(f, 8, time.Second, 100*time.Millisecond, time.Second)
	p.Set(faultproxy.Faults{})
	t.Logf("during the black hole: %d admitted, %d refused; worst overrun %v", s.admitted.Load(), s.refused.Load(), time.Duration(s.worst.Load()))
	assert.Less(t, time.Duration(s.worst.Load()), overrun, "no caller blocked past its deadline")
	assert.Greater(t, s.admitted.Load(), 8*s.refused.Load(), "the local limiter lets nearly all through")
	f.recovers(t, before+s.admitted.Load())
}

// TestAConnectionResetMidReplyCountsNothingTwice: every reply of Redis is
// cut by a reset after its first bytes: the script ran, its caller cannot
// know it, and go-redis sends it again on a new connection. The news it
// carried count once all the same.
func TestAConnectionResetMidReplyCountsNothingTwice(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr, faultproxy.Config{})
	f := limitingThrough(t, p.Addr(), srv.Addr, 1000)
	before, err := f.client.HGet(context.Background(), "retry:limit:k", "acc").Int64()
	require.NoError(t, err)
	p.Set(faultproxy.Faults{Reset: true, ResetAfter: 3})
	s := hammer(f, 8, time.Second, 100*time.Millisecond, time.Second)
	p.Set(faultproxy.Faults{})
	t.Logf("during the resets: %d admitted, %d refused, %d connections reset; worst overrun %v",
		s.admitted.Load(), s.refused.Load(), p.Resets(), time.Duration(s.worst.Load()))
	require.Positive(t, p.Resets(), "replies were cut")
	assert.Less(t, time.Duration(s.worst.Load()), overrun, "no caller blocked past its deadline")
	assert.Greater(t, s.admitted.Load(), 8*s.refused.Load(), "the local limiter lets nearly all through")
	f.recovers(t, before+s.admitted.Load())
}
