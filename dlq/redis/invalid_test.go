package redis_test

import (
	"context"
	"errors"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/redis"
)

// TestEveryCallRefusesNilAndZeroArguments walks what the conformance suite's
// "invalid arguments" test does not: New, From, ToSource, and the
// methods of a nil and of a zero Queue. The client points at a port nobody
// listens on, so a call that reached Redis would fail with a dial error:
// each must return a *retry.InvalidError instead, and enqueue nothing.
func TestEveryCallRefusesNilAndZeroArguments(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	q, err := redis.New(c, redis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var nilCtx context.Context
	l := letter(t, "1")
	enqueued := 0
	to := dlq.EnqueueFunc(func(context.Context, dlq.Job) error { enqueued++; return nil })
	type row struct {
		name string
		call func() error
	}
	tests := []row{
		{"New of a nil client", func() error { _, err := redis.New(nil, redis.Config{}); return err }},
		{"From, Put with a nil context", func() error { _, err := q.From("processing").Put(nilCtx, l); return err }},
		{"From an empty list, Put", func() error { _, err := q.From("").Put(ctx, l); return err }},
		{"Record through From an empty list", func() error { return dlq.Record(ctx, q.From(""), l.Job, errors.New("boom")) }},
		{"ToSource's Enqueue with a nil context", func() error { return q.ToSource().Enqueue(nilCtx, l.Job) }},
		{"Replay to ToSource of an empty id", func() error { return q.Replay(ctx, "", q.ToSource()) }},
		{"Replay to ToSource with a nil context", func() error { return q.Replay(nilCtx, l.ID, q.ToSource()) }},
	}
	for name, q := range map[string]*redis.Queue{"a nil Queue": nil, "a zero Queue": new(redis.Queue)} {
		tests = append(tests, []row{
			{name + "'s Put", func() error { _, err := q.Put(ctx, l); return err }},
			{name + "'s From, Put", func() error { _, err := q.From("processing").Put(ctx, l); return err }},
			{name + "'s From, Get", func() error { _, err := q.From("processing").Get(ctx, l.ID); return err }},
			{name + "'s Get", func() error { _, err := q.Get(ctx, l.ID); return err }},
			{name + "'s List", func() error { _, err := q.List(ctx, dlq.Filter{}); return err }},
			{name + "'s Count", func() error { _, err := q.Count(ctx, dlq.Filter{}); return err }},
			{name + "'s Replay", func() error { return q.Replay(ctx, l.ID, to) }},
			{name + "'s Replay to its ToSource", func() error { return q.Replay(ctx, l.ID, q.ToSource()) }},
			{name + "'s ToSource, Enqueue", func() error { return q.ToSource().Enqueue(ctx, l.Job) }},
			{name + "'s Discard", func() error { return q.Discard(ctx, l.ID) }},
			{name + "'s Purge", func() error { _, err := q.Purge(ctx, dlq.Filter{}); return err }},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused before any work", func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, retry.ErrInvalid) {
				t.Fatalf("%s = %v; want retry.ErrInvalid (and no call to Redis)", tt.name, err)
			}
			if enqueued != 0 {
				t.Fatalf("%s enqueued %d jobs", tt.name, enqueued)
			}
		})
	}
}
