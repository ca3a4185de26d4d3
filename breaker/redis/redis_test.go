package redis_test

import (
	"context"
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
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newStore(t *testing.T, addr string, o brredis.Config) *brredis.Store {
	t.Helper()
	client := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	s, err := brredis.NewStore(client, o)
	require.NoError(t, err)
	return s
}

func TestStoreLocksExclusively(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv.Addr, brredis.Config{LockWait: 20 * time.Millisecond})
	b := newStore(t, srv.Addr, brredis.Config{LockWait: 20 * time.Millisecond})
	require.NoError(t, a.Lock("m"))
	assert.ErrorIs(t, b.Lock("m"), brredis.ErrLockBusy)
	assert.Error(t, b.Unlock("m"), "b does not hold it")
	require.NoError(t, a.Unlock("m"))
	require.NoError(t, b.Lock("m"))
	require.NoError(t, b.Unlock("m"))

	var inside atomic.Int32
	var most atomicMax
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if a.Lock("shared") != nil {
					continue
				}
				most.note(time.Duration(inside.Add(1)))
				inside.Add(-1)
				assert.NoError(t, a.Unlock("shared"))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, time.Duration(1), most.get(), "never two holders at once")
}

// expire ends a lock as its TTL would, at once, and waits until Redis has
// dropped it: the test does not race the TTL's timer.
func expire(t *testing.T, raw *goredis.Client, key string) {
	t.Helper()
	require.NoError(t, raw.PExpire(t.Context(), key, time.Millisecond).Err())
	require.Eventually(t, func() bool { return raw.Exists(t.Context(), key).Val() == 0 }, 5*time.Second, time.Millisecond)
}

func rawClient(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAnExpiredLockIsNotReleasedByItsOldHolder(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv.Addr, brredis.Config{LockWait: time.Millisecond})
	b := newStore(t, srv.Addr, brredis.Config{LockWait: time.Millisecond})
	require.NoError(t, a.Lock("m"))
	expire(t, rawClient(t, srv.Addr), "m")
	require.NoError(t, b.Lock("m"), "a's lock expired")
	require.NoError(t, a.Unlock("m"), "a's unlock is a no-op")
	c := newStore(t, srv.Addr, brredis.Config{LockWait: time.Millisecond})
	assert.ErrorIs(t, c.Lock("m"), brredis.ErrLockBusy, "b still holds it")
}

func TestALateUnlockInTheSameProcessDoesNotReleaseANewerHolder(t *testing.T) {
	// Two goroutines of one process share its Store, as gobreaker's
	// distributed breaker makes them: Lock and Unlock name no holder.
	srv := redistest.Start(t)
	s := newStore(t, srv.Addr, brredis.Config{LockWait: time.Millisecond})
	other := newStore(t, srv.Addr, brredis.Config{LockWait: time.Millisecond})
	require.NoError(t, s.Lock("m"), "holder A")
	expire(t, rawClient(t, srv.Addr), "m")
	require.NoError(t, s.Lock("m"), "holder B: A's lock expired")

	require.NoError(t, s.Unlock("m"), "A's late unlock")
	assert.ErrorIs(t, other.Lock("m"), brredis.ErrLockBusy, "B still holds the lock: another instance must not get it")

	require.NoError(t, s.Unlock("m"), "B's unlock")
	require.NoError(t, other.Lock("m"), "released once both holders unlocked")
	assert.Error(t, s.Unlock("m"), "the process holds no more tokens for m")
}

func TestStoreData(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Addr, brredis.Config{Prefix: "test:"})
	data, err := s.GetData("k")
	require.NoError(t, err)
	assert.Nil(t, data)
	require.NoError(t, s.SetData("k", []byte(`{"state":2}`)))
	data, err = s.GetData("k")
	require.NoError(t, err)
	assert.Equal(t, `{"state":2}`, string(data))
}

// instance is one process of a fleet: its own Redis client, Store, breakers
// and Retrier, and a dependency it counts calls to.
type instance struct {
	r       *retry.Retrier
	b       *breaker.Breakers
	calls   atomic.Int64
	failing atomic.Bool
	mu      sync.Mutex
	changes []string
}

// fleet is the key the tests' calls are to: its breaker is named
// "llm-gateway" in Redis.
var fleet = breaker.Key{Target: "llm-gateway"}

// do calls op through the instance's Retrier, to the fleet's key.
func (in *instance) do(ctx context.Context, op func(context.Context) error) error {
	return in.r.Do(breaker.WithKey(ctx, fleet), op)
}

func (in *instance) call(context.Context) error {
	in.calls.Add(1)
	if in.failing.Load() {
		return syscall.ECONNREFUSED
	}
	return nil
}

// Observe records the breakers' changes of state.
func (in *instance) Observe(_ context.Context, e observe.Event) {
	if t, ok := e.Detail.(breaker.Transition); ok {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.changes = append(in.changes, t.From.String()+"→"+t.To.String())
	}
}

func (in *instance) seen() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.changes...)
}

// fleetConfig trips after 3 consecutive failures and stays open 200ms.
var fleetConfig = breaker.Config{
	Timeout:     200 * time.Millisecond,
	ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
}

func newInstance(t *testing.T, addr string) *instance {
	t.Helper()
	return newInstanceWith(t, addr, brredis.Config{})
}

func newInstanceWith(t *testing.T, addr string, o brredis.Config) *instance {
	t.Helper()
	return instanceOn(t, newStore(t, addr, o))
}

// instanceOn is an instance of the fleet whose breakers live in s.
func instanceOn(t *testing.T, s *brredis.Store) *instance {
	t.Helper()
	in := &instance{}
	c := fleetConfig
	c.NewCircuit = brredis.Circuit(s)
	var err error
	in.b, err = breaker.New(c)
	require.NoError(t, err)
	in.r, err = retry.New(retry.WithMaxAttempts(1), retry.WithBreakers(in.b), retry.WithObserver(in))
	require.NoError(t, err)
	return in
}

func TestTwoInstancesOpenTogether(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newInstance(t, srv.Addr), newInstance(t, srv.Addr)
	a.failing.Store(true)
	for range 3 {
		assert.ErrorIs(t, a.do(t.Context(), a.call), syscall.ECONNREFUSED)
	}
	assert.ErrorIs(t, a.do(t.Context(), a.call), breaker.ErrOpen, "a opened its breaker")

	err := b.do(t.Context(), b.call)
	assert.ErrorIs(t, err, breaker.ErrOpen, "and b's is open too: it is the same breaker")
	assert.Zero(t, b.calls.Load(), "b never called its dependency")
	assert.Equal(t, []string{"closed→open"}, a.seen())
	assert.Equal(t, []string{"closed→open"}, b.seen(), "b reports the change it observed")

	time.Sleep(fleetConfig.Timeout + 50*time.Millisecond)
	require.NoError(t, b.do(t.Context(), b.call), "half-open: b's probe goes through and closes it")
	require.NoError(t, a.do(t.Context(), func(context.Context) error { return nil }), "closed for a as well")
	assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed"}, b.seen())
	assert.Equal(t, []string{"closed→open", "open→closed"}, a.seen(), "a saw only the result")
}

func TestCallsRunConcurrentlyAcrossInstances(t *testing.T) {
	// The distributed lock is held for the state update only, never for the
	// call: a call from each of two instances is inside at the same time.
	// Each waits (up to 10s) for the other to be inside too; were the calls
	// serialized, neither would see the other and the maximum would be 1.
	srv := redistest.Start(t)
	a, b := newInstance(t, srv.Addr), newInstance(t, srv.Addr)
	var running atomic.Int32
	var most atomicMax
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	meet := func(context.Context) error {
		most.note(time.Duration(running.Add(1)))
		defer running.Add(-1)
		arrived.Done()
		select {
		case <-both:
		case <-time.After(10 * time.Second):
		}
		return nil
	}
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, a.do(t.Context(), meet)) })
	wg.Go(func() { assert.NoError(t, b.do(t.Context(), meet)) })
	wg.Wait()
	assert.Equal(t, time.Duration(2), most.get())
}

func TestAnUnreachableRedisFallsBackToLocalCounts(t *testing.T) {
	srv := redistest.Start(t)
	a := newInstanceWith(t, srv.Addr, brredis.Config{Recheck: 100 * time.Millisecond})
	srv.Stop()
	a.failing.Store(true)
	for range 3 {
		assert.ErrorIs(t, a.do(t.Context(), a.call), syscall.ECONNREFUSED, "calls go through while Redis is down")
	}
	assert.ErrorIs(t, a.do(t.Context(), a.call), breaker.ErrOpen, "and the local counts still protect the dependency")
	assert.Equal(t, int64(3), a.calls.Load())

	srv.Restart(t) // back, and empty: the shared state is recreated
	time.Sleep(100 * time.Millisecond)
	a.failing.Store(false)
	require.NoError(t, a.do(t.Context(), a.call), "Redis is asked again after Recheck")
}

func TestAKeyFirstSeenWhileRedisIsDownIsGuardedLocally(t *testing.T) {
	// Making a key's circuit asks Redis nothing: the first call to a key
	// while Redis is down goes through, counted locally, as any call does
	// once Redis failed.
	srv := redistest.Start(t)
	a := newInstanceWith(t, srv.Addr, brredis.Config{OpTimeout: opTimeout, Recheck: time.Minute})
	srv.Stop()
	a.failing.Store(true)
	for i := range 4 {
		start := time.Now()
		err := a.do(t.Context(), a.call)
		assert.Less(t, time.Since(start), opTimeout+slack, "call %d", i)
		if i < 3 {
			assert.ErrorIs(t, err, syscall.ECONNREFUSED, "call %d went through", i)
		} else {
			assert.ErrorIs(t, err, breaker.ErrOpen, "three failures counted locally opened the breaker")
		}
	}
	assert.Equal(t, int64(3), a.calls.Load())
}

func TestEachKeyIsADistributedBreakerOfItsOwn(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newInstance(t, srv.Addr), newInstance(t, srv.Addr)
	qwen := breaker.Key{Target: "gateway.example", Operation: "qwen3"}
	llama := breaker.Key{Target: "gateway.example", Operation: "llama"}
	a.failing.Store(true)
	for range 3 {
		assert.ErrorIs(t, a.r.Do(breaker.WithKey(t.Context(), qwen), a.call), syscall.ECONNREFUSED)
	}
	assert.ErrorIs(t, b.r.Do(breaker.WithKey(t.Context(), qwen), b.call), breaker.ErrOpen, "the fleet's qwen3 breaker is open")
	require.NoError(t, b.r.Do(breaker.WithKey(t.Context(), llama), b.call), "and its llama breaker closed")
	assert.Equal(t, breaker.StateOpen, b.b.State(qwen))
	assert.Equal(t, breaker.StateClosed, b.b.State(llama))

	raw := rawClient(t, srv.Addr)
	assert.Equal(t, int64(1), raw.Exists(t.Context(), "gobreaker:state:gateway.example/qwen3").Val(), "named by the key")
	assert.Equal(t, int64(1), raw.Exists(t.Context(), "gobreaker:state:gateway.example/llama").Val())

	require.NoError(t, b.r.Do(t.Context(), b.call), "the zero Key is a key too")
	assert.Equal(t, int64(1), raw.Exists(t.Context(), "gobreaker:state:").Val())
}
