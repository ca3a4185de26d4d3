package redis_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	accepted  = limit.Outcome{Result: limit.Accepted}
	throttled = limit.Outcome{Result: limit.Throttled, RetryAfter: time.Second}
)

func newClient(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

func newLimiter(t *testing.T, addr, name string, o lredis.Config) *lredis.Limiter {
	t.Helper()
	l, err := lredis.New(newClient(t, addr), name, o)
	require.NoError(t, err)
	return l
}

func TestTheFleetWaitsForAMeasurementBeforeItsFirstCut(t *testing.T) {
	srv := redistest.Start(t)
	l := newLimiter(t, srv.Addr, "k", lredis.Config{})
	ctx := context.Background()
	l.Record(ctx, throttled) // the very first answer is a 429
	require.True(t, l.Acquire(ctx, time.Second))
	assert.True(t, l.Rate() > 1e300, "nothing measured yet: no limit")
}

func TestAThrottleSeenByOneInstanceLimitsTheOthers(t *testing.T) {
	srv := redistest.Start(t)
	a := newLimiter(t, srv.Addr, "api-key-1", lredis.Config{})
	b := newLimiter(t, srv.Addr, "api-key-1", lredis.Config{})
	other := newLimiter(t, srv.Addr, "api-key-2", lredis.Config{})
	ctx := context.Background()

	require.True(t, b.Acquire(ctx, time.Second))
	assert.True(t, b.Rate() > 1e300, "the fleet does not limit yet")
	for range 100 {
		require.True(t, a.Acquire(ctx, time.Second))
		a.Record(ctx, accepted)
		time.Sleep(time.Millisecond)
	}
	a.Record(ctx, throttled)
	require.True(t, a.Acquire(ctx, time.Second), "tells the fleet")
	rate := a.Rate()
	assert.Less(t, rate, 1000.0, "a's throttle set the fleet's rate")
	assert.Greater(t, rate, 0.5)

	time.Sleep(60 * time.Millisecond) // b's Sync
	require.True(t, b.Acquire(ctx, time.Second))
	assert.InDelta(t, rate, b.Rate(), rate*0.1, "b limits at the fleet's rate")
	require.True(t, other.Acquire(ctx, time.Second))
	assert.True(t, other.Rate() > 1e300, "another name is another limit")
}

func TestTheFleetPacesItsTurns(t *testing.T) {
	srv := redistest.Start(t)
	o := lredis.Config{Adaptive: limit.AdaptiveConfig{Burst: time.Millisecond}}
	a := newLimiter(t, srv.Addr, "k", o)
	b := newLimiter(t, srv.Addr, "k", o)
	ctx := context.Background()
	require.True(t, a.Acquire(ctx, time.Second), "the fleet's measurement starts")
	time.Sleep(time.Second) // nothing accepted in the window: a cut to the minimum
	a.Record(ctx, limit.Outcome{Result: limit.Throttled})
	require.True(t, a.Acquire(ctx, time.Second), "the first turn is due at once")
	assert.Equal(t, 0.5, a.Rate())
	start := time.Now()
	assert.False(t, b.Acquire(ctx, time.Second), "b's turn comes 2s later: beyond its maxWait")
	assert.Less(t, time.Since(start), 500*time.Millisecond, "refused at once, without waiting in vain")
}

func TestMaxWaitBoundsTheWaitForATurn(t *testing.T) {
	srv := redistest.Start(t)
	l := newLimiter(t, srv.Addr, "k", lredis.Config{Adaptive: limit.AdaptiveConfig{MinRate: 20, Burst: time.Millisecond}})
	ctx := context.Background()
	require.True(t, l.Acquire(ctx, time.Second), "the fleet's measurement starts")
	time.Sleep(time.Second)
	l.Record(ctx, limit.Outcome{Result: limit.Throttled}) // 20 a second
	require.True(t, l.Acquire(ctx, time.Second))
	start := time.Now()
	require.True(t, l.Acquire(ctx, time.Second))
	assert.InDelta(t, 50*time.Millisecond, time.Since(start), float64(30*time.Millisecond), "one turn every 50ms")
}

// TestAFleetStalledDependencyIsShedThenReturnsToItsRate: with Timeouts, the
// fleet's dependency answers every call in time, then stalls: the first
// timeout cuts the fleet to its minimum rate, which holds while nothing is
// answered in time, and the first answers in time put it back on the curve
// to the rate it accepted before. Windows of 200ms keep it short; the rate
// before is what the script measured (its peak), however fast this machine
// made the calls.
func TestAFleetStalledDependencyIsShedThenReturnsToItsRate(t *testing.T) {
	srv := redistest.Start(t)
	const window = 200 * time.Millisecond
	c := newClient(t, srv.Addr)
	l, err := lredis.New(c, "k", lredis.Config{Adaptive: limit.AdaptiveConfig{Timeouts: true, Window: window}})
	require.NoError(t, err)
	ctx := context.Background()
	for end := time.Now().Add(3 * window); time.Now().Before(end); {
		require.True(t, l.Acquire(ctx, time.Second))
		l.Record(ctx, accepted)
	}
	for end := time.Now().Add(5 * window / 2); time.Now().Before(end); { // the stall: calls, no answers
		require.True(t, l.Acquire(ctx, time.Second))
		time.Sleep(window / 10)
	}
	peak, err := c.HGet(ctx, "retry:limit:k", "peak").Float64()
	require.NoError(t, err)
	require.Greater(t, peak, 20.0, "the rate accepted before the stall was measured")

	l.Record(ctx, limit.Outcome{Result: limit.TimedOut})
	l.Acquire(ctx, 0)
	minimum := limit.AdaptiveConfig{}.WithDefaults().MinRate
	assert.Equal(t, minimum, l.Rate(), "nothing answered in time: as little as the fleet may")
	time.Sleep(3 * window / 2)
	l.Acquire(ctx, 0)
	assert.Equal(t, minimum, l.Rate(), "held while nothing is answered in time")
	l.Record(ctx, accepted)
	l.Acquire(ctx, 0)
	assert.Greater(t, l.Rate(), 0.8*peak, "back on the curve to the rate before the stall (%.0f a second)", peak)
}

// TestAFleetWithAStartLimitsFromItsFirstCallAndDoubles: with
// Adaptive.Start, a new fleet paces its very first calls at Start, and
// doubles its rate every Window/10 while its line is busy, as
// limit.Adaptive does; without it, it lets every call through.
func TestAFleetWithAStartLimitsFromItsFirstCallAndDoubles(t *testing.T) {
	srv := redistest.Start(t)
	l := newLimiter(t, srv.Addr, "k", lredis.Config{Adaptive: limit.AdaptiveConfig{Start: 10}})
	ctx := context.Background()
	require.True(t, l.Acquire(ctx, time.Second))
	assert.Equal(t, 10.0, l.Rate(), "limits from its first call")
	var admitted int
	for end := time.Now().Add(550 * time.Millisecond); time.Now().Before(end); {
		if l.Acquire(ctx, 0) {
			admitted++
		}
	}
	// 0.1s each at 10, 20, 40, 80 and 160 a second, and a turn or two of burst.
	assert.Less(t, admitted, 60, "paced as it doubled")
	assert.GreaterOrEqual(t, l.Rate(), 160.0, "doubled every 100ms while its line was busy")

	free := newLimiter(t, srv.Addr, "other", lredis.Config{})
	require.True(t, free.Acquire(ctx, time.Second))
	assert.True(t, free.Rate() > 1e300, "no Start: no limit until a throttled answer")
}

// TestAFleetsStartEndsWithItsFirstCut: the first throttled answer after
// Hold cuts a starting fleet to Beta times the rate it accepted lately, and
// the doubling stops.
func TestAFleetsStartEndsWithItsFirstCut(t *testing.T) {
	srv := redistest.Start(t)
	l := newLimiter(t, srv.Addr, "k", lredis.Config{Adaptive: limit.AdaptiveConfig{Start: 100}})
	ctx := context.Background()
	for end := time.Now().Add(350 * time.Millisecond); time.Now().Before(end); {
		if l.Acquire(ctx, 0) {
			l.Record(ctx, accepted)
		}
	}
	started := l.Rate()
	require.GreaterOrEqual(t, started, 400.0)
	l.Record(ctx, throttled)
	l.Acquire(ctx, 0)
	cut := l.Rate()
	t.Logf("started up to %.0f a second, cut to %.0f", started, cut)
	assert.Less(t, cut, started, "cut")
	assert.Greater(t, cut, 0.9*started/2.5, "to what it accepted lately, not over its whole start (0.9·314)")
	time.Sleep(300 * time.Millisecond)
	l.Acquire(ctx, 0)
	assert.Less(t, l.Rate(), 1.5*cut, "no more doubling")
}

// TestAnInstanceGoneForTTLIsForgotten: the hash keeps an entry per
// instance, to count its news once; an instance silent for TTL loses its
// entry, so that a fleet whose instances come and go does not grow its
// hash for ever.
func TestAnInstanceGoneForTTLIsForgotten(t *testing.T) {
	srv := redistest.Start(t)
	o := lredis.Config{TTL: time.Second, Adaptive: limit.AdaptiveConfig{Start: 1e6}}
	a, gone := newLimiter(t, srv.Addr, "k", o), newLimiter(t, srv.Addr, "k", o)
	ctx := context.Background()
	require.True(t, gone.Acquire(ctx, time.Second))
	c := newClient(t, srv.Addr)
	instances := func() int {
		n := 0
		for _, f := range c.HKeys(ctx, "retry:limit:k").Val() {
			if len(f) > 2 && f[:2] == "i:" {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, instances())
	for end := time.Now().Add(3500 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		require.True(t, a.Acquire(ctx, time.Second))
	}
	assert.Equal(t, 1, instances(), "the live one only")
}
