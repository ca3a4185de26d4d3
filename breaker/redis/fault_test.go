package redis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	brredis "github.com/retrykit/retry/breaker/redis"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The faults a fleet's Redis has: it crashes (SIGKILL: connections are
// refused) or it hangs (SIGSTOP: connections are accepted, nothing answers).
func TestACrashedRedisDoesNotStallCallers(t *testing.T) {
	callersOutlive(t, (*redistest.Server).Stop)
}

func TestAHungRedisDoesNotStallCallers(t *testing.T) {
	callersOutlive(t, (*redistest.Server).Pause)
}

const (
	opTimeout = 200 * time.Millisecond
	work      = time.Millisecond // each call's own work
	callers   = 16
	slack     = 300 * time.Millisecond // for the scheduler of a loaded machine, under -race
)

// callersOutlive runs callers through one instance while fault strikes its
// Redis, with a go-redis client as a user has it by default (no
// ContextTimeoutEnabled, 3s read timeout, 3 retries): no call waits for Redis
// longer than OpTimeout, and once the dependency fails the instance's local
// counts open the breaker.
func callersOutlive(t *testing.T, fault func(*redistest.Server)) {
	srv := redistest.Start(t)
	client := goredis.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	store, err := brredis.NewStore(client, brredis.Config{OpTimeout: opTimeout, Recheck: 100 * time.Millisecond})
	require.NoError(t, err)
	c := fleetConfig
	c.NewCircuit = brredis.Circuit(store)
	b, err := breaker.New(c)
	require.NoError(t, err)
	r, err := retry.New(retry.WithMaxAttempts(1), retry.WithBreakers(b))
	require.NoError(t, err)
	ctx := breaker.WithKey(context.Background(), fleet)

	var failing atomic.Bool
	var failures atomic.Int64
	dep := func(context.Context) error {
		time.Sleep(work)
		if failing.Load() {
			failures.Add(1)
			return syscall.ECONNREFUSED
		}
		return nil
	}
	var longest atomicMax
	var opened atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				err := r.Do(ctx, dep)
				blocked := time.Since(start)
				if errors.Is(err, breaker.ErrOpen) {
					opened.Store(true)
				} else {
					blocked -= work
				}
				longest.note(blocked)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // calls in flight, through Redis
	fault(srv)
	time.Sleep(4 * opTimeout) // several Recheck periods with Redis gone
	failing.Store(true)
	deadline := time.Now().Add(10 * opTimeout)
	for !opened.Load() && time.Now().Before(deadline) {
		time.Sleep(work)
	}
	close(stop)
	wg.Wait()
	t.Logf("longest wait for Redis in a call: %v", longest.get())
	assert.Less(t, longest.get(), opTimeout+slack, "no call waits for Redis longer than OpTimeout")
	assert.True(t, opened.Load(), "the local counts opened the breaker")
	assert.LessOrEqual(t, failures.Load(), int64(3+callers), "three failures open it; calls in flight may add one each")
}

func TestALockHeldElsewhereDoesNotStallCallers(t *testing.T) {
	// gobreaker's distributed breaker retries a lock it cannot take for 5s,
	// 500ms apart, inside the caller's call. An instance that crashed
	// holding the fleet's lock leaves it for LockTTL: a call that cannot
	// take it waits LockWait, then this instance counts locally.
	srv := redistest.Start(t)
	in := newInstanceWith(t, srv.Addr, brredis.Config{OpTimeout: opTimeout, Recheck: time.Minute})
	held := rawClient(t, srv.Addr)
	require.NoError(t, held.Set(t.Context(), "gobreaker:mutex:"+fleet.String(), "a crashed holder", time.Minute).Err())
	in.failing.Store(true)
	for i := range 5 {
		start := time.Now()
		err := in.do(t.Context(), in.call)
		assert.Less(t, time.Since(start), opTimeout+slack, "call %d", i)
		if i < 3 {
			assert.ErrorIs(t, err, syscall.ECONNREFUSED, "call %d went through", i)
		} else {
			assert.ErrorIs(t, err, breaker.ErrOpen, "call %d: three failures counted locally opened the breaker", i)
		}
	}
	assert.Equal(t, int64(3), in.calls.Load())
}

func TestAnOpenBreakerStaysOpenWhileAnotherInstanceHoldsTheLock(t *testing.T) {
	// The breaker's timeout has passed, but the instance that would move it
	// to half-open cannot take the lock: it judges by the state it read, and
	// rejects the call at once rather than fall back to local counts that
	// never saw the breaker open.
	srv := redistest.Start(t)
	a := newInstanceWith(t, srv.Addr, brredis.Config{OpTimeout: opTimeout})
	b := newInstanceWith(t, srv.Addr, brredis.Config{OpTimeout: opTimeout})
	a.failing.Store(true)
	for range 3 {
		assert.ErrorIs(t, a.do(t.Context(), a.call), syscall.ECONNREFUSED)
	}
	held := rawClient(t, srv.Addr)
	require.NoError(t, held.Set(t.Context(), "gobreaker:mutex:"+fleet.String(), "another instance", time.Minute).Err())
	time.Sleep(fleetConfig.Timeout + 50*time.Millisecond) // the open state's expiry, written before, has passed

	start := time.Now()
	assert.ErrorIs(t, b.do(t.Context(), b.call), breaker.ErrOpen)
	assert.Less(t, time.Since(start), opTimeout+slack)
	assert.Zero(t, b.calls.Load(), "b never called its dependency")
}

// atomicMax is a running maximum updated by many goroutines.
type atomicMax struct{ v atomic.Int64 }

func (m *atomicMax) note(d time.Duration) {
	for {
		old := m.v.Load()
		if int64(d) <= old || m.v.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func (m *atomicMax) get() time.Duration { return time.Duration(m.v.Load()) }
