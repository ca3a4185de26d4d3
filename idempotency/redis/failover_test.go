package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a failover loses, measured on a real Redis Cluster: workers claim and
// complete keys on one primary; its replica falls behind (cut off its
// primary's writes, redistest.Cluster.Detach) for lag; the primary is
// killed (SIGKILL), and its replica takes over.

const lag = 200 * time.Millisecond

func TestAFailoverLosesTheClaimsAndResultsItsReplicaHadNotReceived(t *testing.T) {
	got := failover(t, 0)
	assert.Positive(t, got.resultsLost, "results acknowledged while the replica lagged are gone")
	assert.Positive(t, got.claimsLost, "and so are claims of executions still running")
	assert.Equal(t, got.forgotten+got.claimsLost, got.ranTwice, "a key Redis forgot runs again at once (one whose claim came back, once its lease ends)")
}

func TestWaitingForAReplicaAFailoverLosesNothingAcknowledged(t *testing.T) {
	got := failover(t, 1)
	assert.Zero(t, got.resultsLost, "no acknowledged result is lost")
	assert.Zero(t, got.claimsLost, "no acknowledged claim is lost")
	assert.Zero(t, got.ranTwice, "no key runs twice")
	assert.Positive(t, got.refused, "writes the replica did not confirm were refused instead")
}

type failoverOutcome struct {
	results, claims         int // acknowledged before the kill: results, and claims of executions that had none
	resultsLost, claimsLost int // of those, not on the new primary
	forgotten               int // of the lost results, those whose claim was lost too: the others wait for their lease
	ranTwice                int // keys whose function ran again when called after the failover
	refused                 int // calls made before the kill that failed
}

func failover(t *testing.T, replicas int) failoverOutcome {
	cl := redistest.StartCluster(t)
	c := cl.FailoverClient(t) // closed sooner, below, unless the test fails first
	const tag = "{failover}:"
	s := newStore(t, c, redis.Config{Prefix: tag, Replicas: replicas})
	primary := cl.Primary(t, redistest.Slot(tag))
	replica := cl.Replica(t, primary)

	var (
		mu            sync.Mutex
		claimed, done = map[string]bool{}, map[string]bool{}
		next, refused atomic.Int32
		killed        atomic.Bool
		ctx           = context.WithoutCancel(t.Context())
	)
	stopWorkers := redistest.Workers(t, 8, func() {
		key := fmt.Sprint("k", next.Add(1))
		before := !killed.Load()
		_, err := idempotency.Do(ctx, s, key, idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
			mu.Lock()
			claimed[key] = !killed.Load() // its claim was acknowledged before the kill
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			return []byte(key), nil
		}, idempotency.WithLease(time.Minute))
		mu.Lock()
		done[key] = err == nil && !killed.Load()
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
	s = newStore(t, c, redis.Config{Prefix: tag, Replicas: replicas})

	var out failoverOutcome
	out.refused = int(refused.Load())
	for key, ok := range claimed {
		if !ok {
			continue
		}
		rec := stored(t, c, tag+key)
		switch {
		case done[key]:
			out.results++
			if rec == nil || rec.Status != idempotency.Succeeded {
				out.resultsLost++
			}
			if rec == nil {
				out.forgotten++
			}
		default:
			out.claims++
			if rec == nil {
				out.claimsLost++
			}
		}
		_, _ = idempotency.Do(ctx, s, key, idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
			out.ranTwice++
			return nil, nil
		}, idempotency.WithMaxWait(10*time.Millisecond))
	}
	t.Logf("Replicas %d, the replica %v behind: of %d acknowledged results %d lost (%d with their claim), of %d acknowledged claims of running executions %d lost; %d keys ran twice; %d calls made before the kill failed",
		replicas, lag, out.results, out.resultsLost, out.forgotten, out.claims, out.claimsLost, out.ranTwice, out.refused)
	return out
}

// stored returns the record at key on the cluster, nil if there is none.
func stored(t *testing.T, c *goredis.ClusterClient, key string) *idempotency.Record {
	t.Helper()
	raw, err := c.Get(t.Context(), key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	require.NoError(t, err)
	var rec idempotency.Record
	require.NoError(t, rec.UnmarshalBinary(raw))
	return &rec
}
