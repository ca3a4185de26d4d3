package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateway answers 503 with Retry-After: 30 for the model "down" and 200 for
// the others, and counts its requests.
func gateway(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.HasSuffix(r.URL.Path, "/down") {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "backend unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func complete(srv *httptest.Server, model string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/"+model, nil)
		if err != nil {
			return err
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return classify.ResponseError(resp)
	}
}

func TestA503WithRetryAfterCoolsTheKeyDownLocally(t *testing.T) {
	srv, hits := gateway(t)
	var started []string
	cd, err := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{
		OnCooldown: func(key string, until time.Time, err error) { started = append(started, key) },
	})
	require.NoError(t, err)
	host := strings.TrimPrefix(srv.URL, "http://")
	down, up := breaker.HostModel{Host: host, Model: "down"}, breaker.HostModel{Host: host, Model: "up"}

	err = cd.Do(t.Context(), down, complete(srv, "down"))
	var status *classify.StatusError
	require.ErrorAs(t, err, &status, "the first call reaches the server")
	assert.Equal(t, int64(1), hits.Load())

	before := time.Now()
	err = cd.Do(t.Context(), down, complete(srv, "down"))
	assert.Equal(t, int64(1), hits.Load(), "the second call failed locally: no request")
	assert.ErrorIs(t, err, breaker.ErrCooldown)
	assert.False(t, errors.As(err, &status), "a local failure is never mistaken for the server's answer")
	var cerr *breaker.CooldownError
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, down.String(), cerr.Key)
	assert.WithinDuration(t, before.Add(30*time.Second), cerr.Until, 2*time.Second)
	assert.Contains(t, err.Error(), "failed locally, no request sent")
	assert.Contains(t, err.Error(), "is cooling down until")

	require.NoError(t, cd.Do(t.Context(), up, complete(srv, "up")), "another model on the same host is unaffected")
	assert.Equal(t, int64(2), hits.Load())

	assert.Equal(t, []string{down.String()}, started, "the cooldown reached OnCooldown, once")
}

func TestCooldownsExpire(t *testing.T) {
	cd, err := breaker.NewCooldowns[string](breaker.CooldownSettings{})
	require.NoError(t, err)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	busy := &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"10"}}}
	until, ok := cd.ObserveAt(now, "k", busy)
	require.True(t, ok)
	assert.Equal(t, now.Add(10*time.Second), until)
	assert.Error(t, cd.CheckAt(now.Add(9*time.Second), "k"))
	assert.NoError(t, cd.CheckAt(now.Add(10*time.Second), "k"), "free again when the time has passed")
	assert.Zero(t, cd.Len(), "the expired entry was dropped")
}

func TestOnlyA503WithRetryAfterStartsACooldown(t *testing.T) {
	cd, err := breaker.NewCooldowns[string](breaker.CooldownSettings{MaxDelay: time.Minute})
	require.NoError(t, err)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, err := range []error{
		nil,
		&classify.StatusError{Code: 503},
		&classify.StatusError{Code: 429, Header: http.Header{"Retry-After": {"10"}}},
		&classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"0"}}},
		errors.New("reset"),
	} {
		_, ok := cd.ObserveAt(now, "k", err)
		assert.False(t, ok, "%v", err)
	}
	until, ok := cd.ObserveAt(now, "k", &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"86400"}}})
	require.True(t, ok)
	assert.Equal(t, now.Add(time.Minute), until, "a huge Retry-After is held for MaxDelay")
}

func TestCooldownsAreBounded(t *testing.T) {
	cd, err := breaker.NewCooldowns[int](breaker.CooldownSettings{MaxKeys: 3})
	require.NoError(t, err)
	far := time.Now().Add(time.Hour)
	for k := range 10 {
		cd.Start(k, far.Add(time.Duration(k)*time.Second))
	}
	assert.Equal(t, 3, cd.Len())
	assert.Error(t, cd.Check(9), "the latest keys are kept")
	assert.NoError(t, cd.Check(0), "the one ending first made room")
	cd.Start(9, far) // an earlier end does not shorten a cooldown
	var cerr *breaker.CooldownError
	require.ErrorAs(t, cd.Check(9), &cerr)
	assert.Equal(t, far.Add(9*time.Second), cerr.Until)
}

func TestCooldownsAreSafeForConcurrentUse(t *testing.T) {
	cd, err := breaker.NewCooldowns[int](breaker.CooldownSettings{MaxKeys: 50})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				cd.Start(g*1000+i, time.Now().Add(time.Duration(i)*time.Millisecond))
				_ = cd.Check(g*1000 + i/2)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, cd.Len(), 50)
}

func TestARetryLoopWaitsOutACooldownInsteadOfCalling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cd, err := breaker.NewCooldowns[string](breaker.CooldownSettings{})
		require.NoError(t, err)
		dep := &dependency{err: &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"5"}}}}
		// Another caller's 503 put the key in cooldown 2s ago.
		_ = cd.Do(t.Context(), "gw/qwen", dep.call)
		time.Sleep(2 * time.Second)
		dep.set(nil)

		start := time.Now()
		r := retrier(t)
		err = r.Do(t.Context(), func(ctx context.Context) error { return cd.Do(ctx, "gw/qwen", dep.call) })
		require.NoError(t, err)
		assert.Equal(t, 2, dep.count(), "one request to learn of the outage, one after it")
		waited := time.Since(start)
		assert.GreaterOrEqual(t, waited, 3*time.Second, "the loop waited out the 3s left")
		assert.Less(t, waited, 4*time.Second)
	})
}

func TestBadCooldownSettings(t *testing.T) {
	_, err := breaker.NewCooldowns[string](breaker.CooldownSettings{MaxKeys: -1})
	assert.ErrorContains(t, err, "breaker.CooldownSettings.MaxKeys(-1)")
	assert.ErrorIs(t, err, retry.ErrInvalid)
	_, err = breaker.NewCooldowns[string](breaker.CooldownSettings{MaxDelay: -time.Second})
	assert.ErrorContains(t, err, "breaker.CooldownSettings.MaxDelay(-1s)")
}

func TestACooldownIsItsOwnClassOfFailure(t *testing.T) {
	cd, err := breaker.NewCooldowns[string](breaker.CooldownSettings{})
	require.NoError(t, err)
	cd.Start("k", time.Now().Add(time.Minute))
	d := classify.Default(cd.Check("k"))
	assert.Equal(t, classify.ReasonCooldown, d.Reason)
	assert.Equal(t, classify.Retry, d.Verdict)
	assert.Greater(t, d.RetryAfter, 59*time.Second)
}
