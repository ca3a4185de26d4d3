package main

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// redisQueue is an empty queue of a redis-server of its own.
func redisQueue(t *testing.T) (*goredis.Client, *dlqredis.Queue) {
	t.Helper()
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	q, err := dlqredis.New(c, dlqredis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c, q
}

// The Redis queue keeps an index for dlq.Summarize beside its letters; the
// dashboard and stats read it.
func TestTheRedisSummaryIndexFollowsEveryChange(t *testing.T) {
	ctx := context.Background()
	c, q := redisQueue(t)
	var ls []dlq.Letter
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		l, _ := dlq.NewLetter(dlq.Job{ID: id, Source: "llm", Payload: []byte(id)}, errors.New("timeout after 5ms"), time.Now())
		if _, err := q.Put(ctx, l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	if err := q.Discard(ctx, ls[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := q.Replay(ctx, ls[1].ID, q.ToSource()); err != nil {
		t.Fatal(err)
	}
	if err := q.Replay(ctx, ls[2].ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Purge(ctx, dlq.Filter{IDs: []string{ls[3].ID}}); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	s, err := dlq.Summarize(ctx, q, dlq.Filter{})
	if err != nil || s.Count != 1 || len(s.Groups) != 1 || s.Groups[0].Example.ID != ls[4].ID {
		t.Fatalf("Summarize after a discard, two replays and a purge = %+v, %v; want e alone", s, err)
	}
	keys, _ := c.Keys(ctx, "*index").Result()
	if len(keys) != 1 {
		t.Fatalf("index keys: %v", keys)
	}
	if n, _ := c.HLen(ctx, keys[0]).Result(); n != 1 {
		t.Fatalf("the index holds %d entries; want 1", n)
	}
}

func TestRedisLettersStoredWithoutTheIndexAreSummarizedAndIndexed(t *testing.T) {
	ctx := context.Background()
	c, q := redisQueue(t)
	for _, id := range []string{"a", "b", "c"} {
		l, _ := dlq.NewLetter(dlq.Job{ID: id, Source: "llm", Payload: []byte(id)}, errors.New("timeout after 5ms"), time.Now())
		if _, err := q.Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	keys, _ := c.Keys(ctx, "*index").Result()
	c.Del(ctx, keys...) // as a version without the index left them
	s, err := dlq.Summarize(ctx, q, dlq.Filter{Source: "llm"})
	if err != nil || s.Count != 3 || len(s.Groups) != 1 || s.Groups[0].Count != 3 {
		t.Fatalf("Summarize of unindexed letters = %+v, %v; want all 3", s, err)
	}
	if n, _ := c.HLen(ctx, keys[0]).Result(); n != 3 {
		t.Fatalf("the index holds %d entries after the summary; want 3", n)
	}
}
