package redis_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/idempotency/storetest"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The store on a real Redis Cluster: three primaries with a replica each,
// one cluster for all these subtests (each with keys of its own).
func TestTheStoreOnARedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	var n atomic.Int32
	prefix := func() string { return fmt.Sprintf("check-%d:", n.Add(1)) }
	t.Run("keeps the store's contract", func(t *testing.T) {
		c, _ := cl.Client(t)
		storetest.Run(t, func(t *testing.T) idempotency.Store { return newStore(t, c, redis.Config{Prefix: prefix()}) })
	})
	t.Run("keeps the store's contract waiting for a replica", func(t *testing.T) {
		c, _ := cl.Client(t)
		storetest.Run(t, func(t *testing.T) idempotency.Store {
			return newStore(t, c, redis.Config{Prefix: prefix(), Replicas: 1})
		})
	})
	t.Run("runs every script on keys of one slot", func(t *testing.T) {
		c, hook := cl.Client(t)
		for _, replicas := range []int{0, 1} {
			s := newStore(t, c, redis.Config{Prefix: prefix(), Replicas: replicas})
			exercise(t, s)
		}
		hook.CheckOneSlot(t, redis.Scripts)
	})
	t.Run("loses nothing and runs nothing twice while a slot migrates", func(t *testing.T) { migrateWhileRunning(t, cl, 0) })
	t.Run("loses nothing and runs nothing twice while a slot migrates, waiting for a replica", func(t *testing.T) {
		migrateWhileRunning(t, cl, 1)
	})
}

// exercise runs every method of the store, and every script.
func exercise(t *testing.T, s *redis.Store) {
	ctx := t.Context()
	key := idempotency.StoreKey{Scope: "tenant", Key: "k"}
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "t1"}
	_, ok, err := s.Claim(ctx, key, claim, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Extend(ctx, key, "t1", time.Minute))
	require.NoError(t, s.Release(ctx, key, "t1"))
	_, ok, err = s.Claim(ctx, key, idempotency.Record{Status: idempotency.InProgress, Token: "t2"}, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Complete(ctx, key, idempotency.Record{Status: idempotency.Succeeded, Token: "t2", Value: []byte("v")}, time.Minute))
}

// migrateWhileRunning moves the slot of every key that workers claim and
// complete, a few keys at a time, while they run; then every key is called
// again. Each key's function must have run exactly once, and the second
// calls must all be replays of the first.
func migrateWhileRunning(t *testing.T, cl *redistest.Cluster, replicas int) {
	c, hook := cl.Client(t)
	tag := fmt.Sprintf("{migrate-%d}:", replicas)
	s := newStore(t, c, redis.Config{Prefix: tag, Replicas: replicas})
	ctx := t.Context()
	var runs sync.Map // key → *atomic.Int32
	var next atomic.Int32
	var failed atomic.Int32
	call := func(key string) (idempotency.Result, error) {
		return idempotency.Do(ctx, s, key, idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
			n, _ := runs.LoadOrStore(key, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return []byte(key), nil
		})
	}
	stopWorkers := redistest.Workers(t, 4, func() {
		if _, err := call(fmt.Sprint("k", next.Add(1))); err != nil {
			failed.Add(1)
			t.Errorf("during the migration: %v", err)
		}
	})
	for next.Load() < 50 { // keys to move before the migration starts
		time.Sleep(time.Millisecond)
	}
	moved0, ask0 := cl.Redirects(t)
	m := cl.Migrate(t, redistest.Slot(tag), cl.Other(t, redistest.Slot(tag)))
	for m.Move(t, 5) > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	redistest.Until(t, "an ASK reply while the slot migrates", func() bool { _, ask := cl.Redirects(t); return ask > ask0 })
	moved := m.Finish(t)
	after := next.Load()
	redistest.Until(t, "calls after the slot has moved", func() bool { return next.Load() > after+20 })
	stopWorkers()

	movedReplies, askReplies := cl.Redirects(t)
	movedReplies, askReplies = movedReplies-moved0, askReplies-ask0
	keys := int(next.Load())
	ranTwice, replayed := 0, 0
	runs.Range(func(_, n any) bool {
		if n.(*atomic.Int32).Load() != 1 {
			ranTwice++
		}
		return true
	})
	for i := 1; i <= keys; i++ {
		res, err := call(fmt.Sprint("k", i))
		if err == nil && res.Replay && string(res.Value) == fmt.Sprint("k", i) {
			replayed++
		}
	}
	t.Logf("%d keys, %d moved by the migration; the nodes sent %d ASK and %d MOVED replies", keys, moved, askReplies, movedReplies)
	assert.Positive(t, moved, "keys moved while the workers ran")
	assert.Zero(t, ranTwice, "no key ran twice")
	assert.Equal(t, keys-int(failed.Load()), replayed, "every key's first result was kept: later calls replay it")
	hook.CheckOneSlot(t, nil)
}
