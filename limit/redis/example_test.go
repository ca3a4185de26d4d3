package redis_test

import (
	"context"
	"errors"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	lredis "github.com/retrykit/retry/limit/redis"
)

// Every worker of every instance paces its calls to the LLM API through the
// one limit of its API key.
func ExampleNew() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	l, err := lredis.New(client, "llm-api-key-7", lredis.Config{Prefix: "prod:"})
	if err != nil {
		panic(err) // a bad option
	}
	r, _ := retry.New(retry.WithLimiter(l))
	err = r.Do(context.Background(), func(ctx context.Context) error {
		return nil // call the API
	})
	if errors.Is(err, retry.ErrLimited) {
		// Refused locally: nothing was sent. Put the job back in the queue.
	}
}
