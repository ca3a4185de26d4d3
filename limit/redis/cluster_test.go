package redis_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/redistest"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fleet's limit on a real Redis Cluster, three primaries with a replica
// each: instances sharing a name share one limit, wherever its key's slot
// is, and every script runs on keys of one slot.
func TestTheFleetsLimitOnARedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	c, hook := cl.Client(t)
	limiter := func(name string) *lredis.Limiter {
		l, err := lredis.New(c, name, lredis.Config{})
		require.NoError(t, err)
		return l
	}
	a, b, other := limiter("api-key-1"), limiter("api-key-1"), limiter("api-key-2")
	ctx := context.Background()
	require.True(t, b.Acquire(ctx, time.Second))
	for range 100 {
		require.True(t, a.Acquire(ctx, time.Second))
		a.Record(ctx, accepted)
		time.Sleep(time.Millisecond)
	}
	a.Record(ctx, throttled)
	require.True(t, a.Acquire(ctx, time.Second), "tells the fleet")
	rate := a.Rate()
	require.False(t, math.IsInf(rate, 1), "a's throttle set the fleet's rate")

	time.Sleep(60 * time.Millisecond) // b's Sync
	require.True(t, b.Acquire(ctx, time.Second))
	assert.InDelta(t, rate, b.Rate(), rate*0.1, "b limits at the fleet's rate")
	require.True(t, other.Acquire(ctx, time.Second))
	assert.NotEqual(t, rate, other.Rate(), "another name is another limit")

	assert.Positive(t, hook.Runs(), "the limiter's scripts ran")
	assert.Empty(t, hook.CrossSlot(), "scripts run on keys of more than one slot")
}
