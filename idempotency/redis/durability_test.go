package redis_test

import (
	"context"
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

// What the package documentation says about persistence, measured: Redis
// crashes (SIGKILL) while executions are in flight, and comes back on the
// same data directory.

func TestAOFWithFsyncAlwaysKeepsClaimsAndResultsAcrossACrash(t *testing.T) {
	got := crashWhileInFlight(t, redistest.AOF("always")...)
	assert.Zero(t, got.ranTwice, "no key in flight ran again")
	assert.Zero(t, got.finishedRanAgain, "no finished key ran again")
	assert.Equal(t, inFlight, got.recorded, "every first execution kept its claim and recorded its result")
	assert.Equal(t, inFlight, got.replayedFirst, "later calls replay the first execution's result")
}

func TestWithoutPersistenceACrashRunsEveryKeyInFlightTwiceConcurrently(t *testing.T) {
	got := crashWhileInFlight(t)
	assert.Equal(t, inFlight, got.ranTwice, "every key in flight ran again")
	assert.Equal(t, inFlight, got.concurrently, "while its first execution was still running")
	assert.Equal(t, inFlight, got.finishedRanAgain, "and every finished key ran again")
	assert.Zero(t, got.recorded, "the first executions lost their claims")
}

const inFlight = 20

type crashOutcome struct {
	ranTwice, concurrently, finishedRanAgain, recorded, replayedFirst int
}

// crashWhileInFlight finishes inFlight keys and starts inFlight more from
// one process, kills Redis while those run and restarts it, then calls every
// key again from a second process.
func crashWhileInFlight(t *testing.T, args ...string) crashOutcome {
	srv := redistest.Start(t, args...)
	first, second := storeOn(t, srv.Addr), storeOn(t, srv.Addr)
	ctx := t.Context()
	for i := range inFlight {
		_, err := idempotency.Do(ctx, first, fmt.Sprint("done-", i), idempotency.Fingerprint{}, value("done"))
		require.NoError(t, err)
	}
	release := make(chan struct{})
	var started, finished sync.WaitGroup
	var recorded atomic.Int32
	for i := range inFlight {
		started.Add(1)
		finished.Go(func() {
			_, err := idempotency.Do(ctx, first, fmt.Sprint("job-", i), idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
				started.Done() // the claim was acknowledged
				<-release
				return []byte("first"), nil
			})
			if err == nil {
				recorded.Add(1)
			}
		})
	}
	started.Wait()

	srv.Stop()
	srv.Restart(t)

	var out crashOutcome
	var ranTwice, concurrently, finishedRanAgain atomic.Int32
	var again sync.WaitGroup
	for i := range inFlight {
		again.Go(func() {
			_, _ = idempotency.Do(ctx, second, fmt.Sprint("job-", i), idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
				ranTwice.Add(1)
				select {
				case <-release:
				default:
					concurrently.Add(1)
				}
				return []byte("second"), nil
			}, idempotency.WithMaxWait(50*time.Millisecond))
		})
		again.Go(func() {
			_, _ = idempotency.Do(ctx, second, fmt.Sprint("done-", i), idempotency.Fingerprint{}, func(context.Context) ([]byte, error) {
				finishedRanAgain.Add(1)
				return nil, nil
			})
		})
	}
	again.Wait()
	close(release)
	finished.Wait()
	for i := range inFlight {
		res, err := idempotency.Do(ctx, second, fmt.Sprint("job-", i), idempotency.Fingerprint{}, value("third"))
		if err == nil && res.Replay && string(res.Value) == "first" {
			out.replayedFirst++
		}
	}
	out.ranTwice, out.concurrently = int(ranTwice.Load()), int(concurrently.Load())
	out.finishedRanAgain, out.recorded = int(finishedRanAgain.Load()), int(recorded.Load())
	t.Logf("%+v", out)
	return out
}

func storeOn(t *testing.T, addr string) *redis.Store {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return newStore(t, c, redis.Config{})
}

func value(v string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) { return []byte(v), nil }
}
