package dlqdashboard

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// redisLetters is the size of the Redis queue measured: each letter is
// stored by Put, one script call each.
const redisLetters = 20_000

// BenchmarkRedisSummarize20k adds up 20,000 letters in Redis from the
// queue's index, beside the baseline of reading and decoding every letter.
func BenchmarkRedisSummarize20k(b *testing.B) {
	s := redistest.Start(b)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	q, err := dlqredis.New(c, dlqredis.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now().Add(-7 * 24 * time.Hour)
	for i := range redisLetters {
		if _, err := q.Put(ctx, letter(i*(letters/redisLetters), start.Add(time.Duration(i)*7*24*time.Hour/redisLetters))); err != nil {
			b.Fatal(err)
		}
	}
	for _, bb := range []struct {
		name string
		q    dlq.Queue
	}{{"index", q}, {"every-letter", listOnly{q}}} {
		b.Run(bb.name, func(b *testing.B) {
			loop(b, func() {
				if s, err := dlq.Summarize(ctx, bb.q, dlq.Filter{}); err != nil || s.Count != redisLetters {
					b.Fatalf("Summarize = %d letters, %v", s.Count, err)
				}
			})
		})
	}
}
