package redis_test

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
)

// On Redis Cluster, with each claim and result acknowledged only once a
// replica has it, so that a failover cannot lose it and run a key twice.
// (No output: the example needs a Redis Cluster; the tests start one.)
func ExampleNew_cluster() {
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"redis-0:6379", "redis-1:6379", "redis-2:6379"}})
	defer client.Close()
	store, err := redis.New(client, redis.Config{Replicas: 1})
	if err != nil {
		panic(err)
	}
	res, err := idempotency.Do(context.Background(), store, "order-4417-charge", idempotency.Fingerprint{},
		func(context.Context) ([]byte, error) { return []byte("receipt-17"), nil })
	fmt.Println(string(res.Value), res.Replay, err)
}
