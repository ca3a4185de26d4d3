package httpretry_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/httpretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestTheCallersContextEndingDuringAWaitReturnsItsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503, header: retryAfter("20"), body: "busy"}}}
		tr := transport(t, exact(t, 0, retry.WithMaxAttempts(10)), httpretry.WithBase(rt))
		ctx, cancel := context.WithCancelCause(t.Context())
		stop := errors.New("the user left")
		time.AfterFunc(25*time.Second, func() { cancel(stop) })
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		resp, err := tr.RoundTrip(req)
		require.Error(t, err, "not the last 503 with a nil error")
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, stop, "the context's cause")
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr, "with the attempts and waits")
		assert.Equal(t, 2, rerr.Attempts)
		assert.Equal(t, int64(2), rt.closed.Load(), "the 503 kept for the answer was drained and closed too")
	})
}

func TestAClientReturnsTheContextsErrorAsHTTPClientDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503, header: retryAfter("2")}}}
		c := &http.Client{Transport: transport(t, defaults(t), httpretry.WithBase(rt))}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		_, err := c.Do(req)
		var uerr *url.Error
		require.ErrorAs(t, err, &uerr)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestARequestWhoseContextIsDoneIsNotSent(t *testing.T) {
	rt := &fakeRT{script: []reply{{status: 200}}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", body)
	_, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, rt.count())
	assert.Equal(t, 1, body.closed)
}

// TestCancellationStormsLeaveNothingBehind cancels hundreds of requests at
// random moments — before, during and between attempts, while the body is
// read — against a real server, and checks that no goroutine, connection or
// timer outlives them.
func TestCancellationStormsLeaveNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := newServer(t, reply{status: 503, body: strings.Repeat("e", 1000)}, reply{status: 200, body: strings.Repeat("x", 50_000)})
	srv.Config.Handler = slowly(srv.Config.Handler)
	tr := base(t)
	c := client(t, quick(t, retry.WithAttemptTimeout(20*ms), retry.WithMaxAttempts(4)), httpretry.WithBase(tr))
	rng := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	for i := range 300 {
		delay := time.Duration(rng.IntN(3000)) * time.Microsecond
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), delay)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/"+string(rune('a'+i%26)), nil)
			resp, err := c.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	srv.Close()
	tr.CloseIdleConnections()
}

// slowly delays every answer by a millisecond, so that cancellations land
// in the middle of attempts.
func slowly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(ms):
		case <-r.Context().Done():
			return
		}
		h.ServeHTTP(w, r)
	})
}
