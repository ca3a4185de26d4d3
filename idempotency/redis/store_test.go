package redis_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/idempotency/storetest"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newClient starts a redis-server for t (or skips, or fails, as
// redistest.Start decides) and returns a client of it.
func newClient(t *testing.T) (*goredis.Client, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c, srv
}

func newStore(t *testing.T, c goredis.Scripter, cfg redis.Config) *redis.Store {
	t.Helper()
	s, err := redis.New(c, cfg)
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	c, _ := newClient(t)
	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		// One server, a key space of its own for each check.
		return newStore(t, c, redis.Config{Prefix: fmt.Sprintf("check-%d:", n.Add(1))})
	})
}

func TestRecordsAreStoredInTheDocumentedLayout(t *testing.T) {
	c, _ := newClient(t)
	s := newStore(t, c, redis.Config{})
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "exec-1", Fingerprint: idempotency.NewFingerprint([]byte("a"))}
	_, ok, err := s.Claim(t.Context(), idempotency.StoreKey{Key: "order-1"}, claim, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	raw, err := c.Get(t.Context(), "idempotency:order-1").Bytes()
	require.NoError(t, err)
	want, _ := claim.MarshalBinary()
	assert.Equal(t, want, raw)
	assert.Equal(t, []byte{1, byte(idempotency.InProgress), 6}, raw[:3], "the scripts recognise a claim by version 1, status 1 and the token's length")
	ttl, err := c.PTTL(t.Context(), "idempotency:order-1").Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Minute.Seconds(), ttl.Seconds(), 5, "the lease is the key's expiry")

	done := claim
	done.Status, done.Value = idempotency.Succeeded, []byte("receipt")
	require.NoError(t, s.Complete(t.Context(), idempotency.StoreKey{Key: "order-1"}, done, 24*time.Hour))
	ttl, _ = c.PTTL(t.Context(), "idempotency:order-1").Result()
	assert.InDelta(t, (24 * time.Hour).Seconds(), ttl.Seconds(), 5, "the retention is the record's expiry")
}

func TestACorruptRecordIsAStoreFailureNotAReplay(t *testing.T) {
	c, _ := newClient(t)
	s := newStore(t, c, redis.Config{})
	require.NoError(t, c.Set(t.Context(), "idempotency:k", "not a record", 0).Err())
	var runs atomic.Int32
	_, err := idempotency.Do(t.Context(), s, "k", idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
		runs.Add(1)
		return nil, nil
	})
	require.ErrorIs(t, err, idempotency.ErrStore)
	assert.Contains(t, err.Error(), "corrupt idempotency record")
	assert.Zero(t, runs.Load())
}

func TestTheStoreWorksAgainAfterRedisRestarts(t *testing.T) {
	c, srv := newClient(t)
	s := newStore(t, c, redis.Config{})
	fn := func(v string) func(context.Context) ([]byte, error) {
		return func(context.Context) ([]byte, error) { return []byte(v), nil }
	}
	_, err := idempotency.Do(t.Context(), s, "before", idempotency.Fingerprint{}, fn("a"))
	require.NoError(t, err)
	srv.Restart(t) // empty, and without the scripts cached: EVALSHA fails, EVAL runs
	var res idempotency.Result
	require.Eventually(t, func() bool {
		res, err = idempotency.Do(t.Context(), s, "after", idempotency.Fingerprint{}, fn("b"))
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "the client reconnects: %v", err)
	assert.False(t, res.Replay)
	res, err = idempotency.Do(t.Context(), s, "after", idempotency.Fingerprint{}, fn("c"))
	require.NoError(t, err)
	assert.Equal(t, "b", string(res.Value))
	assert.True(t, res.Replay)
}

func TestAStaleExecutorCannotOverwriteANewerResult(t *testing.T) {
	c, _ := newClient(t)
	s := newStore(t, c, redis.Config{})
	ctx := t.Context()
	claim := func(token string, lease time.Duration) {
		_, ok, err := s.Claim(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.InProgress, Token: token}, lease)
		require.NoError(t, err)
		require.True(t, ok)
	}
	claim("slow", 50*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // the slow executor's lease runs out
	claim("fast", time.Minute)
	require.NoError(t, s.Complete(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.Succeeded, Token: "fast", Value: []byte("new")}, time.Minute))
	err := s.Complete(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.Succeeded, Token: "slow", Value: []byte("old")}, time.Minute)
	require.ErrorIs(t, err, idempotency.ErrClaimLost)
	got, _, err := s.Claim(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.InProgress, Token: "probe"}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got.Value))
}

func TestAnUnreachableRedisIsAStoreFailure(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	s := newStore(t, c, redis.Config{})
	_, err := idempotency.Do(t.Context(), s, "k", idempotency.Fingerprint{}, func(context.Context) ([]byte, error) { return nil, nil })
	require.ErrorIs(t, err, idempotency.ErrStore)
}

func TestTheConfigNamesTheKeys(t *testing.T) {
	c, _ := newClient(t)
	tests := []struct {
		name string
		cfg  redis.Config
		want string
	}{
		{"the zero Config prefixes them with idempotency:", redis.Config{}, "idempotency:order-1"},
		{"a Prefix replaces it", redis.Config{Prefix: "orders:"}, "orders:order-1"},
		{"Unprefixed writes the key as it is", redis.Config{Unprefixed: true}, "order-1"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, c, tt.cfg)
			token := fmt.Sprint("exec-", i)
			_, ok, err := s.Claim(t.Context(), idempotency.StoreKey{Key: "order-1"}, idempotency.Record{Status: idempotency.InProgress, Token: token}, time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			var got idempotency.Record
			raw, err := c.Get(t.Context(), tt.want).Bytes()
			require.NoError(t, err)
			require.NoError(t, got.UnmarshalBinary(raw))
			assert.Equal(t, token, got.Token)
			require.NoError(t, s.Release(t.Context(), idempotency.StoreKey{Key: "order-1"}, token))
		})
	}
}
