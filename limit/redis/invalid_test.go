package redis_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryExportedCallRefusesNilAndZeroArguments(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	var nilClient *goredis.Client
	var nilL *lredis.Limiter
	zero := new(lredis.Limiter)
	invalid := []struct {
		name string
		err  error
	}{
		{"New(nil, …)", second(lredis.New(nil, "k", lredis.Config{}))},
		{"New((*Client)(nil), …)", second(lredis.New(nilClient, "k", lredis.Config{}))},
		{"New(…, \"\", …)", second(lredis.New(client, "", lredis.Config{}))},
		{"New with a negative OpTimeout", second(lredis.New(client, "k", lredis.Config{OpTimeout: -1}))},
		{"New with a TTL under 1ms", second(lredis.New(client, "k", lredis.Config{TTL: time.Microsecond}))},
		{"New with a bad Beta", second(lredis.New(client, "k", lredis.Config{Adaptive: limit.AdaptiveConfig{Beta: 2}}))},
		{"(*Limiter)(nil).Validate", nilL.Validate()},
		{"Limiter{}.Validate", zero.Validate()},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) { assert.ErrorIs(t, tt.err, retry.ErrInvalid) })
	}
	for _, l := range []*lredis.Limiter{nilL, zero} {
		assert.False(t, l.Acquire(context.Background(), time.Second))
		l.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
		assert.Zero(t, l.Rate())
	}
	assert.Nil(t, nilL.Local())
	l, err := lredis.New(client, "k", lredis.Config{})
	require.NoError(t, err)
	assert.False(t, l.Acquire(nil, time.Second), "a nil context") //nolint:staticcheck
}

func second[T any](_ T, err error) error { return err }
