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

// hedging is a transport over rt that hedges after 10ms, two in flight at
// most, through a Retrier built with opts.
func hedging(t *testing.T, rt http.RoundTripper, opts ...retry.Option) *httpretry.Transport {
	t.Helper()
	r, err := retry.New(opts...)
	require.NoError(t, err)
	return transport(t, r, httpretry.WithBase(rt), httpretry.WithHedging(hedge.Fixed(10*ms), 2))
}

func TestHedgedRequests(t *testing.T) {
	t.Run("a slow GET gets a hedge; the caller reads the winner's body; the loser is cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{time.Second, 5 * ms}}
			tr := hedging(t, rt)
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
			tr := hedging(t, rt)
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
			tr := hedging(t, rt)
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
			tr := hedging(t, rt)
			req, res := get(t, "http://api.test/x")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, "answer 3", readAll(t, resp))
			assert.Equal(t, 3, res.Stats.Winner)
			assert.Equal(t, rt.returned.Load(), rt.closed.Load(), "every response handed out is closed, the winner's by the caller")
		})
	})
	t.Run("a GET is hedged whether or not the Retrier is Idempotent: the transport knows its method", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{time.Second, 5 * ms}}
			r, err := retry.New()
			require.NoError(t, err)
			tr := transport(t, r, httpretry.WithBase(rt), httpretry.WithHedging(hedge.Fixed(10*ms), 2))
			req, res := get(t, "http://api.test/x")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, "answer 2", readAll(t, resp))
			assert.Equal(t, 1, res.Stats.Hedges)
		})
	})
	t.Run("a hedged request goes through the Retrier's breaker, keyed by its host", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &racingRT{lat: []time.Duration{ms}, status: []int{503, 503}}
			b, err := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
			require.NoError(t, err)
			tr := hedging(t, rt, retry.WithBreakers(b), retry.WithMaxAttempts(2))
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, 503, resp.StatusCode)
			assert.Equal(t, breaker.StateOpen, b.State(breaker.Key{Target: "api.test"}))
			req, _ = http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			_, err = tr.RoundTrip(req)
			assert.ErrorIs(t, err, retry.ErrBreakerOpen, "refused without a request")
			assert.Equal(t, 2, rt.n)
		})
	})
	t.Run("a bad delay or maxInFlight is refused when the transport is built", func(t *testing.T) {
		for _, tt := range []struct {
			d    hedge.Delay
			max  int
			want string
		}{
			{nil, 2, "httpretry.WithHedging(<nil>): must not be nil"},
			{hedge.Fixed(0), 2, "httpretry.WithHedging(0s): hedge.Fixed(0s): must be positive"},
			{hedge.Fixed(ms), 1, "httpretry.WithHedging(1): at most in flight must be at least 2: an attempt and its hedge"},
		} {
			tr, err := httpretry.New(defaults(t), httpretry.WithHedging(tt.d, tt.max))
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Equal(t, tt.want, err.Error())
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			_, rerr := tr.RoundTrip(req)
			assert.Equal(t, err, rerr, "the refused Transport fails every request with it")
		}
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
	c := client(t, defaults(t), httpretry.WithBase(tr), httpretry.WithHedging(hedge.Fixed(500*time.Microsecond), 3))
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
