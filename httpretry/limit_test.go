package httpretry_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestALimiterPacesTheTransportThroughItsRetrier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 429, header: retryAfter("1")}, {status: 200}, {status: 200}}}
		a, err := limit.NewAdaptive(limit.AdaptiveConfig{})
		require.NoError(t, err)
		c := client(t, quick(t, retry.WithLimiter(a)), httpretry.WithBase(rt))
		time.Sleep(time.Second) // the limiter's window: nothing accepted in it
		resp, err := c.Get("http://api.example/x")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 0.5, a.Rate(), "the 429 set the limit: nothing was accepted in the last second, so the minimum")
		start := time.Now()
		resp, err = c.Get("http://api.example/x")
		require.NoError(t, err)
		resp.Body.Close()
		assert.GreaterOrEqual(t, time.Since(start), time.Second, "the next request waited its turn at half a request a second")
	})
}

func TestALimiterRefusalSendsNothingAndIsNotRetried(t *testing.T) {
	th, err := limit.NewThrottler(limit.ThrottlerConfig{K: 1, Rand: func() uint64 { return 0 }})
	require.NoError(t, err)
	for range 100 {
		th.Record(context.Background(), limit.Outcome{Result: limit.Throttled})
	}
	rt := &fakeRT{script: []reply{{status: 200}}}
	c := client(t, quick(t, retry.WithLimiter(th)), httpretry.WithBase(rt))
	_, err = c.Get("http://api.example/x")
	require.Error(t, err)
	assert.True(t, errors.Is(err, retry.ErrLimited), "%v", err)
	assert.Empty(t, rt.at, "nothing sent")
}

// byModel answers 429 to the model "busy" and 200 to the others.
type byModel struct{ sent map[string]int }

func (b *byModel) RoundTrip(req *http.Request) (*http.Response, error) {
	m := req.URL.Query().Get("model")
	b.sent[m]++
	code := http.StatusOK
	if m == "busy" {
		code = http.StatusTooManyRequests
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

func TestAKeyedLimiterLimitsEachHostAndModelOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &byModel{sent: map[string]int{}}
		keyed, err := limit.NewKeyed(breaker.KeyOf, func(breaker.Key) (limit.Limiter, error) {
			return limit.NewThrottler(limit.ThrottlerConfig{K: 1, Rand: func() uint64 { return 0 }})
		}, 0)
		require.NoError(t, err)
		r := quick(t, retry.WithLimiter(keyed), retry.WithMaxAttempts(1))
		require.True(t, r.Keyed(), "a Keyed by breaker.Key reads the call key")
		c := client(t, r, httpretry.WithBase(rt), httpretry.WithModel(func(r *http.Request) string { return r.URL.Query().Get("model") }))
		for range 20 {
			if resp, err := c.Get("http://api.example/v1?model=busy"); err == nil {
				resp.Body.Close()
			}
		}
		_, err = c.Get("http://api.example/v1?model=busy")
		assert.ErrorIs(t, err, retry.ErrLimited, "the busy model's throttler refuses")
		resp, err := c.Get("http://api.example/v1?model=idle")
		require.NoError(t, err, "the other model of the same host is not limited")
		resp.Body.Close()
		busy, err := keyed.Get(breaker.Key{Target: "api.example", Operation: "busy"})
		require.NoError(t, err)
		assert.Greater(t, busy.(*limit.Throttler).RejectProbability(), 0.9)
		assert.Equal(t, 1, rt.sent["idle"])
	})
}

func TestTheCallKeyIsSetOnlyForAStageThatReadsIt(t *testing.T) {
	var seen []bool // whether each call's context carried a call key
	byOwnKey, err := limit.NewKeyed(func(ctx context.Context) (string, bool) {
		_, ok := breaker.KeyOf(ctx)
		seen = append(seen, ok)
		return "", false
	}, func(string) (limit.Limiter, error) { return nil, nil }, 0)
	require.NoError(t, err)
	r := quick(t, retry.WithLimiter(byOwnKey))
	require.False(t, r.Keyed())
	rt := &fakeRT{script: []reply{{status: 200}}}
	resp, err := client(t, r, httpretry.WithBase(rt)).Get("http://api.example/x")
	require.NoError(t, err)
	resp.Body.Close()
	require.NotEmpty(t, seen)
	assert.False(t, seen[0], "no stage reads the call key: it costs no context value")
}
