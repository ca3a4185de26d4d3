package redis_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/internal/redistest"
	"github.com/retrykit/retry/limit"
	lredis "github.com/retrykit/retry/limit/redis"
	"github.com/stretchr/testify/assert"
)

// api is a rate-limited test server: a token bucket of rate tokens a second
// (capacity a tenth of that), 429 with Retry-After: 1 beyond it.
type api struct {
	mu                  sync.Mutex
	rate, tokens        float64
	last                time.Time
	accepted, throttled atomic.Int64
}

func (a *api) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
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
func TestAFleetSharingOneLimitBehavesAsOneClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 3s of real time")
	}
	srv := redistest.Start(t)
	a := &api{rate: 100, tokens: 10, last: time.Now()}
	ts := httptest.NewServer(a)
	t.Cleanup(ts.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}

	const instances, workers = 12, 4
	warm, end := time.Now().Add(time.Second), time.Now().Add(3*time.Second)
	var mu sync.Mutex
	var acc, thr int
	var wg sync.WaitGroup
	for range instances {
		l := newLimiter(t, srv.Addr, "shared-key", lredis.Config{})
		for range workers {
			wg.Go(func() {
				ctx := context.Background()
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
	wg.Wait()
	share := float64(thr) / float64(max(acc+thr, 1))
	t.Logf("after the first second: %d accepted (%.0f a second), %d throttled (%.1f%%); in all %d accepted, %d throttled",
		acc, float64(acc)/2, thr, 100*share, a.accepted.Load(), a.throttled.Load())
	assert.Less(t, share, 0.10, "at most a tenth of the calls throttled")
	assert.Greater(t, float64(acc)/2, 70.0, "most of the limit used")
}
