package redis_test

import (
	"errors"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	brredis "github.com/retrykit/retry/breaker/redis"
	"github.com/retrykit/retry/internal/redistest"
)

func TestReplicasIsCheckedWhenTheStoreIsMade(t *testing.T) {
	redistest.CheckReplicas(t, func(c goredis.UniversalClient, n int) error {
		_, err := brredis.NewStore(c, brredis.Config{Replicas: n})
		return err
	}, func(err error) bool {
		var inv *retry.InvalidError
		return errors.As(err, &inv) && inv.Name == "redis.Config.Replicas"
	})
}
