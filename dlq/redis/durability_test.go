package redis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// What the package documentation says about persistence, measured: Redis
// crashes (SIGKILL) after letters were stored and some replayed, and comes
// back on the same data directory.

func TestAOFWithFsyncAlwaysKeepsAcknowledgedLettersAcrossACrash(t *testing.T) {
	got := crashAfterAcknowledgements(t, redistest.AOF("always")...)
	if got.letters != stored-replayed || got.replayedBack != 0 || got.jobs != replayed {
		t.Fatalf("after the crash: %+v; want the %d letters not replayed, none of the %d replayed, and their %d jobs on the source list",
			got, stored-replayed, replayed, replayed)
	}
}

func TestWithoutPersistenceACrashLosesEveryLetter(t *testing.T) {
	got := crashAfterAcknowledgements(t)
	if got.letters != 0 || got.jobs != 0 {
		t.Fatalf("after the crash: %+v; want nothing: every acknowledged letter and replayed job is lost", got)
	}
}

const stored, replayed = 20, 10

var errBroker = errors.New("broker unavailable")

type afterCrash struct{ letters, replayedBack, jobs int }

// crashAfterAcknowledgements stores letters, replays some of them to their
// source list (each acknowledged: the call returned nil), kills Redis and
// restarts it, and reports what it holds.
func crashAfterAcknowledgements(t *testing.T, args ...string) afterCrash {
	srv := redistest.Start(t, args...)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	q, err := redis.New(c, redis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for i := range stored {
		l, ok := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs", Payload: []byte(fmt.Sprint(i))}, errBroker, time.Now())
		if !ok {
			t.Fatal("no letter")
		}
		if ok, err := q.Put(ctx, l); !ok || err != nil {
			t.Fatalf("Put = %v, %v", ok, err)
		}
		ids = append(ids, l.ID)
	}
	for _, id := range ids[:replayed] {
		if err := q.Replay(ctx, id, q.ToSource()); err != nil {
			t.Fatal(err)
		}
	}

	srv.Stop()
	srv.Restart(t)

	var got afterCrash
	if got.letters, err = q.Count(ctx, dlq.Filter{}); err != nil {
		t.Fatal(err)
	}
	if got.replayedBack, err = q.Count(ctx, dlq.Filter{IDs: ids[:replayed]}); err != nil {
		t.Fatal(err)
	}
	n, err := c.LLen(ctx, "llm-jobs").Result()
	if err != nil {
		t.Fatal(err)
	}
	got.jobs = int(n)
	t.Logf("%+v", got)
	return got
}
