package idempotency_test

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
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripted is an in-memory RoundTripper that answers from a script and
// records what it was sent: no network, so it runs on synctest's clock.
type scripted struct {
	mu      sync.Mutex
	script  []answer
	keys    []string
	bodies  []string
	elapsed []time.Duration
	start   time.Time
}

type answer struct {
	status     int
	kind       string
	retryAfter string
	replayOf   string
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.start.IsZero() {
		s.start = time.Now()
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	s.keys = append(s.keys, req.Header.Get(idempotency.HeaderKey))
	s.bodies = append(s.bodies, string(body))
	s.elapsed = append(s.elapsed, time.Since(s.start))
	a := s.script[min(len(s.keys), len(s.script))-1]
	h := http.Header{}
	text := "ok"
	if a.kind != "" {
		h.Set("Content-Type", "application/problem+json")
		text = fmt.Sprintf(`{"type":"about:blank","status":%d,"kind":%q}`, a.status, a.kind)
	}
	if a.retryAfter != "" {
		h.Set("Retry-After", a.retryAfter)
	}
	if a.replayOf != "" {
		h.Set(idempotency.HeaderReplay, "true")
		h.Set(idempotency.HeaderReplayOf, a.replayOf)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader(text)), Request: req}, nil
}

func (s *scripted) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	return req
}

func TestTransportWaitsOutInProgressAndCollectsTheResult(t *testing.T) {
	tests := []struct {
		name        string
		script      []answer
		wantElapsed []time.Duration
	}{
		{"Retry-After sets each wait", []answer{
			{status: 409, kind: idempotency.KindInProgress, retryAfter: "2"},
			{status: 409, kind: idempotency.KindInProgress, retryAfter: "1"},
			{status: 201, replayOf: "exec-1"},
		}, []time.Duration{0, 2 * time.Second, 3 * time.Second}},
		{"without Retry-After the waits start at 10ms and double", []answer{
			{status: 409, kind: idempotency.KindInProgress},
			{status: 409, kind: idempotency.KindInProgress},
			{status: 409, kind: idempotency.KindInProgress},
			{status: 201, replayOf: "exec-1"},
		}, []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond, 70 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &scripted{script: tt.script}
				tr, err := idempotency.NewTransport(base)
				require.NoError(t, err)
				ctx, err := retry.WithIdempotencyKey(t.Context(), "order-1")
				require.NoError(t, err)
				resp, err := tr.RoundTrip(post(t, ctx, "http://api.test/orders", `{"item":"book"}`))
				require.NoError(t, err)
				defer resp.Body.Close()
				assert.Equal(t, 201, resp.StatusCode)
				of, replay := idempotency.ReplayOf(resp)
				assert.True(t, replay)
				assert.Equal(t, "exec-1", of)
				assert.Equal(t, tt.wantElapsed, base.elapsed)
				for i := range base.keys {
					assert.Equal(t, "order-1", base.keys[i], "request %d carries the key", i)
					assert.Equal(t, `{"item":"book"}`, base.bodies[i], "request %d carries the whole body", i)
				}
			})
		})
	}
}

func TestTransportStopsWaiting(t *testing.T) {
	inProgress := []answer{{status: 409, kind: idempotency.KindInProgress, retryAfter: "5"}}
	t.Run("a wait that would outlast the deadline returns the 409 as it is", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &scripted{script: inProgress}
			ctx, _ := retry.WithIdempotencyKey(t.Context(), "k")
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			tr, _ := idempotency.NewTransport(base)
			resp, err := tr.RoundTrip(post(t, ctx, "http://api.test", ""))
			require.NoError(t, err)
			err = idempotency.ResponseError(resp)
			require.ErrorIs(t, err, idempotency.ErrInProgress)
			d := idempotency.Classify(err)
			assert.Equal(t, classify.Retry, d.Verdict)
			assert.Equal(t, 5*time.Second, d.RetryAfter, "the server's wait reaches the retry loop")
			assert.Equal(t, 1, base.calls())
		})
	})
	t.Run("WithMaxWait bounds the whole wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &scripted{script: []answer{{status: 409, kind: idempotency.KindInProgress}}}
			tr, err := idempotency.NewTransport(base, idempotency.WithMaxWait(time.Second), idempotency.WithPollInterval(100*time.Millisecond))
			require.NoError(t, err)
			ctx, _ := retry.WithIdempotencyKey(t.Context(), "k")
			start := time.Now()
			resp, err := tr.RoundTrip(post(t, ctx, "http://api.test", ""))
			require.NoError(t, err)
			assert.Equal(t, http.StatusConflict, resp.StatusCode)
			assert.LessOrEqual(t, time.Since(start), time.Second)
			body, _ := io.ReadAll(resp.Body)
			assert.Contains(t, string(body), idempotency.KindInProgress, "the returned 409 keeps its body")
		})
	})
	t.Run("a body that cannot be sent again is not waited for", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &scripted{script: inProgress}
			tr, _ := idempotency.NewTransport(base)
			ctx, _ := retry.WithIdempotencyKey(t.Context(), "k")
			req := post(t, ctx, "http://api.test", "body")
			req.GetBody = nil
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, http.StatusConflict, resp.StatusCode)
			assert.Equal(t, 1, base.calls())
		})
	})
}

func TestTransportHandlesKeys(t *testing.T) {
	ok := []answer{{status: 200}}
	tests := []struct {
		name     string
		header   string
		ctxKey   string
		wantKey  string
		wantErr  error
		wantSent bool
	}{
		{"the context's key is sent", "", "from-ctx", "from-ctx", nil, true},
		{"a key already in the header wins", "from-header", "from-ctx", "from-header", nil, true},
		{"a request without a key passes through, and no key is minted", "", "", "", nil, true},
		{"a key over 255 characters fails before sending", strings.Repeat("k", 256), "", "", retry.ErrInvalid, false},
		{"a key with a control character fails before sending", "a\tb", "", "", retry.ErrInvalid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scripted{script: ok}
			tr, _ := idempotency.NewTransport(base)
			ctx := t.Context()
			if tt.ctxKey != "" {
				ctx, _ = retry.WithIdempotencyKey(ctx, tt.ctxKey)
			}
			req := post(t, ctx, "http://api.test", "")
			if tt.header != "" {
				req.Header[idempotency.HeaderKey] = []string{tt.header}
			}
			resp, err := tr.RoundTrip(req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				resp.Body.Close()
			}
			assert.Equal(t, tt.wantSent, base.calls() == 1)
			if tt.wantSent {
				assert.Equal(t, tt.wantKey, base.keys[0])
			}
			assert.Empty(t, req.Header.Get(idempotency.HeaderKey) != "" && tt.header == "", "the caller's request is not modified")
		})
	}
}

func TestResponseErrorReadsTheKind(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		wantNil    bool
		wantReason error
		wantKind   string
		wantVerd   classify.Verdict
	}{
		{"a success is no error", 200, "{}", true, nil, "", classify.NoOpinion},
		{"the middleware's in-progress problem", 409, `{"type":"x","kind":"idempotency-in-progress"}`, false, idempotency.ErrInProgress, idempotency.KindInProgress, classify.Retry},
		{"the gateway's key reuse under error.code", 409, `{"error":{"code":"idempotency-key-reuse","message":"…"}}`, false, idempotency.ErrKeyReuse, idempotency.KindKeyReuse, classify.Stop},
		{"not retained as a code", 409, `{"code":"idempotency-response-not-retained"}`, false, idempotency.ErrNotRetained, idempotency.KindNotRetained, classify.Stop},
		{"a kind in the problem type's last segment", 409, `{"type":"https://gw.example/errors/idempotency-in-progress"}`, false, idempotency.ErrInProgress, idempotency.KindInProgress, classify.Retry},
		{"a missing key", 400, `{"kind":"idempotency-key-missing"}`, false, retry.ErrKeyRequired, idempotency.KindKeyMissing, classify.NoOpinion},
		{"another API's code is kept as the kind", 502, `{"error":{"type":"upstream-error","code":7}}`, false, nil, classify.KindUpstreamError, classify.NoOpinion},
		{"a plain 409 is only a status", 409, `conflict`, false, nil, "", classify.NoOpinion},
		{"an empty body", 503, ``, false, nil, "", classify.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tt.body))}
			err := idempotency.ResponseError(resp)
			if tt.wantNil {
				require.NoError(t, err)
				return
			}
			var se *classify.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.status, se.Code)
			assert.Equal(t, tt.wantKind, se.Kind)
			if tt.wantReason != nil {
				require.ErrorIs(t, err, tt.wantReason)
			}
			assert.Equal(t, tt.wantVerd, idempotency.Classify(err).Verdict)
		})
	}
	assert.NoError(t, idempotency.ResponseError(nil))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want classify.Decision
	}{
		{"in progress is retried after the server's wait", &idempotency.Error{Reason: idempotency.ErrInProgress, Err: &classify.StatusError{Code: 409, Header: http.Header{"Retry-After": {"3"}}}},
			classify.Decision{Verdict: classify.Retry, Reason: idempotency.ReasonInProgress, RetryAfter: 3 * time.Second}},
		{"a gateway StatusError with the in-progress kind is retried", fmt.Errorf("call: %w", &classify.StatusError{Code: 409, Kind: idempotency.KindInProgress}),
			classify.Decision{Verdict: classify.Retry, Reason: idempotency.ReasonInProgress}},
		{"key reuse stops", &classify.StatusError{Code: 409, Kind: idempotency.KindKeyReuse}, classify.Decision{Verdict: classify.Stop, Reason: idempotency.ReasonKeyReuse}},
		{"not retained stops", &idempotency.Error{Reason: idempotency.ErrNotRetained}, classify.Decision{Verdict: classify.Stop, Reason: idempotency.ReasonNotRetained}},
		{"a kept failure stops", &idempotency.Error{Reason: idempotency.ErrStoredFailure}, classify.Decision{Verdict: classify.Stop, Reason: idempotency.ReasonStoredFailure}},
		{"a lost claim stops", &idempotency.Error{Reason: idempotency.ErrClaimLost}, classify.Decision{Verdict: classify.Stop, Reason: idempotency.ReasonClaimLost}},
		{"a store failure is left to its cause", &idempotency.Error{Reason: idempotency.ErrStore, Err: errors.New("x")}, classify.Decision{}},
		{"anything else has no opinion", errors.New("x"), classify.Decision{}},
		{"nil has no opinion", nil, classify.Decision{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, idempotency.Classify(tt.err))
		})
	}
}

// hits counts the requests a handler gets.
func hits(h http.Handler) (http.Handler, *atomic.Int32) {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}), &n
}

func TestClientOverRealHTTP(t *testing.T) {
	fastRetries := []retry.Option{retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithMaxAttempts(4)}
	t.Run("a timed-out attempt is retried under the same key, waits for the first, and gets its result", func(t *testing.T) {
		store := newMemory(t)
		guard, _ := idempotency.Middleware(store)
		o := newOrders()
		h, n := hits(guard(o))
		srv := httptest.NewServer(h)
		defer srv.Close()
		var once sync.Once
		c, err := idempotency.NewClient(srv.Client(), append(fastRetries,
			retry.WithAttemptTimeout(100*time.Millisecond),
			retry.WithHook(func(_ context.Context, e retry.Event) {
				if e.Kind == retry.RetryScheduled && errors.Is(e.Err, idempotency.ErrInProgress) {
					once.Do(func() { close(o.unblock) }) // the first request finishes only now
				}
			}))...)
		require.NoError(t, err)
		resp, err := c.Do(post(t, t.Context(), srv.URL+"/orders?block=1", `{"item":"book"}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Contains(t, string(body), `"order":1`)
		_, replay := idempotency.ReplayOf(resp)
		assert.True(t, replay, "the result is the first request's, replayed")
		assert.Equal(t, int32(1), o.runs.Load(), "the handler ran once")
		assert.GreaterOrEqual(t, n.Load(), int32(3), "timeout, in progress, replay")
	})
	t.Run("key reuse with another payload is never retried", func(t *testing.T) {
		s := newServer(t, nil)
		s.send(t, "POST", "/orders", "k1", `{"item":"book"}`)
		h, n := hits(s.Config.Handler)
		s.Config.Handler = h
		c, _ := idempotency.NewClient(s.Client(), fastRetries...)
		req := post(t, t.Context(), s.URL+"/orders", `{"item":"pen"}`)
		req.Header.Set(idempotency.HeaderKey, "k1")
		_, err := c.Do(req)
		require.ErrorIs(t, err, idempotency.ErrKeyReuse)
		require.ErrorIs(t, err, retry.ErrPermanent)
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		assert.Equal(t, 1, rerr.Attempts)
		assert.Equal(t, int32(1), n.Load(), "one request with the key, no new key minted")
	})
	t.Run("not retained is its own error and is not retried", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithMaxResultSize(100))
		s.send(t, "POST", "/orders?size=500", "k1", `{}`)
		c, _ := idempotency.NewClient(s.Client(), fastRetries...)
		req := post(t, t.Context(), s.URL+"/orders?size=500", `{}`)
		req.Header.Set(idempotency.HeaderKey, "k1")
		_, err := c.Do(req)
		require.ErrorIs(t, err, idempotency.ErrNotRetained)
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("every attempt of a call sends the one key the client chose", func(t *testing.T) {
		var keys []string
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			keys = append(keys, r.Header.Get(idempotency.HeaderKey))
			if len(keys) < 3 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
			}
		}))
		defer srv.Close()
		c, _ := idempotency.NewClient(srv.Client(), fastRetries...)
		for range 2 {
			resp, err := c.Do(post(t, t.Context(), srv.URL, "{}"))
			require.NoError(t, err)
			resp.Body.Close()
		}
		require.Len(t, keys, 4)
		assert.Len(t, keys[0], 26, "a key from NewKey")
		assert.Equal(t, []string{keys[0], keys[0], keys[0]}, keys[:3], "one key across the retries")
		assert.NotEqual(t, keys[0], keys[3], "a new logical call gets a new key")
	})
	t.Run("a bad key fails before anything is sent", func(t *testing.T) {
		srv, n := countingServer(t)
		c, _ := idempotency.NewClient(srv.Client())
		req := post(t, t.Context(), srv.URL, "{}")
		req.Header.Set(idempotency.HeaderKey, strings.Repeat("k", 300))
		_, err := c.Do(req)
		require.ErrorIs(t, err, retry.ErrInvalid)
		assert.Zero(t, n.Load())
		_, err = c.Do(nil)
		require.ErrorIs(t, err, retry.ErrInvalid)
	})
}

func TestTheZeroTransportSendsTheContextsKey(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get(idempotency.HeaderKey) }))
	defer srv.Close()
	ctx, _ := retry.WithIdempotencyKey(t.Context(), "k-zero")
	resp, err := (&idempotency.Transport{}).RoundTrip(post(t, ctx, srv.URL, ""))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "k-zero", got)
}

func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	h, n := hits(http.NotFoundHandler())
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, n
}

func TestClientAndTransportRejectBadOptions(t *testing.T) {
	_, err := idempotency.NewClient(nil, retry.WithMaxAttempts(0))
	require.ErrorIs(t, err, retry.ErrInvalid)
	_, err = idempotency.NewTransport(nil, idempotency.WithLease(time.Second))
	require.ErrorIs(t, err, retry.ErrInvalid)
	assert.Contains(t, err.Error(), "applies to Do, Once, Middleware only")
	_, err = idempotency.NewTransport(nil, idempotency.WithPollInterval(0))
	require.ErrorIs(t, err, retry.ErrInvalid)
}
