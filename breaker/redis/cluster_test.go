package redis_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry/breaker"
	brredis "github.com/retrykit/retry/breaker/redis"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The breakers on a real Redis Cluster: three primaries with a replica
// each, one cluster for all these subtests (each with a prefix of its own).
// A breaker's state and its lock are two keys, in whatever slots their
// names hash to: no script touches both.
func TestTheBreakersOnARedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	var n atomic.Int32
	prefix := func() string { return fmt.Sprintf("check-%d:", n.Add(1)) }
	t.Run("a lock has one holder at a time", func(t *testing.T) {
		p := prefix()
		a, b := clusterStore(t, cl, brredis.Config{Prefix: p, LockWait: 20 * time.Millisecond}), clusterStore(t, cl, brredis.Config{Prefix: p, LockWait: 20 * time.Millisecond})
		require.NoError(t, a.Lock("m"))
		assert.ErrorIs(t, b.Lock("m"), brredis.ErrLockBusy)
		require.NoError(t, a.Unlock("m"))
		require.NoError(t, b.Lock("m"))
		require.NoError(t, b.Unlock("m"))
		var inside, most atomic.Int32
		var wg sync.WaitGroup
		for _, s := range []*brredis.Store{a, b} {
			for range 4 {
				wg.Go(func() {
					for range 10 {
						if s.Lock("shared") != nil {
							continue
						}
						if n := inside.Add(1); n > most.Load() {
							most.Store(n)
						}
						inside.Add(-1)
						assert.NoError(t, s.Unlock("shared"))
					}
				})
			}
		}
		wg.Wait()
		assert.Equal(t, int32(1), most.Load(), "never two holders at once")
	})
	t.Run("the data round-trips", func(t *testing.T) {
		s := clusterStore(t, cl, brredis.Config{Prefix: prefix()})
		data, err := s.GetData("k")
		require.NoError(t, err)
		assert.Nil(t, data)
		require.NoError(t, s.SetData("k", []byte(`{"state":2}`)))
		data, err = s.GetData("k")
		require.NoError(t, err)
		assert.Equal(t, `{"state":2}`, string(data))
	})
	t.Run("two instances open together, and close together", func(t *testing.T) {
		p := prefix()
		a, b := clusterInstance(t, cl, p), clusterInstance(t, cl, p)
		a.failing.Store(true)
		for range 3 {
			assert.ErrorIs(t, a.do(t.Context(), a.call), syscall.ECONNREFUSED)
		}
		assert.ErrorIs(t, b.do(t.Context(), b.call), breaker.ErrOpen, "b's breaker is a's")
		assert.Zero(t, b.calls.Load())
		time.Sleep(fleetConfig.Timeout + 50*time.Millisecond)
		require.NoError(t, b.do(t.Context(), b.call), "half-open: b's probe closes it")
		require.NoError(t, a.do(t.Context(), func(context.Context) error { return nil }), "closed for a as well")
	})
	t.Run("two instances waiting for a replica open together", func(t *testing.T) {
		p := prefix()
		a, b := clusterInstanceWith(t, cl, brredis.Config{Prefix: p, Replicas: 1}), clusterInstanceWith(t, cl, brredis.Config{Prefix: p, Replicas: 1})
		a.failing.Store(true)
		for range 3 {
			assert.ErrorIs(t, a.do(t.Context(), a.call), syscall.ECONNREFUSED)
		}
		assert.ErrorIs(t, b.do(t.Context(), b.call), breaker.ErrOpen, "b's breaker is a's")
	})
	t.Run("runs every script on keys of one slot", func(t *testing.T) {
		c, hook := cl.Client(t)
		for _, replicas := range []int{0, 1} {
			s, err := brredis.NewStore(c, brredis.Config{Prefix: prefix(), Replicas: replicas})
			require.NoError(t, err)
			require.NoError(t, s.Lock("m"))
			require.NoError(t, s.SetData("m", []byte("{}")))
			require.NoError(t, s.Unlock("m"))
		}
		hook.CheckOneSlot(t, brredis.Scripts)
	})
	t.Run("a write its replica does not confirm fails, waiting for a replica", func(t *testing.T) {
		p := prefix()
		s := clusterStore(t, cl, brredis.Config{Prefix: p, Replicas: 1, OpTimeout: 200 * time.Millisecond})
		require.NoError(t, s.SetData("{x}state", []byte("a")))
		cl.Detach(t, cl.Replica(t, cl.Primary(t, redistest.Slot("{x}")))) // the cluster's last use
		assert.Error(t, s.SetData("{x}state", []byte("b")), "not acknowledged: the replica lags")
		assert.Error(t, s.Lock("{x}lock"), "nor is a lock")
	})
}

func clusterStore(t *testing.T, cl *redistest.Cluster, o brredis.Config) *brredis.Store {
	t.Helper()
	c, _ := cl.Client(t)
	s, err := brredis.NewStore(c, o)
	require.NoError(t, err)
	return s
}

// clusterInstance is an instance of the fleet whose breakers live on cl,
// under prefix.
func clusterInstance(t *testing.T, cl *redistest.Cluster, prefix string) *instance {
	t.Helper()
	return clusterInstanceWith(t, cl, brredis.Config{Prefix: prefix})
}

func clusterInstanceWith(t *testing.T, cl *redistest.Cluster, o brredis.Config) *instance {
	t.Helper()
	return instanceOn(t, clusterStore(t, cl, o))
}
