package httpretry_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/jitter"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// reply is one scripted answer of a test server.
type reply struct {
	status int
	header http.Header
	body   string
}

// seen is what the server received.
type seen struct {
	method, path, rawQuery, key, body string
}

// server answers with its script in turn (the last reply repeats), and
// records the requests and the connections it accepted.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	script   []reply
	requests []seen
	conns    atomic.Int64
}

func newServer(t *testing.T, script ...reply) *server {
	t.Helper()
	s := &server{script: script}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get(idempotency.HeaderKey), string(body)})
	rep := s.script[min(len(s.requests), len(s.script))-1]
	s.mu.Unlock()
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *server) seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.requests...)
}

// scripted is a chaos scenario for a transport's base: the n-th request
// suffers script[n-1] (a zero Fault lets it through), the rest nothing.
func scripted(t *testing.T, script ...chaos.Fault) *chaos.Scenario {
	t.Helper()
	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{{Script: script}}})
	require.NoError(t, err)
	return s
}

// resets is a chaos scenario that resets every connection after the server
// processed the request: the answer is lost.
func resets(t *testing.T) *chaos.Scenario {
	t.Helper()
	s, err := chaos.New(chaos.Config{Rules: []chaos.Rule{{Fault: chaos.ResetAfterSend()}}})
	require.NoError(t, err)
	return s
}

func retryAfter(v string) http.Header { return http.Header{"Retry-After": {v}} }

// quick is a Retrier with exact 1ms waits: real HTTP, short tests.
func quick(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{retry.WithBackoff(backoff.Constant(ms)), retry.WithJitter(jitter.None{})}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

// defaults is a Retrier with the default policy.
func defaults(t *testing.T) *retry.Retrier {
	t.Helper()
	r, err := retry.New()
	require.NoError(t, err)
	return r
}

func client(t *testing.T, r *retry.Retrier, opts ...httpretry.Option) *http.Client {
	t.Helper()
	c, err := httpretry.NewClient(r, opts...)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// base is a transport of its own per test, so that idle connections are
// closed at the end (goleak).
func base(t *testing.T) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// logBuffer captures a logger's output, safely for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// fakeRT answers from a script without a network, for tests on the fake
// clock; it records when each request came, and what it carried.
type fakeRT struct {
	mu     sync.Mutex
	script []reply
	at     []time.Time
	sent   []seen
	closed atomic.Int64 // bodies of responses closed
}

func (f *fakeRT) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	f.mu.Lock()
	f.at = append(f.at, time.Now())
	f.sent = append(f.sent, seen{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Get(idempotency.HeaderKey), string(body)})
	rep := f.script[min(len(f.at), len(f.script))-1]
	f.mu.Unlock()
	h := rep.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: rep.status, Header: h, Request: req,
		Body: &trackedBody{Reader: strings.NewReader(rep.body), closed: &f.closed}}, nil
}

func (f *fakeRT) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(f.at); i++ {
		out = append(out, f.at[i].Sub(f.at[i-1]))
	}
	return out
}

type trackedBody struct {
	io.Reader
	closed *atomic.Int64
}

func (b *trackedBody) Close() error { b.closed.Add(1); return nil }

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }

func (f *fakeRT) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.sent...)
}

func (f *fakeRT) count() int { return len(f.requests()) }

// problem is an idempotency answer as the middleware sends it: a problem
// document whose "kind" is one of idempotency's Kind… constants.
func problem(status int, kind, retryAfter string) reply {
	h := http.Header{"Content-Type": {"application/problem+json"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return reply{status: status, header: h,
		body: `{"type":"about:blank","status":` + strconv.Itoa(status) + `,"kind":"` + kind + `"}`}
}

// exact is a Retrier with exact backoff waits: constant d, no jitter. (A
// server's Retry-After is still waited plus up to a tenth, by design.)
func exact(t *testing.T, d time.Duration, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{retry.WithBackoff(backoff.Constant(d)), retry.WithJitter(jitter.None{}), retry.WithJitterSource(jitter.NewSeeded(1))}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

func transport(t *testing.T, r *retry.Retrier, opts ...httpretry.Option) *httpretry.Transport {
	t.Helper()
	tr, err := httpretry.New(r, opts...)
	require.NoError(t, err)
	return tr
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	return req
}

// asking gives req a context that asks the transport for the call's Result.
func asking(t *testing.T, req *http.Request) (*http.Request, *httpretry.Result) {
	t.Helper()
	res := new(httpretry.Result)
	ctx, err := httpretry.WithResult(req.Context(), res)
	require.NoError(t, err)
	return req.WithContext(ctx), res
}

// get is a GET of url that asks for its Result.
func get(t *testing.T, url string) (*http.Request, *httpretry.Result) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return asking(t, req)
}
