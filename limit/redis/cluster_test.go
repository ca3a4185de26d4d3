package redis_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
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
	c, hook := clusterClient(t, cl)
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

	hook.mu.Lock()
	defer hook.mu.Unlock()
	assert.Positive(t, hook.runs, "the limiter's scripts ran")
	assert.Empty(t, hook.crossSlot, "scripts run on keys of more than one slot")
}

// clusterClient returns a client of cl whose every node records the
// scripts it runs.
func clusterClient(t *testing.T, cl *redistest.Cluster) (*goredis.ClusterClient, *nodeHook) {
	t.Helper()
	hook := &nodeHook{}
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs()})
	c.OnNewNode(func(n *goredis.Client) { n.AddHook(hook) })
	t.Cleanup(func() { c.Close() })
	return c, hook
}

// nodeHook sees every command a node of a cluster client sends (the
// cluster client routes each to a node): it counts script runs, and notes a
// script whose keys span slots.
type nodeHook struct {
	mu        sync.Mutex
	runs      int
	crossSlot []string
}

func (h *nodeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *nodeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.note(cmd.Args())
		return next(ctx, cmd)
	}
}

func (h *nodeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, cmd := range cmds {
			h.note(cmd.Args())
		}
		return next(ctx, cmds)
	}
}

func (h *nodeHook) note(args []any) {
	_, keys, ok := redistest.ScriptKeys(args)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs++
	if !redistest.SameSlot(keys...) {
		h.crossSlot = append(h.crossSlot, fmt.Sprint(keys))
	}
}
