// Package redisbound bounds one Redis call by its context, whatever the
// client's settings: the Redis-backed modules (breaker/redis, limit/redis)
// must not hang on a dead or paused server.
package redisbound

import (
	"context"
	"fmt"
)

// Call returns what f, one Redis call, returns, or ctx's error as soon as ctx
// ends, its text prefixed with prefix ("limit/redis: ", or ""). A go-redis client bounds a command by its context only with
// ContextTimeoutEnabled; otherwise a command to a hung server waits for the
// client's ReadTimeout (3s by default), whatever the context says. So f runs
// in a goroutine of its own, with ctx, and Call returns at ctx's end; f ends
// when the client's own timeouts (or its Close) end it, and its late result
// is dropped. A goroutine costs a microsecond against a round trip's tens;
// wrapping the client in a hook instead would change it for every other user
// of the client.
func Call[T any](ctx context.Context, prefix string, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%sno answer from Redis: %w", prefix, context.Cause(ctx))
	}
}
