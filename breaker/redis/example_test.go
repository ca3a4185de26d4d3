package redis_test

import (
	"context"
	"errors"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	brredis "github.com/retrykit/retry/breaker/redis"
)

// Every instance of a service builds the same breaker on the same Redis: when
// one opens it, all of them reject calls until the timeout passes.
func ExampleCircuit() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	store, err := brredis.NewStore(client, brredis.Options{Prefix: "prod:"})
	if err != nil {
		panic(err)
	}
	r, _ := retry.New(retry.WithLogger(slog.Default()))
	b, err := breaker.New(breaker.Settings{Name: "llm-gateway", Timeout: 30 * time.Second}, r,
		breaker.WithCircuit(brredis.Circuit(store)))
	if err != nil {
		panic(err) // Redis unreachable at start-up, or a bad setting
	}
	err = b.Do(context.Background(), func(ctx context.Context) error {
		return nil // call the gateway
	})
	if errors.Is(err, breaker.ErrOpen) {
		slog.Warn("the fleet's breaker is open: serving a degraded answer")
	}
}
