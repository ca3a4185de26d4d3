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

// Every instance of a service builds its breakers on the same Redis: when
// one opens a key's breaker, all of them refuse calls to that key until the
// timeout passes.
func ExampleCircuit() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	store, err := brredis.NewStore(client, brredis.Config{Prefix: "prod:"})
	if err != nil {
		panic(err) // a bad option
	}
	breakers, err := breaker.New(breaker.Config{Timeout: 30 * time.Second, NewCircuit: brredis.Circuit(store)})
	if err != nil {
		panic(err) // a bad setting
	}
	r, _ := retry.New(retry.WithBreakers(breakers), retry.WithLogger(slog.Default()))
	ctx := breaker.WithKey(context.Background(), breaker.Key{Target: "llm-gateway.internal", Operation: "qwen3"})
	err = r.Do(ctx, func(ctx context.Context) error {
		return nil // call the gateway
	})
	if errors.Is(err, retry.ErrBreakerOpen) {
		slog.Warn("the fleet's breaker is open: serving a degraded answer")
	}
}
