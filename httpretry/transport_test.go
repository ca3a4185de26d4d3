package httpretry_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/httpretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAGetIsRetriedUntilItSucceeds(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{status: 502}, reply{status: 200, body: "hello"})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	resp, err := c.Get(srv.URL + "/greeting")
	require.NoError(t, err)
	assert.Equal(t, "hello", readAll(t, resp))
	assert.Equal(t, 3, srv.count())
	res, ok := httpretry.ResultOf(resp)
	require.True(t, ok)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, 2*ms, res.Waited)
	assert.NoError(t, res.Err)
	assert.Equal(t, int64(1), srv.conns.Load(), "drained error bodies let one connection serve every attempt")
}

func TestTheFinalErrorResponseIsReturnedWhole(t *testing.T) {
	body := strings.Repeat("x", 100<<10) // larger than the drain limit
	srv := newServer(t, reply{status: 503, body: body})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	resp, err := c.Get(srv.URL)
	require.NoError(t, err, "an error status is a response, not a transport error")
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, body, readAll(t, resp), "the answer's body is intact")
	res, ok := httpretry.ResultOf(resp)
	require.True(t, ok)
	assert.Equal(t, 3, res.Attempts)
	assert.ErrorIs(t, res.Err, retry.ErrExhausted)
	assert.Equal(t, 3, srv.count())
}

func TestAPermanentStatusIsNotRetried(t *testing.T) {
	srv := newServer(t, reply{status: 404, body: "no such thing"})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "no such thing", readAll(t, resp))
	assert.Equal(t, 1, srv.count())
	res, _ := httpretry.ResultOf(resp)
	assert.ErrorIs(t, res.Err, retry.ErrPermanent)
}

func TestAPostWithoutAKeyIsSentOnce(t *testing.T) {
	t.Skip("until httpretry reports a request it sends once through its own hook (issue 13)")
	var logs logBuffer
	srv := newServer(t, reply{status: 503}, reply{status: 200})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t, retry.WithLogger(logger(&logs)))))
	resp, err := c.Post(srv.URL+"/orders", "application/json", strings.NewReader(`{"sku":1}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, 1, srv.count(), "never repeated")
	res, _ := httpretry.ResultOf(resp)
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, res.Err, &nr)
	assert.Contains(t, res.Err.Error(), "POST "+srv.URL+"/orders sent once, not retried: without an Idempotency-Key a POST is not safe to repeat")
	assert.Contains(t, logs.String(), "not safe to repeat", "the reason is in the log too")
}

func TestAPostWithoutAKeyThatCannotConnectSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	_, err = c.Post("http://"+addr+"/orders", "text/plain", strings.NewReader("x"))
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, err, &nr)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestAPostWithAKeyIsRetriedWithTheSameKeyAndBody(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{hangup: true}, reply{status: 201})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":1}`))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "order-4417")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	got := srv.seen()
	require.Len(t, got, 3)
	for _, s := range got {
		assert.Equal(t, "order-4417", s.key, "one key per logical call, on every attempt")
		assert.Equal(t, `{"sku":1}`, s.body, "the body is rewound for every attempt")
	}
}

func TestABodyThatCannotBeRewoundIsNotRetried(t *testing.T) {
	srv := newServer(t, reply{status: 503}, reply{status: 200})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	req, err := http.NewRequest(http.MethodPut, srv.URL, io.NopCloser(strings.NewReader("data")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 1, srv.count())
	res, _ := httpretry.ResultOf(resp)
	assert.ErrorContains(t, res.Err, "its body cannot be rewound (no GetBody)")
}

func TestAKeyLongerThan255CharactersIsNotSent(t *testing.T) {
	srv := newServer(t, reply{status: 200})
	c := client(t, httpretry.WithBase(base(t)))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set("Idempotency-Key", strings.Repeat("k", 256))
	_, err := c.Do(req)
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.ErrorContains(t, err, "256 characters: the limit is 255")
	assert.Zero(t, srv.count(), "checked before sending")
}

func TestTheFinalTransportErrorSaysHowManyAttemptsAndWhy(t *testing.T) {
	srv := newServer(t, reply{hangup: true})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	_, err := c.Get(srv.URL)
	var rerr *retry.Error
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, 3, rerr.Attempts)
	assert.ErrorIs(t, err, retry.ErrExhausted)
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
		c := client(t, httpretry.WithBase(rt), httpretry.WithRetrier(quick(t)))
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
		c := client(t, httpretry.WithBase(rt), httpretry.WithRetrier(quick(t)))
		start := time.Now()
		resp, err := c.Get("http://api.example/x")
		require.NoError(t, err)
		assert.Zero(t, time.Since(start), "not slept")
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "slow down", readAll(t, resp))
		res, _ := httpretry.ResultOf(resp)
		var rerr *retry.Error
		require.ErrorAs(t, res.Err, &rerr)
		assert.Equal(t, 2*time.Minute, rerr.RetryAfter, "the caller can schedule it")
	})
}

func TestTheRequestDeadlineIsRespected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503, header: retryAfter("10")}}}
		c := client(t, httpretry.WithBase(rt), httpretry.WithRetrier(quick(t)))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/x", nil)
		start := time.Now()
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Zero(t, time.Since(start), "a 10s wait cannot fit in 5s: returned at once")
		res, _ := httpretry.ResultOf(resp)
		assert.ErrorIs(t, res.Err, retry.ErrDeadline)
	})
}

func TestBreakersAreKeptPerHostAndModel(t *testing.T) {
	srv := newServer(t, reply{status: 503})
	settings := func(k breaker.HostModel) breaker.Settings {
		return breaker.Settings{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 }, Timeout: time.Minute}
	}
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t, retry.WithMaxAttempts(1))),
		httpretry.WithBreakers(settings), httpretry.WithModel(func(r *http.Request) string { return r.Header.Get("X-Model") }))
	call := func(model string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Model", model)
		return c.Do(req)
	}
	for range 2 {
		resp, err := call("qwen")
		require.NoError(t, err)
		resp.Body.Close()
	}
	_, err := call("qwen")
	assert.ErrorIs(t, err, breaker.ErrOpen, "open: rejected without a request")
	assert.Equal(t, 2, srv.count())
	resp, err := call("llama")
	require.NoError(t, err, "another model has its own breaker")
	resp.Body.Close()
	assert.Equal(t, 3, srv.count())
}

func TestA503WithRetryAfterCoolsDownTheHostAndModel(t *testing.T) {
	srv := newServer(t, reply{status: 503, header: retryAfter("60")})
	cd, err := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{})
	require.NoError(t, err)
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)), httpretry.WithCooldowns(cd),
		httpretry.WithModel(func(r *http.Request) string { return r.Header.Get("X-Model") }))
	call := func(model string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Model", model)
		return c.Do(req)
	}
	resp, err := call("qwen")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 1, srv.count(), "a 60s wait is longer than the max wait: returned, not slept")

	_, err = call("qwen")
	assert.ErrorIs(t, err, breaker.ErrCooldown, "fails locally")
	var se *classify.StatusError
	assert.False(t, errors.As(err, &se), "never mistaken for the server's answer")
	assert.Equal(t, 1, srv.count(), "no request sent")

	resp, err = call("llama")
	require.NoError(t, err, "another model is not held back")
	resp.Body.Close()
	assert.Equal(t, 2, srv.count())
}

func TestAKindFromTheBodyRefinesTheStatus(t *testing.T) {
	srv := newServer(t, reply{status: 502, body: `{"error":{"type":"upstream-error"}}`})
	kind := func(resp *http.Response, body []byte) string {
		if bytes.Contains(body, []byte(`"upstream-error"`)) {
			return classify.KindUpstreamError
		}
		return ""
	}
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)), httpretry.WithKind(kind))
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	assert.Equal(t, `{"error":{"type":"upstream-error"}}`, readAll(t, resp), "the body read for the kind is still there")
	assert.Equal(t, 1, srv.count(), "the gateway already retried: not retried again")
}

func TestLogsAndEventsCarryNoCredentialsOrPayloads(t *testing.T) {
	t.Skip("until httpretry reports a request it sends once through its own hook (issue 13)")
	var logs logBuffer
	var events []string
	hook := func(_ context.Context, e retry.Event) { events = append(events, e.Kind.String()+" "+errString(e.Err)) }
	srv := newServer(t, reply{status: 503, body: "secret-response-body"})
	r := quick(t, retry.WithLogger(logger(&logs)), retry.WithHook(hook))
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(r))
	u := strings.Replace(srv.URL, "http://", "http://user:secret-password@", 1) + "/v1/chat?api_key=secret-query&model=qwen"
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, u, strings.NewReader("secret-request-body"))
		req.Header.Set("Authorization", "Bearer secret-token")
		req.Header.Set("Cookie", "session=secret-cookie")
		req.Header.Set("Proxy-Authorization", "Basic secret-proxy")
		req.Header.Set("X-Api-Key", "secret-api-key")
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	all := logs.String() + strings.Join(events, "\n")
	require.Contains(t, all, "retry scheduled", "something was reported")
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

func TestBadOptions(t *testing.T) {
	for name, opt := range map[string]httpretry.Option{
		"nil base":       httpretry.WithBase(nil),
		"nil retrier":    httpretry.WithRetrier(nil),
		"nil breakers":   httpretry.WithBreakers(nil),
		"nil cooldowns":  httpretry.WithCooldowns(nil),
		"nil model":      httpretry.WithModel(nil),
		"nil kind":       httpretry.WithKind(nil),
		"negative drain": httpretry.WithDrainLimit(-1),
		"nil option":     nil,
	} {
		_, err := httpretry.New(opt)
		assert.Error(t, err, name)
	}
}

func TestNotRetriedErrorCarriesTheStats(t *testing.T) {
	srv := newServer(t, reply{hangup: true})
	c := client(t, httpretry.WithBase(base(t)), httpretry.WithRetrier(quick(t)))
	_, err := c.Post(srv.URL, "text/plain", strings.NewReader("x"))
	var nr *httpretry.NotRetriedError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, 1, nr.Stats.Attempts)
}
