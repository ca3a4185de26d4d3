package httpretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAGetIsRetriedUntilItSucceeds(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{status: 502}, reply{status: 200, body: "hello"})
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	req, res := get(t, srv.URL+"/greeting")
	resp, err := c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "hello", readAll(t, resp))
	assert.Equal(t, 3, srv.count())
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, 2*ms, res.Waited)
	assert.NoError(t, res.Err)
	assert.Equal(t, int64(1), srv.conns.Load(), "drained error bodies let one connection serve every attempt")
}

func TestTheFinalErrorResponseIsReturnedWhole(t *testing.T) {
	body := strings.Repeat("x", 100<<10) // larger than the drain limit
	srv := newServer(t, reply{status: 503, body: body})
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	req, res := get(t, srv.URL)
	resp, err := c.Do(req)
	require.NoError(t, err, "an error status is a response, not a transport error")
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, body, readAll(t, resp), "the answer's body is intact")
	assert.Equal(t, 3, res.Attempts)
	assert.ErrorIs(t, res.Err, retry.ErrExhausted)
	assert.Equal(t, 3, srv.count())
}

func TestAPermanentStatusIsNotRetried(t *testing.T) {
	srv := newServer(t, reply{status: 404, body: "no such thing"})
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	req, res := get(t, srv.URL)
	resp, err := c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "no such thing", readAll(t, resp))
	assert.Equal(t, 1, srv.count())
	assert.ErrorIs(t, res.Err, retry.ErrPermanent)
}

func TestAPostWithoutAKeyIsSentOnce(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, reply{status: 503}, reply{status: 200})
	c := client(t, quick(t, retry.WithObserver(rec)), httpretry.WithBase(base(t)))
	req, res := asking(t, post(t, t.Context(), srv.URL+"/orders", `{"sku":1}`))
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, 1, srv.count(), "never repeated")
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, res.Err, &nr)
	assert.Contains(t, res.Err.Error(), "POST "+srv.URL+"/orders sent once, not retried: without an Idempotency-Key a POST is not safe to repeat")
	assert.Equal(t, "without an Idempotency-Key a POST is not safe to repeat", nr.Reason)
	assert.ErrorIs(t, res.Err, retry.ErrExhausted, "the call of one attempt it was")
	assert.Len(t, rec.of(observe.AttemptDone), 1, "the Retrier's observer heard its one attempt")
	assert.Len(t, rec.of(observe.GaveUp), 1)
}

func TestAPostWithoutAKeyThatCannotConnectSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	_, err = c.Post("http://"+addr+"/orders", "text/plain", strings.NewReader("x"))
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, err, &nr)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestAPostWithAKeyIsRetriedWithTheSameKeyAndBody(t *testing.T) {
	// 503; then 201, lost to a reset after the server processed it; then 201.
	srv := newServer(t, reply{status: 503}, reply{status: 201})
	lost := scripted(t, chaos.Fault{}, chaos.ResetAfterSend())
	c := client(t, quick(t), httpretry.WithBase(lost.Transport(base(t))))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":1}`))
	require.NoError(t, err)
	req.Header.Set(idempotency.HeaderKey, "order-4417")
	req, res := asking(t, req)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, int64(1), lost.Stats().Lost)
	got := srv.seen()
	require.Len(t, got, 3)
	for _, s := range got {
		assert.Equal(t, "order-4417", s.key, "one key per logical call, on every attempt")
		assert.Equal(t, `{"sku":1}`, s.body, "the body is rewound for every attempt")
	}
}

func TestABodyThatCannotBeRewoundIsNotRetried(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{status: 200})
	c := client(t, quick(t), httpretry.WithBase(base(t)))
	req, err := http.NewRequest(http.MethodPut, srv.URL, io.NopCloser(strings.NewReader("data")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	req, res := asking(t, req)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 1, srv.count())
	assert.ErrorContains(t, res.Err, "its body cannot be rewound (no GetBody)")
}

func TestAKeyLongerThan255CharactersIsNotSent(t *testing.T) {
	srv := newServer(t, reply{status: 200})
	c := client(t, defaults(t), httpretry.WithBase(base(t)))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set(idempotency.HeaderKey, strings.Repeat("k", 256))
	_, err := c.Do(req)
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.ErrorContains(t, err, "256 characters: the limit is 255")
	assert.Zero(t, srv.count(), "checked before sending")
}

func TestTheFinalTransportErrorSaysHowManyAttemptsAndWhy(t *testing.T) {
	srv := newServer(t, reply{status: 200})
	c := client(t, quick(t), httpretry.WithBase(resets(t).Transport(base(t))))
	_, err := c.Get(srv.URL)
	var rerr *retry.Error
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, 3, rerr.Attempts)
	assert.Equal(t, 3, srv.count())
	assert.ErrorIs(t, err, retry.ErrExhausted)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	assert.Contains(t, err.Error(), "retry: attempts exhausted after 3 attempt(s)")
}

func TestRetryAfterIsHonouredOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		rt := &fakeRT{script: []reply{
			{status: 429, header: retryAfter("2")},
			{status: 503, header: retryAfter(now.Add(5 * time.Second).UTC().Format(http.TimeFormat))},
			{status: 200},
		}}
		c := client(t, quick(t), httpretry.WithBase(rt))
		resp, err := c.Get("http://api.example/x")
		require.NoError(t, err)
		assert.Equal(t, int64(2), rt.closed.Load(), "both discarded responses were closed")
		resp.Body.Close()
		gaps := rt.gaps()
		require.Len(t, gaps, 2)
		assert.GreaterOrEqual(t, gaps[0], 2*time.Second, "delta-seconds")
		assert.Less(t, gaps[0], 2200*ms)
		assert.GreaterOrEqual(t, gaps[0]+gaps[1], 5*time.Second, "an HTTP-date: not before the time the server gave")
	})
}

func TestARetryAfterLongerThanTheMaxWaitIsReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 429, header: retryAfter("120"), body: "slow down"}}}
		c := client(t, quick(t), httpretry.WithBase(rt))
		start := time.Now()
		req, res := get(t, "http://api.example/x")
		resp, err := c.Do(req)
		require.NoError(t, err)
		assert.Zero(t, time.Since(start), "not slept")
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "slow down", readAll(t, resp))
		var rerr *retry.Error
		require.ErrorAs(t, res.Err, &rerr)
		assert.Equal(t, 2*time.Minute, rerr.RetryAfter, "the caller can schedule it")
	})
}

func TestTheRequestDeadlineIsRespected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503, header: retryAfter("10")}}}
		c := client(t, quick(t), httpretry.WithBase(rt))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/x", nil)
		req, res := asking(t, req)
		start := time.Now()
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Zero(t, time.Since(start), "a 10s wait cannot fit in 5s: returned at once")
		assert.ErrorIs(t, res.Err, retry.ErrDeadline)
	})
}

// model sends a GET for model to url through c.
func model(t *testing.T, c *http.Client, url, model string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("X-Model", model)
	return c.Do(req)
}

func byHeader(r *http.Request) string { return r.Header.Get("X-Model") }

func TestTheRetriersBreakersAreKeptPerHostAndModel(t *testing.T) {
	srv := newServer(t, reply{status: 503})
	b, err := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 }, Timeout: time.Minute})
	require.NoError(t, err)
	c := client(t, quick(t, retry.WithMaxAttempts(1), retry.WithBreakers(b)), httpretry.WithBase(base(t)), httpretry.WithModel(byHeader))
	for range 2 {
		resp, err := model(t, c, srv.URL, "qwen")
		require.NoError(t, err)
		resp.Body.Close()
	}
	_, err = model(t, c, srv.URL, "qwen")
	assert.ErrorIs(t, err, retry.ErrBreakerOpen, "open: refused without a request")
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, 2, srv.count())
	resp, err := model(t, c, srv.URL, "llama")
	require.NoError(t, err, "another model has its own breaker")
	resp.Body.Close()
	assert.Equal(t, 3, srv.count())
	host := strings.TrimPrefix(srv.URL, "http://")
	assert.Equal(t, breaker.StateOpen, b.State(breaker.Key{Target: host, Operation: "qwen"}))
	assert.Equal(t, breaker.StateClosed, b.State(breaker.Key{Target: host, Operation: "llama"}))
}

func TestA503WithRetryAfterCoolsDownTheHostAndModel(t *testing.T) {
	srv := newServer(t, reply{status: 503, header: retryAfter("60")})
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	require.NoError(t, err)
	c := client(t, quick(t, retry.WithCooldowns(cd)), httpretry.WithBase(base(t)), httpretry.WithModel(byHeader))
	resp, err := model(t, c, srv.URL, "qwen")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode, "a 60s wait is longer than the max wait: the response is returned, not slept")
	assert.Equal(t, 1, srv.count())

	_, err = model(t, c, srv.URL, "qwen")
	assert.ErrorIs(t, err, breaker.ErrCooldown, "fails locally")
	assert.ErrorIs(t, err, retry.ErrWaitTooLong)
	var se *classify.StatusError
	assert.False(t, errors.As(err, &se), "never mistaken for the server's answer")
	assert.Equal(t, 1, srv.count(), "no request sent")

	resp, err = model(t, c, srv.URL, "llama")
	require.NoError(t, err, "another model is not held back")
	resp.Body.Close()
	assert.Equal(t, 2, srv.count())
}

func TestACoolingHostIsNotSentToUntilItsCooldownEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503, header: retryAfter("5")}, {status: 200}}}
		cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
		require.NoError(t, err)
		tr := transport(t, exact(t, 0, retry.WithCooldowns(cd), retry.WithMaxAttempts(1)), httpretry.WithBase(rt))
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/a", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 503, resp.StatusCode)
		assert.Equal(t, 1, cd.Len(), "the 503 with Retry-After started the host's cooldown")

		start := time.Now()
		req, _ = http.NewRequest(http.MethodGet, "http://api.test/b", nil) // another call to the host
		resp, err = tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		assert.GreaterOrEqual(t, time.Since(start), 5*time.Second, "sent only once the cooldown ended")
		gaps := rt.gaps()
		require.Len(t, gaps, 1)
		assert.GreaterOrEqual(t, gaps[0], 5*time.Second, "nothing was sent to the cooling host meanwhile")
	})
}

func TestAKindFromTheBodyRefinesTheStatus(t *testing.T) {
	srv := newServer(t, reply{status: 502, body: `{"error":{"type":"upstream-error"}}`})
	kind := func(resp *http.Response, body []byte) string {
		if bytes.Contains(body, []byte(`"upstream-error"`)) {
			return classify.KindUpstreamError
		}
		return ""
	}
	c := client(t, quick(t), httpretry.WithBase(base(t)), httpretry.WithKind(kind))
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, `{"error":{"type":"upstream-error"}}`, readAll(t, resp), "the body read for the kind is still there")
	assert.Equal(t, 1, srv.count(), "the gateway already retried: not retried again")
}

func TestLogsAndEventsCarryNoCredentialsOrPayloads(t *testing.T) {
	var logs logBuffer
	var events []string
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		events = append(events, fmt.Sprintf("%v %v %+v", e.Kind, errString(e.Err), e.Detail))
	})
	srv := newServer(t, reply{status: 503, body: "secret-response-body"})
	r := quick(t, retry.WithLogger(logger(&logs)), retry.WithObserver(obs))
	c := client(t, r, httpretry.WithBase(base(t)))
	u := strings.Replace(srv.URL, "http://", "http://user:secret-password@", 1) + "/v1/chat?api_key=secret-query&model=qwen"
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, u, strings.NewReader("secret-request-body"))
		req.Header.Set("Authorization", "Bearer secret-token")
		req.Header.Set("Cookie", "session=secret-cookie")
		req.Header.Set("Proxy-Authorization", "Basic secret-proxy")
		req.Header.Set("X-Api-Key", "secret-api-key")
		req, res := asking(t, req)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		events = append(events, res.Err.Error())
	}
	all := logs.String() + strings.Join(events, "\n")
	require.Contains(t, all, "retry scheduled", "something was reported")
	require.Contains(t, all, "sent once, not retried", "the POST too")
	for _, secret := range []string{"secret-token", "secret-cookie", "secret-proxy", "secret-api-key", "secret-request-body",
		"secret-response-body", "secret-password", "secret-query", "qwen"} {
		assert.NotContains(t, all, secret)
	}
	assert.Contains(t, all, "api_key=REDACTED")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@api.example/v1?key=abc&x=1#frag": "https://api.example/v1?key=REDACTED&x=REDACTED",
		"http://api.example/path":                     "http://api.example/path",
	} {
		u, err := urlParse(in)
		require.NoError(t, err)
		assert.Equal(t, want, httpretry.Redact(u))
	}
	assert.Empty(t, httpretry.Redact(nil))
}

func TestNotRetriedErrorCarriesTheStats(t *testing.T) {
	// The server processes the POST; the connection is reset before its
	// answer: the client cannot know whether the order was placed.
	srv := newServer(t, reply{status: 201})
	c := client(t, quick(t), httpretry.WithBase(resets(t).Transport(base(t))))
	_, err := c.Post(srv.URL, "text/plain", strings.NewReader("x"))
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, 1, nr.Stats.Attempts)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	assert.Equal(t, 1, srv.count(), "processed once, and not sent again")
}
