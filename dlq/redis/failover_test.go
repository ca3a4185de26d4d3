package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// What a failover loses, measured on a real Redis Cluster: workers put
// letters and replay every other one to its source list; the queue's
// primary's replica falls behind (cut off its writes,
// redistest.Cluster.Detach) for lag; the primary is killed (SIGKILL), and
// its replica takes over.

const lag = 200 * time.Millisecond

func TestAFailoverLosesTheLettersItsReplicaHadNotReceived(t *testing.T) {
	got := failover(t, 0)
	if got.lettersLost == 0 || got.jobsLost == 0 {
		t.Fatalf("%+v; want letters lost, and replayed jobs gone: the replica lagged %v", got, lag)
	}
}

func TestWaitingForAReplicaAFailoverLosesNoAcknowledgedLetter(t *testing.T) {
	got := failover(t, 1)
	if got.lettersLost != 0 || got.replaysUndone != 0 || got.jobsLost != 0 {
		t.Fatalf("%+v; want no acknowledged letter lost, no acknowledged replay undone", got)
	}
	if got.refused == 0 {
		t.Fatalf("%+v; want the changes the replica did not confirm refused", got)
	}
}

type failoverOutcome struct {
	letters, replays int // acknowledged before the kill: letters stored (and not replayed), replays
	lettersLost      int // stored letters the new primary does not have
	replaysUndone    int // replayed letters back in the queue: replayed again, their job runs twice
	jobsLost         int // replayed jobs neither on the source list nor back in the queue: gone
	refused          int // calls made before the kill that failed
}

func failover(t *testing.T, replicas int) failoverOutcome {
	cl := redistest.StartCluster(t)
	c := cl.FailoverClient(t) // closed sooner, below, unless the test fails first
	const prefix = "{failover}:"
	cfg := redis.Config{Prefix: prefix, Replicas: replicas, SourceKey: sameSlot(prefix)}
	q, err := redis.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	primary := cl.Primary(t, redistest.Slot(prefix))
	replica := cl.Replica(t, primary)

	var (
		mu            sync.Mutex
		put, replayed = map[string]bool{}, map[string]bool{}
		payloads      = map[string]string{}
		next, refused atomic.Int32
		killed        atomic.Bool
		ctx           = context.WithoutCancel(t.Context())
	)
	stopWorkers := redistest.Workers(t, 8, func() {
		n := next.Add(1)
		l := letter(t, fmt.Sprint(n))
		before := !killed.Load()
		_, err := q.Put(ctx, l)
		if err == nil && n%2 == 0 {
			if err = q.Replay(ctx, l.ID, q.ToSource()); err == nil {
				mu.Lock()
				replayed[l.ID], payloads[l.ID] = !killed.Load(), string(l.Job.Payload)
				mu.Unlock()
			}
		}
		mu.Lock()
		if !replayed[l.ID] {
			put[l.ID] = err == nil && !killed.Load()
		}
		mu.Unlock()
		if err != nil && before {
			refused.Add(1)
		}
	})
	for next.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	cl.FailOver(t, primary, replica, lag, func() { killed.Store(true) }, func() { stopWorkers(); c.Close() })
	c, _ = cl.Client(t) // a process started after the failover
	if q, err = redis.New(c, cfg); err != nil {
		t.Fatal(err)
	}

	out := failoverOutcome{refused: int(refused.Load())}
	jobs, err := c.LRange(ctx, sameSlot(prefix)("llm-jobs"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	onList := map[string]bool{}
	for _, j := range jobs {
		onList[j] = true
	}
	for id, ok := range put {
		if ok {
			out.letters++
			if _, err := q.Get(ctx, id); errors.Is(err, dlq.ErrNotFound) {
				out.lettersLost++
			}
		}
	}
	for id, ok := range replayed {
		if !ok {
			continue
		}
		out.replays++
		_, err := q.Get(ctx, id)
		switch {
		case err == nil:
			out.replaysUndone++
		case !onList[payloads[id]]:
			out.jobsLost++
		}
	}
	t.Logf("Replicas %d, the replica %v behind: of %d acknowledged letters %d lost; of %d acknowledged replays %d undone (the letter back, to be replayed again) and %d jobs gone (neither on the source list nor back); %d calls made before the kill failed",
		replicas, lag, out.letters, out.lettersLost, out.replays, out.replaysUndone, out.jobsLost, out.refused)
	return out
}
