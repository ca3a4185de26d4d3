package httpretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attempt timeout bounds the wait for a response, never the caller's read
// of the response it let through (a defect once: the response came back
// with a body that failed with "context canceled" after 0 of 100,000
// bytes).

func TestAnAttemptTimeoutLeavesTheResponseReadable(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	for _, status := range []int{200, 503} {
		t.Run(fmt.Sprintf("a %d", status), func(t *testing.T) {
			returned := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				w.(http.Flusher).Flush()
				<-returned // the body comes after RoundTrip has returned
				io.WriteString(w, body)
			}))
			defer srv.Close()
			c := client(t, quick(t, retry.WithAttemptTimeout(time.Minute), retry.WithMaxAttempts(1)), httpretry.WithBase(base(t)))
			resp, err := c.Get(srv.URL)
			close(returned)
			require.NoError(t, err)
			assert.Equal(t, status, resp.StatusCode)
			assert.Equal(t, len(body), len(readAll(t, resp)), "every byte, after the attempt returned")
		})
	}
}

// slowBody is a response body that yields one chunk every tick, on the fake
// clock, and fails as http.Transport's does once its request's context ends.
type slowBody struct {
	ctx    context.Context
	chunks int
	tick   time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.chunks == 0 {
		return 0, io.EOF
	}
	select {
	case <-b.ctx.Done():
		return 0, context.Cause(b.ctx)
	case <-time.After(b.tick):
	}
	b.chunks--
	return copy(p, "chunk\n"), nil
}

func (b *slowBody) Close() error { return nil }

// slowRT answers after headerDelay, with a slow body; it keeps the contexts
// of the requests it was sent.
type slowRT struct {
	headerDelay []time.Duration // per attempt; the last repeats
	chunks      int
	tick        time.Duration
	ctxs        []context.Context
}

func (s *slowRT) RoundTrip(req *http.Request) (*http.Response, error) {
	s.ctxs = append(s.ctxs, req.Context())
	select {
	case <-time.After(s.headerDelay[min(len(s.ctxs), len(s.headerDelay))-1]):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
		Body: &slowBody{ctx: req.Context(), chunks: s.chunks, tick: s.tick}}, nil
}

func TestAnAttemptTimeoutBoundsTheWaitForTheHeaderOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &slowRT{headerDelay: []time.Duration{time.Second, 100 * ms}, chunks: 10, tick: 100 * ms}
		tr := transport(t, exact(t, 10*ms, retry.WithAttemptTimeout(500*ms)), httpretry.WithBase(rt))
		req, res := get(t, "http://api.test/report")
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, 610*ms, time.Since(start), "a header later than 500ms timed the first attempt out; a GET is retried")
		assert.Equal(t, 2, res.Attempts)
		assert.Equal(t, strings.Repeat("chunk\n", 10), readAll(t, resp), "1s of body, twice the attempt timeout")
		assert.Error(t, rt.ctxs[0].Err(), "the timed-out attempt's request was cancelled")
		assert.NoError(t, t.Context().Err())
	})
}

func TestClosingTheBodyEndsTheAttemptsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &slowRT{headerDelay: []time.Duration{0}, chunks: 3, tick: ms}
		tr := transport(t, exact(t, 0, retry.WithAttemptTimeout(time.Minute)), httpretry.WithBase(rt))
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, rt.ctxs[0].Err(), "open while the caller reads")
		resp.Body.Close()
		assert.ErrorIs(t, rt.ctxs[0].Err(), context.Canceled, "released once the caller is done")
	})
}

func TestTheCallersContextStillCancelsTheRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &slowRT{headerDelay: []time.Duration{0}, chunks: 100, tick: 100 * ms}
		tr := transport(t, exact(t, 0, retry.WithAttemptTimeout(time.Second)), httpretry.WithBase(rt))
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		time.AfterFunc(250*ms, cancel)
		b, err := io.ReadAll(resp.Body)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, strings.Repeat("chunk\n", 2), string(b))
	})
}

func TestAnErrorBodyIsReadWithinTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 502, body: "upstream"}, {status: 200}}}
		stall := scripted(t, chaos.Stall(3, time.Hour)) // the 502's body never ends: its kind cannot be read in time
		kind := func(*http.Response, []byte) string { return "" }
		tr := transport(t, exact(t, 10*ms, retry.WithAttemptTimeout(time.Second)), httpretry.WithBase(stall.Transport(rt)), httpretry.WithKind(kind))
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, 1010*ms, time.Since(start))
		assert.Equal(t, 2, rt.count())
	})
}

func TestAStreamOutlivesTheAttemptTimeout(t *testing.T) {
	for name, viaTransport := range map[string]bool{"a plain client": false, "a client whose transport retries": true} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sse := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Request: req,
						Body: &eventBody{slowBody{ctx: req.Context(), chunks: 20, tick: 100 * ms}}}, nil
				})
				r := exact(t, 0, retry.WithAttemptTimeout(500*ms))
				c := &http.Client{Transport: sse}
				if viaTransport {
					c = &http.Client{Transport: transport(t, r, httpretry.WithBase(sse))}
				}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/stream", nil)
				s, err := stream.Open(t.Context(), r, httpretry.OpenSSE(c, req))
				require.NoError(t, err)
				defer s.Close()
				n := 0
				for _, err := range s.All() {
					require.NoError(t, err)
					n++
				}
				assert.Equal(t, 20, n, "2s of events through a 500ms attempt timeout")
			})
		})
	}
}

// eventBody turns slowBody's chunks into events.
type eventBody struct{ slowBody }

func (b *eventBody) Read(p []byte) (int, error) {
	n, err := b.slowBody.Read(p)
	if n > 0 {
		n = copy(p, "data: chunk\n\n")
	}
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
