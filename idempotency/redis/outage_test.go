package redis_test

import (
	"context"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/redis"
	"github.com/retrykit/retry/internal/faultproxy"
	"github.com/retrykit/retry/internal/redistest"
)

// Outages between the store and Redis, made by a fault proxy, while
// callers run idempotency.Do with 300ms deadlines, each with a key of its
// own. Each checks: no call returns later than its deadline plus 100ms,
// before its function ran or after (Do leaves an outcome it could not
// record by then to the background); every acknowledged result is replayed
// afterwards, and its function never runs again; and calls succeed again
// within a second of the outage's end. The client is made as most are,
// without ContextTimeoutEnabled: go-redis alone would wait for its
// ReadTimeout (3s), and the Store bounds each command by its context.

const (
	redisOutageDeadline = 300 * time.Millisecond
	redisOutageMargin   = 100 * time.Millisecond
	redisOutageLease    = 2 * time.Second // idempotency.WithLease: how long Do records an outcome in the background
)

func TestOutagesEndEveryCallByItsDeadlineLoseNothingAndRecover(t *testing.T) {
	outages := []struct {
		name  string
		apply func(*faultproxy.Proxy)
	}{
		{"a hung server", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{BlackHole: true}) }},
		{"resets in the middle of replies", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Reset: true, ResetAfter: 2}) }},
		{"a server gone", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Refuse: true}); p.ResetAll() }},
		{"replies later than the deadline", func(p *faultproxy.Proxy) { p.Set(faultproxy.Faults{Latency: 2 * redisOutageDeadline}) }},
	}
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			srv := redistest.Start(t)
			proxy := faultproxy.Start(t, srv.Addr, faultproxy.Config{})
			run := redisOutageRun{store: redisOutageStore(t, &goredis.Options{Addr: proxy.Addr()})}
			run.during(func() { o.apply(proxy) }, func() { proxy.Set(faultproxy.Faults{}) })

			assert.LessOrEqual(t, run.claimOver, redisOutageMargin, "a call returned %v past its deadline before its function ran", run.claimOver)
			// Once its function ran, Do records the outcome until the caller's
			// deadline (and a 25ms grace), then in the background: the record
			// is not lost, and the caller is not held.
			assert.LessOrEqual(t, run.recordingOver, redisOutageMargin, "a call returned %v past its deadline after its function ran", run.recordingOver)
			recovered, ok := run.log.Recovery()
			if assert.True(t, ok, "no call succeeded after the outage") {
				assert.LessOrEqual(t, recovered, time.Second, "calls succeeded again %v after the outage", recovered)
			}
			run.checkAcknowledged(t)
			t.Logf("%d calls: %d acknowledged, %d failed (%d of those ran their function); past the deadline: %v while claiming, %v while recording an outcome (deadlines noticed up to %v late); recovered %v after the outage",
				len(run.log.Calls()), len(run.acked), len(run.log.Calls())-len(run.acked), run.ranUnacked(), run.claimOver, run.recordingOver, run.log.Lateness(), recovered)
		})
	}
}

func redisOutageStore(t *testing.T, opts *goredis.Options) *redis.Store {
	t.Helper()
	c := goredis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	s, err := redis.New(c, redis.Config{})
	require.NoError(t, err)
	return s
}

// redisOutageRun is 4 callers, each calling idempotency.Do with keys of
// its own, one after another.
type redisOutageRun struct {
	store *redis.Store
	log   faultproxy.Log
	mu    sync.Mutex
	acked map[string]string // key → the value its caller got
	ran   map[string]int    // key → how many times its function ran
	// The longest time past its deadline a call took: before its function
	// ran (claiming), and after (recording the outcome).
	claimOver, recordingOver time.Duration
}

// during runs the callers for 300ms, through the outage (start; 600ms;
// end), and for 1.2s after it.
func (o *redisOutageRun) during(start, end func()) {
	o.acked, o.ran = map[string]string{}, map[string]int{}
	o.log.Through(start, end, 1200*time.Millisecond, func(key string) error {
		var got idempotency.Result
		call := o.log.Do(context.Background(), redisOutageDeadline, func(ctx context.Context) (err error) {
			got, err = idempotency.Do(ctx, o.store, key, idempotency.Fingerprint{}, o.fn(key), idempotency.WithLease(redisOutageLease))
			return err
		})
		o.mu.Lock()
		defer o.mu.Unlock()
		if over := call.Overshoot(); o.ran[key] > 0 {
			o.recordingOver = max(o.recordingOver, over)
		} else {
			o.claimOver = max(o.claimOver, over)
		}
		if call.Err == nil {
			o.acked[key] = string(got.Value)
		}
		return call.Err
	})
}

// fn is key's function: it counts its runs and returns "done key".
func (o *redisOutageRun) fn(key string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		o.mu.Lock()
		o.ran[key]++
		o.mu.Unlock()
		return []byte("done " + key), nil
	}
}

// checkAcknowledged asserts that every acknowledged key ran once and is
// replayed with its value, without running again.
func (o *redisOutageRun) checkAcknowledged(t *testing.T) {
	t.Helper()
	for key, v := range o.acked {
		assert.Equal(t, "done "+key, v)
		res, err := idempotency.Do(t.Context(), o.store, key, idempotency.Fingerprint{}, o.fn(key))
		if assert.NoError(t, err, "the replay of acknowledged key %s", key) {
			assert.True(t, res.Replay, "acknowledged key %s was forgotten", key)
			assert.Equal(t, v, string(res.Value))
		}
		o.mu.Lock()
		assert.Equal(t, 1, o.ran[key], "the function of acknowledged key %s ran more than once", key)
		o.mu.Unlock()
	}
}

// ranUnacked returns how many keys ran their function without their call
// being acknowledged (its completion lost, or its caller gone first).
func (o *redisOutageRun) ranUnacked() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for key := range o.ran {
		if _, ok := o.acked[key]; !ok {
			n++
		}
	}
	return n
}
