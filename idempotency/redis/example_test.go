package redis_test

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
)

// Every replica of a service shares the keys through one Redis. (No output:
// the example needs a Redis server; the tests start one.)
func ExampleNew() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
	defer client.Close()
	store, err := redis.New(client, redis.Config{Prefix: "orders:idempotency:"})
	if err != nil {
		panic(err)
	}
	res, err := idempotency.Do(context.Background(), store, "order-4417-charge", idempotency.Fingerprint{},
		func(context.Context) ([]byte, error) { return []byte("receipt-17"), nil })
	fmt.Println(string(res.Value), res.Replay, err)
}
