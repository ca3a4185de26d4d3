package redis_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counted is a go-redis client, with no server behind it, that counts what
// it was asked to do: a call refused as invalid must not have dialled or
// sent anything.
func counted(t *testing.T) (*goredis.Client, *atomic.Int32) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	var n atomic.Int32
	c.AddHook(countingHook{&n})
	return c, &n
}

type countingHook struct{ n *atomic.Int32 }

func (h countingHook) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.n.Add(1)
		return next(ctx, network, addr)
	}
}

func (h countingHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}

func (h countingHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

func TestEveryExportedCallRefusesNilAndZeroArguments(t *testing.T) {
	client, sent := counted(t)
	s, err := redis.New(client, redis.Config{})
	require.NoError(t, err)
	var nilStore *redis.Store
	zero := new(redis.Store)
	ctx := context.Background()
	var nilCtx context.Context
	claim := idempotency.Record{Status: idempotency.InProgress, Token: "t"}
	done := idempotency.Record{Status: idempotency.Succeeded, Token: "t"}
	calls := []struct {
		name string
		call func() error
	}{
		{"New with a nil client", func() error { _, err := redis.New(nil, redis.Config{}); return err }},
		{"New with a nil *Client", func() error { _, err := redis.New((*goredis.Client)(nil), redis.Config{}); return err }},
		{"New with a Prefix and Unprefixed", func() error {
			_, err := redis.New(client, redis.Config{Prefix: "p:", Unprefixed: true})
			return err
		}},
		{"Claim on a nil Store", func() error {
			_, _, err := nilStore.Claim(ctx, idempotency.StoreKey{Key: "k"}, claim, time.Minute)
			return err
		}},
		{"Claim on a zero Store", func() error {
			_, _, err := zero.Claim(ctx, idempotency.StoreKey{Key: "k"}, claim, time.Minute)
			return err
		}},
		{"Claim with a nil context", func() error {
			_, _, err := s.Claim(nilCtx, idempotency.StoreKey{Key: "k"}, claim, time.Minute)
			return err
		}},
		{"Claim of an empty key", func() error { _, _, err := s.Claim(ctx, idempotency.StoreKey{Key: ""}, claim, time.Minute); return err }},
		{"Claim of a zero record", func() error {
			_, _, err := s.Claim(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{}, time.Minute)
			return err
		}},
		{"Claim with an empty token", func() error {
			_, _, err := s.Claim(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.InProgress}, time.Minute)
			return err
		}},
		{"Claim with a zero lease", func() error { _, _, err := s.Claim(ctx, idempotency.StoreKey{Key: "k"}, claim, 0); return err }},
		{"Extend on a nil Store", func() error { return nilStore.Extend(ctx, idempotency.StoreKey{Key: "k"}, "t", time.Minute) }},
		{"Extend on a zero Store", func() error { return zero.Extend(ctx, idempotency.StoreKey{Key: "k"}, "t", time.Minute) }},
		{"Extend with a nil context", func() error { return s.Extend(nilCtx, idempotency.StoreKey{Key: "k"}, "t", time.Minute) }},
		{"Extend of an empty key", func() error { return s.Extend(ctx, idempotency.StoreKey{Key: ""}, "t", time.Minute) }},
		{"Extend with an empty token", func() error { return s.Extend(ctx, idempotency.StoreKey{Key: "k"}, "", time.Minute) }},
		{"Extend with a zero lease", func() error { return s.Extend(ctx, idempotency.StoreKey{Key: "k"}, "t", 0) }},
		{"Complete on a nil Store", func() error { return nilStore.Complete(ctx, idempotency.StoreKey{Key: "k"}, done, time.Minute) }},
		{"Complete on a zero Store", func() error { return zero.Complete(ctx, idempotency.StoreKey{Key: "k"}, done, time.Minute) }},
		{"Complete with a nil context", func() error { return s.Complete(nilCtx, idempotency.StoreKey{Key: "k"}, done, time.Minute) }},
		{"Complete of an empty key", func() error { return s.Complete(ctx, idempotency.StoreKey{Key: ""}, done, time.Minute) }},
		{"Complete of a zero record", func() error {
			return s.Complete(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{}, time.Minute)
		}},
		{"Complete with an empty token", func() error {
			return s.Complete(ctx, idempotency.StoreKey{Key: "k"}, idempotency.Record{Status: idempotency.Succeeded}, time.Minute)
		}},
		{"Complete with a zero retention", func() error { return s.Complete(ctx, idempotency.StoreKey{Key: "k"}, done, 0) }},
		{"Release on a nil Store", func() error { return nilStore.Release(ctx, idempotency.StoreKey{Key: "k"}, "t") }},
		{"Release on a zero Store", func() error { return zero.Release(ctx, idempotency.StoreKey{Key: "k"}, "t") }},
		{"Release with a nil context", func() error { return s.Release(nilCtx, idempotency.StoreKey{Key: "k"}, "t") }},
		{"Release of an empty key", func() error { return s.Release(ctx, idempotency.StoreKey{Key: ""}, "t") }},
		{"Release with an empty token", func() error { return s.Release(ctx, idempotency.StoreKey{Key: "k"}, "") }},
	}
	for _, c := range calls {
		t.Run(c.name+" is ErrInvalid and sends nothing", func(t *testing.T) {
			sent.Store(0)
			var err error
			require.NotPanics(t, func() { err = c.call() })
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.Zero(t, sent.Load(), "nothing was sent to Redis")
		})
	}
}

func TestInvalidErrorsNameTheCallAndTheValue(t *testing.T) {
	client, _ := counted(t)
	_, err := redis.New(client, redis.Config{Prefix: "p:", Unprefixed: true})
	assert.EqualError(t, err, `redis.Config.Unprefixed(true): contradicts Config.Prefix "p:"`)
	s, err := redis.New(client, redis.Config{})
	require.NoError(t, err)
	err = s.Extend(context.Background(), idempotency.StoreKey{Key: "k"}, "t", time.Microsecond)
	var inv *retry.InvalidError
	require.True(t, errors.As(err, &inv))
	assert.Equal(t, "redis.Store.Extend", inv.Name)
	assert.Equal(t, time.Microsecond, inv.Value)
	assert.EqualError(t, err, "redis.Store.Extend(1µs): the lease or retention must be at least 1ms")
}
