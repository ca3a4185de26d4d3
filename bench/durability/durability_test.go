// Package durability measures what Config.Replicas costs per call in
// idempotency/redis and dlq/redis: each write followed, on the same
// connection, by WAIT for one replica, against a real redis-server primary
// and its replica on loopback, beside the same calls without it.
//
//	go test -run '^$' -bench . -benchmem ./durability
//
// On a loaded two-core machine the noise is larger than the effect in a
// single run: results.txt pairs the two settings run after run (each on
// fresh servers) and takes the median of the ratios.
package durability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/dlq"
	dlqredis "github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/idempotency"
	idemredis "github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// pair starts a primary and its replica, waits for the replica to sync,
// and returns a client of the primary.
func pair(b *testing.B) *goredis.Client {
	b.Helper()
	primary := redistest.Start(b, "--repl-diskless-sync-delay", "0")
	replica := redistest.Start(b, "--replicaof", "127.0.0.1", strings.Split(primary.Addr, ":")[1])
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := redistest.Do(replica.Addr, "INFO", "replication")
		if s, _ := info.(string); err == nil && strings.Contains(s, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the replica did not sync")
		}
	}
	c := goredis.NewClient(&goredis.Options{Addr: primary.Addr})
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkIdempotencyDo runs idempotency.Do on a new key each time: a
// claim and a result, two writes.
func BenchmarkIdempotencyDo(b *testing.B) {
	c := pair(b)
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			s, err := idemredis.New(c, idemredis.Config{Prefix: fmt.Sprintf("bench-%d:", replicas), Replicas: replicas})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			fn := func(context.Context) ([]byte, error) { return []byte("ok"), nil }
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := idempotency.Do(ctx, s, fmt.Sprint("k", i), idempotency.Fingerprint{}, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDLQPut stores a new letter each time: one write.
func BenchmarkDLQPut(b *testing.B) {
	c := pair(b)
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			q, err := dlqredis.New(c, dlqredis.Config{Prefix: fmt.Sprintf("{bench-%d}:", replicas), Replicas: replicas})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			cause := errors.New("model overloaded")
			now := time.Now()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				l, _ := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs", Payload: []byte("{}")}, cause, now)
				if _, err := q.Put(ctx, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
