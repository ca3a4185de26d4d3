package redis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/redis"
)

// On Redis Cluster: the queue's keys and its jobs' source lists share one
// hash tag, as its scripts need, and each change is acknowledged only once a
// replica has it, so that a failover cannot lose a letter. This example
// needs a Redis Cluster; it is compiled, not run.
func ExampleNew_cluster() {
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"redis-0:6379", "redis-1:6379", "redis-2:6379"}})
	defer client.Close()
	q, err := redis.New(client, redis.Config{
		Prefix:    "{dlq}:",
		SourceKey: func(source string) string { return "{dlq}:queue:" + source },
		Replicas:  1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	l, _ := dlq.NewLetter(dlq.Job{ID: "msg-1", Source: "llm-jobs", Payload: []byte(`{"prompt":"hi"}`)},
		errors.New("model overloaded"), time.Now())
	stored, err := q.Put(context.Background(), l)
	fmt.Println(stored, err)
}
