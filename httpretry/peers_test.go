package httpretry_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cases from the tests of go-retryablehttp (client_test.go), net/http
// (client_test.go, transport_test.go) and failsafe-go's failsafehttp
// (http_test.go, client_test.go): their facts, in this package's terms.
// Where this package disagrees on purpose, the test says so and doc.go
// documents the choice.

// retryablehttp TestParseRetryAfterHeader and TestClient_DefaultBackoff: a
// 429 or 503 waits what Retry-After says, in seconds or as an HTTP-date.
func TestRetryAfterFormsFromRetryablehttp(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		values  []string // Retry-After fields; "+2s" is a date 2s from now
		minWait time.Duration
		maxWait time.Duration
	}{
		{"429 in seconds", 429, []string{"2"}, 2 * time.Second, 2200 * ms},
		{"429 as a date", 429, []string{"+2s"}, 2 * time.Second, 2200 * ms},
		{"503 in seconds", 503, []string{"2"}, 2 * time.Second, 2200 * ms},
		{"503 as a date", 503, []string{"+2s"}, 2 * time.Second, 2200 * ms},
		{"two fields: the first counts", 503, []string{"2", "3"}, 2 * time.Second, 2200 * ms},
		{"a date in the past: no server wait, the backoff", 503, []string{"-60s"}, 10 * ms, 10 * ms},
		{"a negative number is ignored: the backoff", 503, []string{"-2"}, 10 * ms, 10 * ms},
		{"garbage is ignored: the backoff", 503, []string{"badbadbad"}, 10 * ms, 10 * ms},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.Header{}
				for _, v := range tt.values {
					if d, err := time.ParseDuration(v); err == nil && (v[0] == '+' || strings.HasSuffix(v, "s") && v[0] == '-') {
						v = time.Now().Add(d).UTC().Format(http.TimeFormat)
					}
					h.Add("Retry-After", v)
				}
				rt := &fakeRT{script: []reply{{status: tt.status, header: h}, {status: 200}}}
				tr := transport(t, exact(t, 10*ms), httpretry.WithBase(rt))
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
				gaps := rt.gaps()
				require.Len(t, gaps, 1)
				assert.GreaterOrEqual(t, gaps[0], tt.minWait)
				assert.LessOrEqual(t, gaps[0], tt.maxWait)
			})
		})
	}
}

// retryablehttp TestClient_Do: every body kind is rewound for each attempt.
// Where retryablehttp reads a plain io.Reader into memory to resend it,
// httpretry sends a body without GetBody once (documented): it never buffers
// a body the caller may have made a stream on purpose.
func TestEveryRewindableBodyIsSentWholeOnEachAttempt(t *testing.T) {
	for name, tt := range map[string]struct {
		body  io.Reader
		sends int
	}{
		"bytes.Reader":   {bytes.NewReader([]byte("hello")), 2},
		"bytes.Buffer":   {bytes.NewBufferString("hello"), 2},
		"strings.Reader": {strings.NewReader("hello"), 2},
		"an io.Reader":   {io.MultiReader(strings.NewReader("hello")), 1},
	} {
		t.Run(name, func(t *testing.T) {
			rt := &fakeRT{script: []reply{{status: 500}, {status: 200}}}
			req, _ := http.NewRequest(http.MethodPut, "http://api.test/v1/foo", tt.body)
			req.Header.Set("Foo", "bar")
			resp, err := transport(t, exact(t, 0), httpretry.WithBase(rt)).RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			sent := rt.requests()
			require.Len(t, sent, tt.sends)
			for _, s := range sent {
				assert.Equal(t, "hello", s.body)
			}
		})
	}
}

// drainDefault is the documented default of WithDrainLimit: 64 KiB.
const drainDefault = 64 << 10

// retryablehttp drainBody, net/http TestTransportPersistConnReadLoopEOF and
// friends: a discarded error body is read (up to a limit) and closed, so the
// connection is reused; a larger one costs its connection.
func TestDiscardedBodiesAreDrainedUpToTheLimit(t *testing.T) {
	for _, tt := range []struct {
		name      string
		body      int
		limit     int64
		wantConns int64
	}{
		{"a small body: one connection for every attempt", 1000, drainDefault, 1},
		{"a body over the limit: its connection is closed", 100_000, drainDefault, 3},
		{"a drain limit of 0: close at once", 1000, 0, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, reply{status: 503, body: strings.Repeat("x", tt.body)}, reply{status: 503, body: strings.Repeat("x", tt.body)}, reply{status: 200})
			c := client(t, quick(t), httpretry.WithBase(base(t)), httpretry.WithDrainLimit(tt.limit))
			resp, err := c.Get(srv.URL)
			require.NoError(t, err)
			readAll(t, resp)
			assert.Equal(t, tt.wantConns, srv.conns.Load())
		})
	}
}

// retryablehttp TestClient_DefaultRetryPolicy_redirects, failsafehttp
// TestRetryPolicyWithRedirects: a redirect loop is the http.Client's error
// ("stopped after 10 redirects"), never retried; each hop is one attempt.
func TestARedirectLoopIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/", http.StatusFound)
	}))
	defer srv.Close()
	rec := &recorder{}
	c := client(t, quick(t, retry.WithObserver(rec)), httpretry.WithBase(base(t)))
	_, err := c.Get(srv.URL)
	assert.ErrorContains(t, err, "stopped after 10 redirects")
	assert.Equal(t, int32(10), hits.Load(), "ten hops, one request each")
	done := rec.of(observe.AttemptDone)
	require.Len(t, done, 10)
	for _, e := range done {
		assert.Equal(t, 1, e.Attempt)
		assert.NoError(t, e.Err, "a redirect is an answer, not a failure")
	}
}

// retryablehttp TestClient_RedirectWithBody, net/http TestClientRedirect307:
// a 307 resends the body to the target (http.Client rewinds it with
// GetBody); the target is retried on its own, with the call's key.
func TestA307ResendsTheBodyAndTheTargetIsRetried(t *testing.T) {
	var target atomic.Int32
	var bodies, keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", "/target")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies, keys = append(bodies, string(b)), append(keys, r.Header.Get(idempotency.HeaderKey))
		if target.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	req := post(t, t.Context(), srv.URL+"/redirect", `{"foo":"bar"}`)
	req.Header.Set(idempotency.HeaderKey, "k-307")
	req, res := asking(t, req)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, []string{`{"foo":"bar"}`, `{"foo":"bar"}`}, bodies)
	assert.Equal(t, []string{"k-307", "k-307"}, keys)
	assert.Equal(t, 2, res.Attempts, "the result is the last hop's")
}

// retryablehttp TestClient_DefaultRetryPolicy_TLS, _invalidscheme,
// _invalidheadername, _invalidheadervalue; failsafehttp
// TestRetryPolicyWithUnsupportedProtocolScheme: what can never succeed is
// sent once. The classification is package classify's.
func TestWhatCanNeverSucceedIsNotRetried(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail on purpose
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	for _, tt := range []struct {
		name string
		req  func() *http.Request
	}{
		{"an unknown certificate authority", func() *http.Request { r, _ := http.NewRequest("GET", tlsSrv.URL, nil); return r }},
		{"an unsupported scheme", func() *http.Request { r, _ := http.NewRequest("GET", "ftp://127.0.0.1/x", nil); return r }},
		{"an invalid header name", func() *http.Request {
			r, _ := http.NewRequest("GET", tlsSrv.URL, nil)
			r.Header.Set("Header-Name-\033", "v")
			return r
		}},
		{"an invalid header value", func() *http.Request {
			r, _ := http.NewRequest("GET", tlsSrv.URL, nil)
			r.Header.Set("Header-Name", "bad value \033")
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			tr := base(t)
			tr.TLSClientConfig = &tls.Config{}
			counted := roundTripFunc(func(r *http.Request) (*http.Response, error) { n.Add(1); return tr.RoundTrip(r) })
			_, err := transport(t, quick(t), httpretry.WithBase(counted)).RoundTrip(tt.req())
			require.Error(t, err)
			var rerr *retry.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, classify.Stop, classify.Default(rerr.Last).Verdict, "%v", rerr.Last)
			assert.Equal(t, int32(1), n.Load())
		})
	}
}

// failsafehttp TestClientCancelWithContext: the request's context ending
// mid-attempt ends the call at once with context.Canceled, one attempt made.
func TestCancellingMidAttemptEndsTheCallAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &slowRT{headerDelay: []time.Duration{time.Second}}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*ms, cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		start := time.Now()
		_, err := transport(t, defaults(t), httpretry.WithBase(rt)).RoundTrip(req)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 50*ms, time.Since(start))
		assert.Len(t, rt.ctxs, 1)
	})
}

// failsafehttp TestRetryPolicyWith429 and TestRetryPolicyWith429ThenSuccess.
func TestA429IsRetriedAndTheLastOneReturned(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script []reply
		status int
		body   string
	}{
		{"429 every time: three attempts, the last 429 whole", []reply{{status: 429, body: "foo"}}, 429, "foo"},
		{"429 twice, then 200", []reply{{status: 429}, {status: 429}, {status: 200, body: "foo"}}, 200, "foo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := &fakeRT{script: tt.script}
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			resp, err := transport(t, exact(t, 0), httpretry.WithBase(rt)).RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.body, readAll(t, resp))
			assert.Equal(t, 3, rt.count())
		})
	}
}

// net/http's RoundTripper contract (TestTransportClosesRequestBody, and the
// doc: "RoundTrip must always close the body, including on errors"): the
// request's body is closed on every path, sent or not.
func TestTheRequestBodyIsAlwaysClosed(t *testing.T) {
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	require.NoError(t, err)
	cd.Observe(t.Context(), breaker.Key{Target: "cooling.test"}, errors.New("503"),
		classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: time.Hour}, nil)
	open, err := breaker.New(breaker.Config{ReadyToTrip: func(breaker.Counts) bool { return true }})
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		url    string
		script []reply
		reset  bool // every answer lost to a reset
		opts   []retry.Option
	}{
		{"sent and answered", "http://api.test/x", []reply{{status: 200}}, false, nil},
		{"sent, retried, answered", "http://api.test/x", []reply{{status: 503}, {status: 200}}, false, nil},
		{"sent and failed", "http://api.test/x", []reply{{status: 200}}, true, nil},
		{"not sent: cooling down", "http://cooling.test/x", []reply{{status: 200}}, false, []retry.Option{retry.WithCooldowns(cd)}},
		{"not sent: the breaker is open", "http://api.test/x", []reply{{status: 503}}, false, []retry.Option{retry.WithBreakers(open)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rt http.RoundTripper = &fakeRT{script: tt.script}
			if tt.reset {
				rt = resets(t).Transport(rt)
			}
			tr := transport(t, exact(t, 0, tt.opts...), httpretry.WithBase(rt))
			for range 2 { // the second call finds the breaker open
				body := &closeCounter{Reader: strings.NewReader("x")}
				req, _ := http.NewRequest(http.MethodPut, tt.url, body)
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
				resp, _ := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				assert.Equal(t, 1, body.closed)
			}
		})
	}
}

// retryablehttp TestClient_Do_fails (default_retry_policy_url_with_basic_auth):
// a URL's user information never reaches an error or a log.
func TestAURLsPasswordIsNeverInAnError(t *testing.T) {
	srv := newServer(t, reply{status: 500})
	var logs logBuffer
	c := client(t, quick(t, retry.WithLogger(logger(&logs))), httpretry.WithBase(base(t)))
	u := strings.Replace(srv.URL, "http://", "http://user:pasten@", 1)
	req, res := asking(t, post(t, t.Context(), u, "x"))
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.NotContains(t, res.Err.Error(), "pasten")
	assert.Contains(t, res.Err.Error(), "POST "+srv.URL)
	assert.NotContains(t, logs.String(), "pasten")
}
