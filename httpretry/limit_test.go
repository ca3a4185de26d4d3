package httpretry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
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
		c := client(t, httpretry.WithBase(rt), httpretry.WithRetrier(quick(t, retry.WithLimiter(a))))
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
	c := client(t, httpretry.WithBase(rt), httpretry.WithRetrier(quick(t, retry.WithLimiter(th))))
	_, err = c.Get("http://api.example/x")
	require.Error(t, err)
	assert.True(t, errors.Is(err, retry.ErrLimited), "%v", err)
	assert.Empty(t, rt.at, "nothing sent")
}
