package redis_test

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/redis"
)

// This example needs a Redis server; it is compiled, not run.
func ExampleNew() {
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
	q, err := redis.New(client, redis.Config{
		SourceKey: func(source string) string { return "queue:" + source },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A worker dead-letters a job whose retries are exhausted…
	r, _ := retry.New()
	job := dlq.Job{ID: "msg-1", Source: "llm-jobs", Payload: []byte(`{"prompt":"hi"}`)}
	err = dlq.Do(ctx, r, q, job, func(ctx context.Context) error { return process(ctx, job) })
	fmt.Println(err)

	// …and after the fix an operator moves every letter of one root cause
	// back to its list ("queue:llm-jobs"), atomically.
	letters, _ := q.List(ctx, dlq.Filter{})
	groups := dlq.GroupLetters(letters)
	rep, err := dlq.Replay(ctx, q, dlq.Filter{Group: groups[0].ID}, q.ToSource())
	fmt.Println(len(rep.Replayed), err)
}

func process(context.Context, dlq.Job) error { return nil }
