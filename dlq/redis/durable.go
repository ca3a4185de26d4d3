package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/rediswait"
)

// run runs one of the queue's scripts; with Config.Replicas, the change is
// acknowledged only once that many replicas have it.
func (q *Queue) run(ctx context.Context, script *goredis.Script, keys []string, args ...any) *goredis.Cmd {
	return rediswait.Run(ctx, q.c, q.replicas, script, keys, args...)
}

// checkReplicas refuses a negative Config.Replicas, and replicas to wait for
// on a client that cannot send a change and its WAIT on one connection.
func checkReplicas(client goredis.UniversalClient, n int) error {
	switch {
	case n < 0:
		return invalid("redis.Config.Replicas", n, "must not be negative")
	case n > 0 && !rediswait.Supported(client):
		return invalid("redis.Config.Replicas", n, fmt.Sprintf("waiting for replicas needs a *goredis.Client or a *goredis.ClusterClient, not a %T", client))
	}
	return nil
}
