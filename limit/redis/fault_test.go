package redis_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The faults a fleet's Redis has: it crashes (SIGKILL: connections are
// refused) or it hangs (SIGSTOP: connections are accepted, nothing answers).
func TestACrashedRedisFallsBackToLocalLimiting(t *testing.T) {
	fallsBack(t, (*redistest.Server).Stop, nil)
}

func TestAHungRedisFallsBackToLocalLimitingAndComesBack(t *testing.T) {
	fallsBack(t, (*redistest.Server).Pause, (*redistest.Server).Resume)
}

const (
	opTimeout = 200 * time.Millisecond
	recheck   = 300 * time.Millisecond
	slack     = 500 * time.Millisecond // for the scheduler of a loaded machine, under -race
)

// fallsBack runs callers through one instance whose fleet limits, while fault
// strikes its Redis, with a go-redis client as a user has it by default (no
// ContextTimeoutEnabled, 3s read timeout): no Acquire waits for Redis longer
// than OpTimeout, the local limiter decides while Redis is away, and, if
// heal brings it back, the fleet decides again after Recheck.
func fallsBack(t *testing.T, fault, heal func(*redistest.Server)) {
	srv := redistest.Start(t)
	l := newLimiter(t, srv.Addr, "k", lredis.Config{OpTimeout: opTimeout, Recheck: recheck,
		Adaptive: limit.AdaptiveConfig{MinRate: 1000}})
	ctx := context.Background()
	require.True(t, l.Acquire(ctx, time.Second), "the fleet's measurement starts")
	time.Sleep(150 * time.Millisecond) // past Hold
	l.Record(ctx, limit.Outcome{Result: limit.Throttled})
	require.True(t, l.Acquire(ctx, time.Second))
	require.Equal(t, 1000.0, l.Rate(), "the fleet limits, at 1000 a second: every Acquire asks Redis")

	fault(srv)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var longest time.Duration
	for range 8 {
		wg.Go(func() {
			for range 20 {
				start := time.Now()
				ok := l.Acquire(ctx, time.Second)
				took := time.Since(start)
				mu.Lock()
				longest = max(longest, took)
				mu.Unlock()
				assert.True(t, ok, "the local limiter, at its own 1000 a second, lets it through")
				l.Record(ctx, limit.Outcome{Result: limit.Accepted})
			}
		})
	}
	wg.Wait()
	assert.Less(t, longest, opTimeout+slack, "no Acquire waited for Redis longer than OpTimeout")
	assert.Equal(t, l.Local().Rate(), l.Rate(), "while Redis is away, the rate is the local limiter's")
	if heal == nil {
		return
	}
	heal(srv)
	time.Sleep(recheck)
	require.True(t, l.Acquire(ctx, time.Second))
	assert.Equal(t, 1000.0, l.Rate(), "back on the fleet's limit after Recheck")
}
