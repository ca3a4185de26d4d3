package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/rediswait"
)

// With Config.Replicas, the Store's two plain writes are scripts, so that
// rediswait sends each with its WAIT on one connection to the key's
// primary. Without, they stay the plain commands.
var (
	// KEYS[1] the lock; ARGV[1] the token; ARGV[2] the TTL in ms.
	setNXScript = goredis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`)
	// KEYS[1] the key; ARGV[1] the data.
	setScript = goredis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1])`)
)

// setNX takes the lock key for token, reporting whether it was free.
func (s *Store) setNX(ctx context.Context, key, token string) (bool, error) {
	if s.o.Replicas == 0 {
		return s.client.SetNX(ctx, key, token, s.o.LockTTL).Result()
	}
	err := rediswait.Run(ctx, s.client, s.o.Replicas, setNXScript, []string{key}, token, strconv.FormatInt(s.o.LockTTL.Milliseconds(), 10)).Err()
	if errors.Is(err, goredis.Nil) { // NX: another holder has it
		return false, nil
	}
	return err == nil, err
}

// set stores data under key.
func (s *Store) set(ctx context.Context, key string, data []byte) error {
	if s.o.Replicas == 0 {
		return s.client.Set(ctx, key, data, 0).Err()
	}
	return rediswait.Run(ctx, s.client, s.o.Replicas, setScript, []string{key}, data).Err()
}

// checkReplicas refuses a negative Config.Replicas, and replicas to wait for
// on a client that cannot send a write and its WAIT on one connection.
func checkReplicas(client goredis.UniversalClient, n int) error {
	switch {
	case n < 0:
		return invalid("redis.Config.Replicas", n, "must not be negative")
	case n > 0 && !rediswait.Supported(client):
		return invalid("redis.Config.Replicas", n, fmt.Sprintf("waiting for replicas needs a *goredis.Client or a *goredis.ClusterClient, not a %T", client))
	}
	return nil
}
