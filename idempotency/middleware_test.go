package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orders is the handler behind the middleware in these tests: it counts its
// runs and answers 201 with the order number, or the status asked for in the
// query. A request with ?block=1 waits for unblock.
type orders struct {
	runs    atomic.Int32
	started chan struct{}
	unblock chan struct{}
}

func newOrders() *orders {
	return &orders{started: make(chan struct{}, 16), unblock: make(chan struct{})}
}

func (o *orders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := o.runs.Add(1)
	body, _ := io.ReadAll(r.Body)
	o.started <- struct{}{}
	if r.URL.Query().Get("block") != "" {
		<-o.unblock
	}
	if r.URL.Query().Get("panic") != "" {
		panic(http.ErrAbortHandler)
	}
	if _, ok := w.(http.Flusher); !ok {
		http.Error(w, "the middleware hid http.Flusher", http.StatusInternalServerError)
		return
	}
	status := http.StatusCreated
	if s := r.URL.Query().Get("status"); s != "" {
		fmt.Sscan(s, &status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Order", fmt.Sprint(n))
	w.WriteHeader(status)
	size := 0
	fmt.Sscan(r.URL.Query().Get("size"), &size)
	fmt.Fprintf(w, `{"order":%d,"request":%q,"pad":%q}`, n, body, strings.Repeat("p", size))
}

type server struct {
	*httptest.Server
	orders *orders
	store  idempotency.Store
}

func newServer(t *testing.T, store idempotency.Store, opts ...idempotency.Option) *server {
	t.Helper()
	if store == nil {
		store = newMemory(t)
	}
	guard, err := idempotency.Middleware(store, opts...)
	require.NoError(t, err)
	o := newOrders()
	srv := httptest.NewServer(guard(o))
	t.Cleanup(srv.Close)
	return &server{Server: srv, orders: o, store: store}
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) problem(t *testing.T) map[string]any {
	t.Helper()
	assert.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &p), r.body)
	assert.EqualValues(t, r.status, p["status"])
	assert.Equal(t, http.StatusText(r.status), p["title"])
	assert.NotEmpty(t, p["type"])
	return p
}

// send sends a request and reads the response; it may be called from any
// goroutine (a failure is reported, and the reply is empty).
func (s *server) send(t *testing.T, method, path string, key any, body string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return reply{}
	}
	switch k := key.(type) {
	case string:
		req.Header.Set(idempotency.HeaderKey, k)
	case []string:
		req.Header[idempotency.HeaderKey] = k
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func TestMiddlewareAnswersEveryCase(t *testing.T) {
	t.Run("a request without a key is refused with 400, and the handler does not run", func(t *testing.T) {
		s := newServer(t, nil)
		r := s.send(t, "POST", "/orders", nil, `{}`)
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "idempotency-key-missing", r.problem(t)["kind"])
		assert.Zero(t, s.orders.runs.Load())
	})
	for _, bad := range []struct {
		name string
		key  any
	}{
		{"a key of 256 characters", strings.Repeat("k", 256)},
		{"a key sent twice", []string{"a", "b"}},
		{"a quoted key with text after it", `"abc";x`},
		{"a quoted key with a bad escape", `"a\bc"`},
		{"an unterminated quoted key", `"abc`},
	} {
		t.Run(bad.name+" is refused with 400", func(t *testing.T) {
			s := newServer(t, nil)
			r := s.send(t, "POST", "/orders", bad.key, `{}`)
			require.Equal(t, http.StatusBadRequest, r.status, r.body)
			assert.Equal(t, "idempotency-key-invalid", r.problem(t)["kind"])
			assert.Zero(t, s.orders.runs.Load())
		})
	}
	t.Run("a repeat of a completed request gets the stored status, headers and body, marked as a replay", func(t *testing.T) {
		s := newServer(t, nil)
		first := s.send(t, "POST", "/orders", "k1", `{"item":"book"}`)
		require.Equal(t, http.StatusCreated, first.status)
		assert.Empty(t, first.header.Get(headerReplay))
		again := s.send(t, "POST", "/orders", `"k1"`, `{"item":"book"}`) // the same key, quoted
		require.Equal(t, http.StatusCreated, again.status)
		assert.Equal(t, first.body, again.body)
		assert.Equal(t, "1", again.header.Get("X-Order"))
		assert.Equal(t, "application/json", again.header.Get("Content-Type"))
		assert.Equal(t, "true", again.header.Get(headerReplay))
		assert.NotEmpty(t, again.header.Get(headerReplayOf))
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("a request while the first with its key is in flight gets 409 with Retry-After", func(t *testing.T) {
		s := newServer(t, nil)
		done := make(chan reply)
		go func() { done <- s.send(t, "POST", "/orders?block=1", "k1", `{}`) }()
		<-s.orders.started
		r := s.send(t, "POST", "/orders?block=1", "k1", `{}`)
		require.Equal(t, http.StatusConflict, r.status)
		assert.Equal(t, "idempotency-in-progress", r.problem(t)["kind"])
		assert.Equal(t, "1", r.header.Get("Retry-After"))
		close(s.orders.unblock)
		require.Equal(t, http.StatusCreated, (<-done).status)
		assert.Equal(t, "true", s.send(t, "POST", "/orders?block=1", "k1", `{}`).header.Get(headerReplay))
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("the same key with a different payload gets 422", func(t *testing.T) {
		s := newServer(t, nil)
		require.Equal(t, http.StatusCreated, s.send(t, "POST", "/orders", "k1", `{"item":"book"}`).status)
		r := s.send(t, "POST", "/orders", "k1", `{"item":"pen"}`)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Equal(t, "idempotency-key-reuse", r.problem(t)["kind"])
		assert.Equal(t, http.StatusUnprocessableEntity, s.send(t, "POST", "/orders?x=1", "k1", `{"item":"book"}`).status, "the query is part of the request")
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("a response over the retention cap is served once, then 409 not retained", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithMaxResultSize(1000))
		first := s.send(t, "POST", "/orders?size=2000", "k1", `{}`)
		require.Equal(t, http.StatusCreated, first.status)
		assert.Greater(t, len(first.body), 2000, "the first client gets the whole response")
		r := s.send(t, "POST", "/orders?size=2000", "k1", `{}`)
		require.Equal(t, http.StatusConflict, r.status)
		assert.Equal(t, "idempotency-response-not-retained", r.problem(t)["kind"])
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("a 5xx releases the key, so the retry runs the handler again", func(t *testing.T) {
		s := newServer(t, nil)
		require.Equal(t, http.StatusServiceUnavailable, s.send(t, "POST", "/orders?status=503", "k1", `{}`).status)
		r := s.send(t, "POST", "/orders?status=503", "k1", `{}`)
		require.Equal(t, http.StatusServiceUnavailable, r.status)
		assert.Empty(t, r.header.Get(headerReplay))
		assert.Equal(t, int32(2), s.orders.runs.Load())
	})
	t.Run("with KeepFailures a 5xx is stored and replayed", func(t *testing.T) {
		s := newServer(t, nil, idempotency.KeepFailures())
		first := s.send(t, "POST", "/orders?status=500", "k1", `{}`)
		again := s.send(t, "POST", "/orders?status=500", "k1", `{}`)
		require.Equal(t, http.StatusInternalServerError, again.status)
		assert.Equal(t, first.body, again.body)
		assert.Equal(t, "true", again.header.Get(headerReplay))
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("a 4xx is stored and replayed", func(t *testing.T) {
		s := newServer(t, nil)
		s.send(t, "POST", "/orders?status=400", "k1", `{}`)
		r := s.send(t, "POST", "/orders?status=400", "k1", `{}`)
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "true", r.header.Get(headerReplay))
		assert.Equal(t, int32(1), s.orders.runs.Load())
	})
	t.Run("a body over the limit gets 413", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithMaxRequestBody(10))
		r := s.send(t, "POST", "/orders", "k1", strings.Repeat("x", 11))
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		assert.Equal(t, "idempotency-request-too-large", r.problem(t)["kind"])
		assert.Zero(t, s.orders.runs.Load())
	})
	t.Run("a failing store gets 503 with Retry-After, and the handler does not run", func(t *testing.T) {
		s := newServer(t, &faulty{Store: newMemory(t), claimErr: errors.New("connection refused")})
		r := s.send(t, "POST", "/orders", "k1", `{}`)
		require.Equal(t, http.StatusServiceUnavailable, r.status)
		assert.Equal(t, "idempotency-store-unavailable", r.problem(t)["kind"])
		assert.Equal(t, "1", r.header.Get("Retry-After"))
		assert.Zero(t, s.orders.runs.Load())
	})
	t.Run("a handler that panics releases the key", func(t *testing.T) {
		s := newServer(t, nil)
		req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL+"/orders?panic=1", strings.NewReader("{}"))
		req.Header.Set(idempotency.HeaderKey, "k1")
		_, err := s.Client().Do(req)
		require.Error(t, err, "the server aborted the response")
		assert.Equal(t, http.StatusCreated, s.send(t, "POST", "/orders?panic=", "k1", `{}`).status, "another request with the key runs")
	})
}

func TestMiddlewareReleasesTheKeyOfAHandlerThatGaveUp(t *testing.T) {
	guard, err := idempotency.Middleware(newMemory(t))
	require.NoError(t, err)
	var runs atomic.Int32
	var cancel context.CancelFunc
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			cancel() // the client goes away, and the handler returns without answering
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	serve := func(ctx context.Context) int {
		req := httptest.NewRequestWithContext(ctx, "POST", "/orders", strings.NewReader("{}"))
		req.Header.Set(idempotency.HeaderKey, "k1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	cancel = stop
	serve(ctx)
	assert.Equal(t, http.StatusCreated, serve(t.Context()), "the retry runs the handler")
	assert.Equal(t, int32(2), runs.Load())
}

func TestMiddlewareOptions(t *testing.T) {
	t.Run("methods it does not guard pass through without a key", func(t *testing.T) {
		s := newServer(t, nil)
		assert.Equal(t, http.StatusCreated, s.send(t, "GET", "/orders", nil, "").status)
		assert.Equal(t, http.StatusCreated, s.send(t, "PUT", "/orders", nil, "").status)
	})
	t.Run("WithMethods chooses the guarded methods", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithMethods("PUT"))
		assert.Equal(t, http.StatusBadRequest, s.send(t, "PUT", "/orders", nil, "").status)
		assert.Equal(t, http.StatusCreated, s.send(t, "POST", "/orders", nil, "").status)
	})
	t.Run("KeyOptional lets requests without a key through, unguarded", func(t *testing.T) {
		s := newServer(t, nil, idempotency.KeyOptional())
		s.send(t, "POST", "/orders", nil, "{}")
		s.send(t, "POST", "/orders", nil, "{}")
		assert.Equal(t, int32(2), s.orders.runs.Load())
	})
	t.Run("WithScope keeps one client's keys apart from another's", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithScope(func(r *http.Request) string { return r.URL.Query().Get("account") }))
		a := s.send(t, "POST", "/orders?account=a", "k1", "")
		b := s.send(t, "POST", "/orders?account=b", "k1", "")
		assert.NotEqual(t, a.body, b.body)
		assert.Empty(t, b.header.Get(headerReplay), "account b cannot replay a's response")
	})
	t.Run("WithFingerprint decides what counts as the same request", func(t *testing.T) {
		bodyOnly := func(_ *http.Request, body []byte) idempotency.Fingerprint { return idempotency.NewFingerprint(body) }
		s := newServer(t, nil, idempotency.WithFingerprint(bodyOnly))
		s.send(t, "POST", "/orders?trace=1", "k1", "{}")
		assert.Equal(t, "true", s.send(t, "POST", "/orders?trace=2", "k1", "{}").header.Get(headerReplay))
	})
	t.Run("WithRetryAfter sets the wait sent with a 409", func(t *testing.T) {
		s := newServer(t, nil, idempotency.WithRetryAfter(3*time.Second))
		done := make(chan reply)
		go func() { done <- s.send(t, "POST", "/orders?block=1", "k1", "") }()
		<-s.orders.started
		assert.Equal(t, "3", s.send(t, "POST", "/orders?block=1", "k1", "").header.Get("Retry-After"))
		close(s.orders.unblock)
		<-done
	})
}

func opts(o ...idempotency.Option) []idempotency.Option { return o }

func TestMiddlewareRejectsBadOptions(t *testing.T) {
	s := newMemory(t)
	tests := []struct {
		name  string
		store idempotency.Store
		opts  []idempotency.Option
		want  string
	}{
		{"a nil store", nil, nil, "idempotency.Middleware(<nil>): the store must not be nil"},
		{"no methods", s, opts(idempotency.WithMethods()), "idempotency.WithMethods([]): needs at least one method"},
		{"a method with a space", s, opts(idempotency.WithMethods("PO ST")), "a method must be a non-empty token"},
		{"a negative body limit", s, opts(idempotency.WithMaxRequestBody(-1)), "idempotency.WithMaxRequestBody(-1): must not be negative"},
		{"a Retry-After in milliseconds", s, opts(idempotency.WithRetryAfter(1500 * time.Millisecond)), "idempotency.WithRetryAfter(1.5s): must be a whole number of seconds"},
		{"a nil fingerprint", s, opts(idempotency.WithFingerprint(nil)), "idempotency.WithFingerprint(<nil>): must not be nil"},
		{"a nil scope", s, opts(idempotency.WithScope(nil)), "idempotency.WithScope(<nil>): must not be nil"},
		{"a nil observer", s, opts(idempotency.WithObserver(nil)), "idempotency.WithObserver(<nil>): must not be nil"},
		{"an empty cookie name", s, opts(idempotency.WithScopeCookies("session", "")), "idempotency.WithScopeCookies([session ]): a cookie name must be a non-empty token"},
		{"scope cookies with a scope of one's own", s, opts(idempotency.WithScopeCookies("session"), idempotency.WithScope(func(*http.Request) string { return "" })),
			"idempotency.WithScopeCookies([session]): has no effect with WithScope"},
		{"a header name with a colon", s, opts(idempotency.WithUnstoredHeaders("Set-Cookie:")), "a header name must be a non-empty token"},
		{"a shared option's bad value", s, opts(idempotency.WithLease(0)), "idempotency.WithLease(0s): must be at least 1ms"},
		{"an option of Do and Once", s, opts(idempotency.WithMaxWait(time.Second)), "idempotency.WithMaxWait(1s): configures Do and Once, not Middleware"},
		{"a nil option", s, opts(nil), "idempotency.Option(<nil>): must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := idempotency.Middleware(tt.store, tt.opts...)
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
