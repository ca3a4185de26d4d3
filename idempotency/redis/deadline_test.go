package redis_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/internal/faultproxy"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryMethodEndsByItsDeadlineWhateverTheClientsTimeouts(t *testing.T) {
	srv := redistest.Start(t)
	proxy := faultproxy.Start(t, srv.Addr, faultproxy.Config{})
	// A client made as most are, without ContextTimeoutEnabled: go-redis
	// alone would wait for its ReadTimeout, 3s, whatever the deadline.
	c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	s := newStore(t, c, redis.Config{})
	key := idempotency.StoreKey{Key: "k"}
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "t"}
	_, claimed, err := s.Claim(t.Context(), key, claim, time.Minute)
	require.NoError(t, err)
	require.True(t, claimed)

	proxy.Set(faultproxy.Faults{BlackHole: true}) // Redis hangs
	defer proxy.Set(faultproxy.Faults{})
	methods := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Claim", func(ctx context.Context) error {
			_, _, err := s.Claim(ctx, idempotency.StoreKey{Key: "other"}, claim, time.Minute)
			return err
		}},
		{"Extend", func(ctx context.Context) error { return s.Extend(ctx, key, "t", time.Minute) }},
		{"Complete", func(ctx context.Context) error {
			return s.Complete(ctx, key, idempotency.Record{Status: idempotency.Succeeded, Token: "t"}, time.Minute)
		}},
		{"Release", func(ctx context.Context) error { return s.Release(ctx, key, "t") }},
	}
	var log faultproxy.Log
	for _, m := range methods {
		call := log.Do(t.Context(), redisOutageDeadline, m.call)
		require.ErrorIs(t, call.Err, context.DeadlineExceeded, m.name)
		assert.ErrorContains(t, call.Err, "no answer from Redis", m.name)
		assert.LessOrEqual(t, call.Overshoot(), redisOutageMargin, "%s returned %v past its deadline", m.name, call.Overshoot())
		t.Logf("%s returned %v past a %v deadline (noticed up to %v late)", m.name, call.Overshoot(), redisOutageDeadline, log.Lateness())
	}
}
