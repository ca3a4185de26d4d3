package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/queuetest"
	"github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// The queue on a real Redis Cluster: three primaries with a replica each,
// one cluster for all these subtests (each with a hash tag of its own).
func TestTheQueueOnARedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	onCluster := func(t *testing.T, c *goredis.ClusterClient, claim time.Duration, replicas int) func(prefix string) *redis.Queue {
		return func(prefix string) *redis.Queue {
			q, err := redis.New(c, redis.Config{Prefix: prefix, ClaimTimeout: claim, Replicas: replicas, SourceKey: sameSlot(prefix)})
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
	}
	tag := func() string { return fmt.Sprintf("{c%d}:", prefixes.Add(1)) }
	for _, replicas := range []int{0, 1} {
		t.Run(fmt.Sprintf("keeps the queue's contract, waiting for %d replicas", replicas), func(t *testing.T) {
			c, _ := cl.Client(t)
			queuetest.Run(t, func(t *testing.T) dlq.Queue { return onCluster(t, c, 0, replicas)(tag()) })
		})
	}
	t.Run("keeps the lapse suite's contract", func(t *testing.T) {
		c, _ := cl.Client(t)
		queuetest.RunLapses(t, func(t *testing.T) queuetest.Handles {
			prefix := tag()
			return func(claim time.Duration) dlq.Queue { return onCluster(t, c, claim, 0)(prefix) }
		})
	})
	t.Run("runs every script on keys of one slot", func(t *testing.T) {
		c, hook := cl.Client(t)
		for _, replicas := range []int{0, 1} {
			prefix := tag()
			exercise(t, c, onCluster(t, c, 0, replicas)(prefix), prefix)
		}
		hook.CheckOneSlot(t, redis.Scripts)
	})
	t.Run("loses no letter and replays none twice while a slot migrates", func(t *testing.T) {
		migrateWhileRunning(t, cl, 0)
	})
	t.Run("loses no letter and replays none twice while a slot migrates, waiting for a replica", func(t *testing.T) {
		migrateWhileRunning(t, cl, 1)
	})
}

// sameSlot names a job's source list after the queue's prefix, so that it
// shares the queue's hash tag, as moving a letter there in one script needs.
func sameSlot(prefix string) func(string) string {
	return func(source string) string { return prefix + "source:" + source }
}

// exercise runs every script of q, whose prefix is prefix, on c.
func exercise(t *testing.T, c *goredis.ClusterClient, q *redis.Queue, prefix string) {
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b, d, e := letter(t, "a"), letter(t, "b"), letter(t, "d"), letter(t, "e")
	for _, l := range []dlq.Letter{a, b, d} {
		_, err := q.Put(ctx, l) // put
		must(err)
	}
	_, err := q.From(sameSlot(prefix)("processing")).Put(ctx, e) // put from a list
	must(err)
	must(q.Replay(ctx, a.ID, q.ToSource()))                                                         // move
	must(q.Replay(ctx, b.ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil }))) // claim, acknowledge
	if err := q.Replay(ctx, d.ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return errors.New("down") })); err == nil {
		t.Fatal("a failed enqueue replayed the letter") // claim, release
	}
	must(q.Discard(ctx, d.ID)) // discard
	// A letter stored by a version without the summary index: Summarize
	// backfills its entry.
	must(c.HDel(ctx, prefix+"index", e.ID).Err())
	_, err = q.Summarize(ctx, dlq.Filter{}) // backfill
	must(err)
	_, err = q.Purge(ctx, dlq.Filter{}) // purge
	must(err)
}

// migrateWhileRunning moves the queue's slot, a key at a time, while
// workers put letters and replay every other one to its source list: no
// letter whose put was acknowledged is lost, none whose replay was comes
// back, and each replayed job is on the source list exactly once.
func migrateWhileRunning(t *testing.T, cl *redistest.Cluster, replicas int) {
	c, _ := cl.Client(t)
	prefix := fmt.Sprintf("{migrate-%d}:", replicas)
	q, err := redis.New(c, redis.Config{Prefix: prefix, Replicas: replicas, SourceKey: sameSlot(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var mu sync.Mutex
	put, replayed := map[string]bool{}, map[string]bool{}
	var next, failed atomic.Int32
	fail := func(op string, err error) {
		// A script whose keys a migration has split is refused (TRYAGAIN,
		// or a redirect once go-redis's MaxRedirects are spent): it did not
		// run, and the caller was told. Anything else is a failure.
		if !goredis.IsTryAgainError(err) && !strings.Contains(err.Error(), "ASK ") && !strings.Contains(err.Error(), "MOVED ") {
			t.Errorf("%s during the migration: %v", op, err)
		}
		failed.Add(1)
	}
	stopWorkers := redistest.Workers(t, 4, func() {
		l := letter(t, fmt.Sprint(next.Add(1)))
		if _, err := q.Put(ctx, l); err != nil {
			fail("put", err)
			return
		}
		mu.Lock()
		put[l.ID] = true
		mu.Unlock()
		if next.Load()%2 == 0 {
			return
		}
		if err := q.Replay(ctx, l.ID, q.ToSource()); err != nil {
			fail("replay", err)
			return
		}
		mu.Lock()
		replayed[l.ID] = true
		mu.Unlock()
	})
	for next.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	moved0, ask0 := cl.Redirects(t)
	m := cl.Migrate(t, redistest.Slot(prefix), cl.Other(t, redistest.Slot(prefix)))
	for m.Move(t, 1) > 0 { // the queue is a handful of keys: one at a time
		time.Sleep(20 * time.Millisecond) // scripts meet TRYAGAIN while their keys are split
	}
	redistest.Until(t, "an ASK reply once all have moved", func() bool { _, ask := cl.Redirects(t); return ask > ask0 })
	keys := m.Finish(t)
	after := next.Load()
	redistest.Until(t, "calls after the slot has moved", func() bool { return next.Load() > after+20 })
	stopWorkers()
	moved, ask := cl.Redirects(t)
	t.Logf("%d letters put, %d replayed, %d calls refused; %d keys moved; the nodes sent %d ASK and %d MOVED replies",
		len(put), len(replayed), failed.Load(), keys, ask-ask0, moved-moved0)
	checkLetters(t, c, q, prefix, put, replayed)
}

// checkLetters fails t unless the queue holds every letter put and not
// replayed, and the source list every replayed job, once.
func checkLetters(t *testing.T, c goredis.UniversalClient, q *redis.Queue, prefix string, put, replayed map[string]bool) {
	t.Helper()
	ctx := t.Context()
	lost, back := 0, 0
	for id := range put {
		_, err := q.Get(ctx, id)
		switch {
		case replayed[id] && err == nil:
			back++
		case !replayed[id] && errors.Is(err, dlq.ErrNotFound):
			lost++
		case !replayed[id] && err != nil:
			t.Fatal(err)
		}
	}
	jobs, err := c.LRange(ctx, sameSlot(prefix)("llm-jobs"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, j := range jobs {
		seen[j]++
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	if lost != 0 || back != 0 || len(jobs) != len(replayed) || twice != 0 {
		t.Fatalf("%d letters lost, %d replayed ones back, %d jobs on the source list for %d replays, %d there twice; want none lost, none back, one job per replay",
			lost, back, len(jobs), len(replayed), twice)
	}
}
