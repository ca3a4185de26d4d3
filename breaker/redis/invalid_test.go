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
	"github.com/retrykit/retry/breaker"
	brredis "github.com/retrykit/retry/breaker/redis"
	"github.com/sony/gobreaker/v2"
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
	store, err := brredis.NewStore(client, brredis.Config{})
	require.NoError(t, err)
	var nilStore *brredis.Store
	zero := new(brredis.Store)
	named := gobreaker.Settings{Name: "b"}
	ran := false
	callThrough := func(s *brredis.Store) error {
		b, err := breaker.New(breaker.Config{NewCircuit: brredis.Circuit(s)})
		require.NoError(t, err)
		r, err := retry.New(retry.WithBreakers(b))
		require.NoError(t, err)
		return r.Do(t.Context(), func(context.Context) error { ran = true; return nil })
	}
	circuit := func(s *brredis.Store, settings gobreaker.Settings) error {
		_, err := brredis.Circuit(s)(settings)
		return err
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"NewStore with a nil client", func() error { _, err := brredis.NewStore(nil, brredis.Config{}); return err }},
		{"NewStore with a nil *Client", func() error { _, err := brredis.NewStore((*goredis.Client)(nil), brredis.Config{}); return err }},
		{"Circuit with a nil Store", func() error { return circuit(nil, named) }},
		{"Circuit with a zero Store", func() error { return circuit(zero, named) }},
		{"a call through the Circuit of a nil Store", func() error { return callThrough(nil) }},
		{"a call through the Circuit of a zero Store", func() error { return callThrough(zero) }},
		{"Lock on a nil Store", func() error { return nilStore.Lock("m") }},
		{"Lock on a zero Store", func() error { return zero.Lock("m") }},
		{"Lock of an empty name", func() error { return store.Lock("") }},
		{"Unlock on a nil Store", func() error { return nilStore.Unlock("m") }},
		{"Unlock on a zero Store", func() error { return zero.Unlock("m") }},
		{"Unlock of an empty name", func() error { return store.Unlock("") }},
		{"GetData on a nil Store", func() error { _, err := nilStore.GetData("k"); return err }},
		{"GetData on a zero Store", func() error { _, err := zero.GetData("k"); return err }},
		{"GetData of an empty name", func() error { _, err := store.GetData(""); return err }},
		{"SetData on a nil Store", func() error { return nilStore.SetData("k", []byte("{}")) }},
		{"SetData on a zero Store", func() error { return zero.SetData("k", []byte("{}")) }},
		{"SetData of an empty name", func() error { return store.SetData("", []byte("{}")) }},
		{"SetData of nil data", func() error { return store.SetData("k", nil) }},
	}
	for _, c := range calls {
		t.Run(c.name+" is ErrInvalid and sends nothing", func(t *testing.T) {
			sent.Store(0)
			var err error
			require.NotPanics(t, func() { err = c.call() })
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.Zero(t, sent.Load(), "nothing was sent to Redis")
			assert.False(t, ran, "nor to the dependency")
		})
	}
}

func TestMakingACircuitAsksRedisNothing(t *testing.T) {
	client, sent := counted(t)
	store, err := brredis.NewStore(client, brredis.Config{})
	require.NoError(t, err)
	for _, name := range []string{"gateway.example/qwen3", ""} {
		c, err := brredis.Circuit(store)(gobreaker.Settings{Name: name})
		require.NoError(t, err, "%q", name)
		assert.Equal(t, breaker.StateClosed, c.State())
		assert.Zero(t, c.Counts())
	}
	assert.Zero(t, sent.Load())
}

func TestNewStoreNamesABadOption(t *testing.T) {
	client, _ := counted(t)
	tests := []struct {
		o     brredis.Config
		name  string
		value any
	}{
		{brredis.Config{LockTTL: -1}, "redis.Config.LockTTL", time.Duration(-1)},
		{brredis.Config{LockTTL: time.Microsecond}, "redis.Config.LockTTL", time.Microsecond},
		{brredis.Config{LockWait: -time.Second}, "redis.Config.LockWait", -time.Second},
		{brredis.Config{OpTimeout: -time.Second}, "redis.Config.OpTimeout", -time.Second},
		{brredis.Config{Recheck: -time.Second}, "redis.Config.Recheck", -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := brredis.NewStore(client, tt.o)
			var inv *retry.InvalidError
			require.True(t, errors.As(err, &inv), "%v", err)
			assert.Equal(t, tt.name, inv.Name)
			assert.Equal(t, tt.value, inv.Value)
		})
	}
	_, err := brredis.NewStore(client, brredis.Config{LockTTL: -1})
	assert.EqualError(t, err, "redis.Config.LockTTL(-1ns): must not be negative")
}
