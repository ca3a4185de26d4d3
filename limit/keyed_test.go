package limit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostModel is a key as an application has it: a model on a host.
type hostModel struct{ host, model string }

type keyCtx struct{}

func withKey(ctx context.Context, k hostModel) context.Context {
	return context.WithValue(ctx, keyCtx{}, k)
}

func keyOf(ctx context.Context) (hostModel, bool) {
	k, ok := ctx.Value(keyCtx{}).(hostModel)
	return k, ok
}

// refusing is a limiter that refuses everything once told of a throttle.
type refusing struct{ throttled bool }

func (r *refusing) Acquire(context.Context, time.Duration) bool { return !r.throttled }
func (r *refusing) Record(_ context.Context, o limit.Outcome) {
	r.throttled = r.throttled || o.Result == limit.Throttled
}

func TestKeyedLimitsEachKeyOnItsOwn(t *testing.T) {
	made := map[hostModel]*refusing{}
	k, err := limit.NewKeyed(keyOf, func(key hostModel) (limit.Limiter, error) {
		made[key] = &refusing{}
		return made[key], nil
	}, 0)
	require.NoError(t, err)
	a := withKey(context.Background(), hostModel{"api.example", "qwen3"})
	b := withKey(context.Background(), hostModel{"api.example", "llama4"})
	require.True(t, k.Acquire(a, time.Second))
	k.Record(a, limit.Outcome{Result: limit.Throttled})
	assert.False(t, k.Acquire(a, time.Second), "a's key was throttled")
	assert.True(t, k.Acquire(b, time.Second), "b's key was not")
	assert.True(t, k.Acquire(context.Background(), time.Second), "a call without a key is not limited")
	assert.Len(t, made, 2, "one limiter per key, made once")
	l, err := k.Get(hostModel{"api.example", "qwen3"})
	require.NoError(t, err)
	assert.Same(t, made[hostModel{"api.example", "qwen3"}], l)
}

func TestKeyedThroughTheRetryLoop(t *testing.T) {
	k, err := limit.NewKeyed(keyOf, func(hostModel) (limit.Limiter, error) { return &refusing{}, nil }, 0)
	require.NoError(t, err)
	r, err := retry.New(retry.WithLimiter(k), retry.WithMaxAttempts(1))
	require.NoError(t, err)
	a := withKey(context.Background(), hostModel{"h", "m"})
	err = r.Do(a, func(context.Context) error { return status(429, "1") })
	require.Error(t, err)
	calls := 0
	err = r.Do(a, func(context.Context) error { calls++; return nil })
	assert.ErrorIs(t, err, retry.ErrLimited)
	assert.Zero(t, calls)
}

func TestKeyedSaysWhetherItReadsTheCallKey(t *testing.T) {
	newLimiter := func(breaker.Key) (limit.Limiter, error) { return &refusing{}, nil }
	byCallKey, err := limit.NewKeyed(breaker.KeyOf, newLimiter, 0)
	require.NoError(t, err)
	byOwnKey, err := limit.NewKeyed(keyOf, func(hostModel) (limit.Limiter, error) { return &refusing{}, nil }, 0)
	require.NoError(t, err)
	byString, err := limit.NewKeyed(func(context.Context) (string, bool) { return "", false },
		func(string) (limit.Limiter, error) { return &refusing{}, nil }, 0)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		l    limit.Limiter
		want bool
	}{
		{"a Keyed by breaker.Key reads the call key", byCallKey, true},
		{"a Keyed by an application's own key type does not", byOwnKey, false},
		{"nor does a Keyed by a string", byString, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.l.(interface{ CallKeyed() bool }).CallKeyed())
			r, err := retry.New(retry.WithLimiter(tt.l))
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Keyed(), "a Retrier with it says whether to set the call key")
		})
	}
	assert.True(t, (*limit.Keyed[breaker.Key])(nil).CallKeyed(), "a nil registry answers by its type")
}

func TestKeyedByTheCallKeyLimitsEachKeyOnItsOwn(t *testing.T) {
	k, err := limit.NewKeyed(breaker.KeyOf, func(breaker.Key) (limit.Limiter, error) { return &refusing{}, nil }, 0)
	require.NoError(t, err)
	r, err := retry.New(retry.WithLimiter(k), retry.WithMaxAttempts(1))
	require.NoError(t, err)
	busy := breaker.WithKey(context.Background(), breaker.Key{Target: "api.example", Operation: "busy"})
	idle := breaker.WithKey(context.Background(), breaker.Key{Target: "api.example", Operation: "idle"})
	require.Error(t, r.Do(busy, func(context.Context) error { return status(429, "1") }))
	calls := 0
	assert.ErrorIs(t, r.Do(busy, func(context.Context) error { calls++; return nil }), retry.ErrLimited)
	assert.NoError(t, r.Do(idle, func(context.Context) error { calls++; return nil }), "another operation of the host has its own limiter")
	assert.Equal(t, 1, calls)
}

func TestKeyedKeepsAtMostMaxKeysAndSurvivesAFailedMake(t *testing.T) {
	k, err := limit.NewKeyed(keyOf, func(key hostModel) (limit.Limiter, error) {
		if key.model == "bad" {
			return nil, errors.New("no limit for it")
		}
		return &refusing{throttled: true}, nil
	}, 2)
	require.NoError(t, err)
	ctx := context.Background()
	assert.False(t, k.Acquire(withKey(ctx, hostModel{"h", "m1"}), time.Second), "the first key's limiter refuses")
	assert.True(t, k.Acquire(withKey(ctx, hostModel{"h", "bad"}), time.Second), "a key whose limiter failed is not limited")
	_, err = k.Get(hostModel{"h", "bad"})
	assert.EqualError(t, err, "no limit for it")
	assert.False(t, k.Acquire(withKey(ctx, hostModel{"h", "m2"}), time.Second), "the failed key took no place")
	assert.True(t, k.Acquire(withKey(ctx, hostModel{"h", "m3"}), time.Second), "past maxKeys, not limited")
}

func TestNewKeyedRefusesNilFunctions(t *testing.T) {
	mk := func(hostModel) (limit.Limiter, error) { return nil, nil }
	for _, err := range []error{
		second(limit.NewKeyed[hostModel](nil, mk, 0)),
		second(limit.NewKeyed(keyOf, nil, 0)),
		second(limit.NewKeyed(keyOf, mk, -1)),
		(*limit.Keyed[hostModel])(nil).Validate(),
		new(limit.Keyed[hostModel]).Validate(),
		second(new(limit.Keyed[hostModel]).Get(hostModel{})),
	} {
		assert.ErrorIs(t, err, argerr.ErrInvalid)
	}
	var nilK *limit.Keyed[hostModel]
	assert.False(t, nilK.Acquire(context.Background(), time.Second))
	nilK.Record(context.Background(), limit.Outcome{})
	assert.False(t, new(limit.Keyed[hostModel]).Acquire(nil, time.Second)) //nolint:staticcheck
}
