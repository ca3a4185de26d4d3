package httpretry_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// racingRT answers request n after lat[n-1] (the last entry for later ones)
// with status[n-1] (200 past the end) and a body naming n, unless the
// request's context ends first. It counts the requests cancelled and the
// response bodies closed, and keeps the bodies it received.
type racingRT struct {
	lat      []time.Duration
	status   []int
	mu       sync.Mutex
	n        int
	bodies   []string
	cancels  int
	closed   atomic.Int64
	returned atomic.Int64 // responses handed out
}

func (s *racingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	s.mu.Lock()
	s.n++
	n := s.n
	s.bodies = append(s.bodies, string(body))
	d := s.lat[min(n, len(s.lat))-1]
	status := 200
	if n <= len(s.status) {
		status = s.status[n-1]
	}
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		s.mu.Lock()
		s.cancels++
		s.mu.Unlock()
		return nil, req.Context().Err()
	}
	s.returned.Add(1)
	return &http.Response{StatusCode: status, Header: http.Header{}, Request: req,
		Body: &ctxBody{ctx: req.Context(), trackedBody: trackedBody{Reader: strings.NewReader("answer " + string(rune('0'+n))), closed: &s.closed}}}, nil
}

// ctxBody fails reads once its request's context has ended, as a real
// response body does.
type ctxBody struct {
	ctx context.Context
	trackedBody
}

func (b *ctxBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.trackedBody.Read(p)
}

func hedgingRetrier(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	r, err := retry.New(append([]retry.Option{retry.Idempotent(), retry.WithHedging(hedge.Fixed(10*ms), 2)}, opts...)...)
	require.NoError(t, err)
	return r
}

func TestHedgedRequests(t *testing.T) {
	t.Run("a slow GET gets a hedge; the caller reads the winner's body; the loser is cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{time.Second, 5 * ms}}
			tr := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(hedgingRetrier(t)))
			req, res := get(t, "http://api.test/x")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, "answer 2", readAll(t, resp))
			assert.Equal(t, 1, rt.cancels)
			assert.Equal(t, retry.Stats{Attempts: 2, Hedges: 1, Winner: 2, Elapsed: 15 * ms}, res.Stats)
		})
	})
	t.Run("a keyed POST is hedged with its body replayed by GetBody", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{time.Second, 5 * ms}}
			tr := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(hedgingRetrier(t)))
			req := post(t, t.Context(), "http://api.test/orders", `{"sku":42}`)
			req.Header.Set(idempotency.HeaderKey, "order-42")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, "answer 2", readAll(t, resp))
			assert.Equal(t, []string{`{"sku":42}`, `{"sku":42}`}, rt.bodies)
		})
	})
	t.Run("a POST without a key is sent once, however slow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{time.Second}}
			tr := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(hedgingRetrier(t)))
			resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "x"))
			require.NoError(t, err)
			assert.Equal(t, "answer 1", readAll(t, resp))
			assert.Equal(t, 1, rt.n)
		})
	})
	t.Run("losers' responses are drained and closed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Attempt 1 fails fast with a 503, attempt 2 (at once) is slow,
			// its hedge 3 wins: the 503 is closed, and so is 2 if it answers.
			rt := &racingRT{lat: []time.Duration{ms, 50 * ms, 5 * ms}, status: []int{503}}
			tr := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(hedgingRetrier(t)))
			req, res := get(t, "http://api.test/x")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, "answer 3", readAll(t, resp))
			assert.Equal(t, 3, res.Stats.Winner)
			assert.Equal(t, rt.returned.Load(), rt.closed.Load(), "every response handed out is closed, the winner's by the caller")
		})
	})
	t.Run("a Retrier that is not Idempotent refuses to hedge an unkeyed GET", func(t *testing.T) {
		rt := &racingRT{lat: []time.Duration{ms}}
		r, err := retry.New(retry.WithHedging(hedge.Fixed(10*ms), 2))
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
		_, err = transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(r)).RoundTrip(req)
		assert.ErrorIs(t, err, retry.ErrHedgeUnsafe)
		assert.Zero(t, rt.n)
	})
	t.Run("breakers around a hedging Retrier are refused", func(t *testing.T) {
		_, err := httpretry.New(httpretry.WithRetrier(hedgingRetrier(t)),
			httpretry.WithBreakers(func(breaker.HostModel) breaker.Settings { return breaker.Settings{} }))
		assert.ErrorIs(t, err, retry.ErrInvalid)
	})
}

// TestHedgedCancellationStormsLeaveNothingBehind cancels hundreds of hedged
// requests at random moments — before, during and after their hedge started
// — against a real server, and checks that no goroutine, connection or
// timer outlives them.
func TestHedgedCancellationStormsLeaveNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := newServer(t, reply{status: 200, body: strings.Repeat("x", 50_000)})
	srv.Config.Handler = slowly(srv.Config.Handler)
	tr := base(t)
	r, err := retry.New(retry.Idempotent(), retry.WithHedging(hedge.Fixed(500*time.Microsecond), 3))
	require.NoError(t, err)
	c := client(t, httpretry.WithBase(tr), httpretry.WithRetrier(r))
	rng := rand.New(rand.NewPCG(3, 4))
	var wg sync.WaitGroup
	var ok, cancelled atomic.Int64
	for i := range 300 {
		delay := time.Duration(rng.IntN(3000)) * time.Microsecond
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), delay)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/"+string(rune('a'+i%26)), nil)
			resp, err := c.Do(req)
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					cancelled.Add(1)
				}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok.Add(1)
		})
	}
	wg.Wait()
	srv.Close()
	tr.CloseIdleConnections()
	assert.Equal(t, int64(300), ok.Load()+cancelled.Load(), "every call ended with its answer or its deadline")
}
