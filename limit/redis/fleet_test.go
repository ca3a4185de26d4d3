package redis_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// api is a rate-limited test server: a token bucket of rate tokens a second
// (capacity a tenth of that), 429 with Retry-After: 1 beyond it.
type api struct {
	mu                  sync.Mutex
	rate, tokens        float64
	last                time.Time
	accepted, throttled atomic.Int64
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/warm" { // opens a connection; not a call of the API
		return
	}
	a.mu.Lock()
	now := time.Now()
	a.tokens = min(a.rate/10, a.tokens+now.Sub(a.last).Seconds()*a.rate)
	a.last = now
	ok := a.tokens >= 1
	if ok {
		a.tokens--
	}
	a.mu.Unlock()
	if !ok {
		a.throttled.Add(1)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	a.accepted.Add(1)
}

// TestAFleetSharingOneLimitBehavesAsOneClient runs 12 instances, each with
// its own Redis client and 4 workers sending as fast as they may, against
// an API that admits 100 requests a second: once the fleet has learnt the
// limit, few calls are throttled and most of the limit is used.
//
// The workers open their connections to the API and to Redis before they
// start, all at once: a fleet whose first answers are slow to come (its
// connections opening on a loaded machine) measures the rate it sent
// rather than the rate the API admits, and learns a lower limit.
func TestAFleetSharingOneLimitBehavesAsOneClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 3s of real time")
	}
	srv := redistest.Start(t)
	a := &api{rate: 100}
	ts := httptest.NewServer(a)
	t.Cleanup(ts.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}

	const instances, workers = 12, 4
	var ready sync.WaitGroup
	ready.Add(instances * workers)
	start := make(chan struct{})
	var warm, end time.Time
	var mu sync.Mutex
	var acc, thr int
	var wg sync.WaitGroup
	clients := make([]*goredis.Client, instances)
	limiters := make([]*lredis.Limiter, instances)
	for i := range instances {
		clients[i] = newClient(t, srv.Addr)
		var err error
		limiters[i], err = lredis.New(clients[i], "shared-key", lredis.Config{})
		require.NoError(t, err)
	}
	for i := range instances {
		c, l := clients[i], limiters[i]
		for range workers {
			wg.Go(func() {
				ctx := context.Background()
				resp, err := hc.Get(ts.URL + "/warm")
				if err == nil {
					resp.Body.Close()
					err = c.Ping(ctx).Err()
				}
				ready.Done()
				if err != nil {
					t.Error(err)
					return
				}
				<-start
				for time.Now().Before(end) {
					if !l.Acquire(ctx, time.Second) {
						continue
					}
					resp, err := hc.Get(ts.URL)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					o := limit.Outcome{Result: limit.Accepted}
					if resp.StatusCode == http.StatusTooManyRequests {
						o = limit.Outcome{Result: limit.Throttled, RetryAfter: time.Second}
					}
					l.Record(ctx, o)
					if time.Now().After(warm) {
						mu.Lock()
						if o.Result == limit.Accepted {
							acc++
						} else {
							thr++
						}
						mu.Unlock()
					}
				}
			})
		}
	}
	ready.Wait()
	a.mu.Lock()
	a.tokens, a.last = a.rate/10, time.Now()
	a.mu.Unlock()
	warm, end = time.Now().Add(time.Second), time.Now().Add(3*time.Second)
	close(start)
	wg.Wait()
	share := float64(thr) / float64(max(acc+thr, 1))
	t.Logf("after the first second: %d accepted (%.0f a second), %d throttled (%.1f%%); in all %d accepted, %d throttled",
		acc, float64(acc)/2, thr, 100*share, a.accepted.Load(), a.throttled.Load())
	assert.Less(t, share, 0.10, "at most a tenth of the calls throttled")
	assert.Greater(t, float64(acc)/2, 70.0, "most of the limit used")
}
