package httpretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

func TestTheHookHearsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503}, {hangup: true}, {status: 200}}}
		var got []httpretry.Attempt
		var sawCtx bool
		hook := func(ctx context.Context, a httpretry.Attempt) {
			sawCtx = ctx.Value(ctxKey{}) == "mine"
			got = append(got, a)
		}
		tr := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(exact(t, 10*ms)), httpretry.WithHook(hook))
		ctx := context.WithValue(t.Context(), ctxKey{}, "mine")
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://user:pw@api.test/doc?sig=s3cret", strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Len(t, got, 3)
		assert.True(t, sawCtx, "the hook gets the request's context")
		for i, a := range got {
			assert.Equal(t, i+1, a.Number)
			assert.Equal(t, "PUT", a.Method)
			assert.Equal(t, "http://api.test/doc?sig=REDACTED", a.URL)
			assert.Empty(t, a.Once)
		}
		assert.Equal(t, []string{"5xx", "error", "2xx"}, []string{got[0].StatusClass(), got[1].StatusClass(), got[2].StatusClass()})
		assert.NoError(t, got[0].Err, "an error status is a response")
		assert.ErrorIs(t, got[1].Err, io.ErrUnexpectedEOF)
	})
}

func TestTheHookHearsAnAttemptACooldownRefused(t *testing.T) {
	cd, err := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{})
	require.NoError(t, err)
	cd.Start(breaker.HostModel{Host: "api.test"}, time.Now().Add(time.Hour))
	var got []httpretry.Attempt
	rt := &fakeRT{script: []reply{{status: 200}}}
	tr := transport(t, httpretry.WithBase(rt), httpretry.WithCooldowns(cd),
		httpretry.WithHook(func(_ context.Context, a httpretry.Attempt) { got = append(got, a) }))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
	_, err = tr.RoundTrip(req)
	assert.ErrorIs(t, err, breaker.ErrCooldown)
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0].Err, breaker.ErrCooldown)
	assert.Equal(t, "error", got[0].StatusClass())
	assert.Zero(t, rt.count())
}

func TestOnlyAFailedRequestSentOnceIsLogged(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		wantLog bool
	}{
		{"a POST that succeeded", 201, false},
		{"a POST that failed", 503, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			rt := &fakeRT{script: []reply{{status: tt.status}}}
			tr := transport(t, httpretry.WithBase(rt), httpretry.WithLogger(logger(&logs)))
			resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "{}"))
			require.NoError(t, err)
			resp.Body.Close()
			if !tt.wantLog {
				assert.Empty(t, logs.String())
				return
			}
			assert.Contains(t, logs.String(), "level=INFO")
			assert.Contains(t, logs.String(), "httpretry: request sent once, not retried")
			assert.Contains(t, logs.String(), "request.reason=\"without an Idempotency-Key a POST is not safe to repeat\"")
		})
	}
}

func TestTheResultIsReportedOnEveryPath(t *testing.T) {
	for _, tt := range []struct {
		name     string
		script   []reply
		header   string
		attempts int
		wantErr  error // nil: a success
		wantResp bool
	}{
		{"a success after a retry", []reply{{status: 503}, {status: 200}}, "", 2, nil, true},
		{"an error response the loop gave up on", []reply{{status: 503}}, "", 3, retry.ErrExhausted, true},
		{"a transport failure", []reply{{hangup: true}}, "", 3, io.ErrUnexpectedEOF, false},
		{"a key refused before sending", []reply{{status: 200}}, strings.Repeat("k", 300), 0, retry.ErrInvalid, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := &fakeRT{script: tt.script}
			req, _ := http.NewRequest(http.MethodPut, "http://api.test/x", nil)
			if tt.header != "" {
				req.Header.Set(idempotency.HeaderKey, tt.header)
			}
			req, res := asking(t, req)
			resp, err := transport(t, httpretry.WithBase(rt), httpretry.WithRetrier(exact(t, 0))).RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			assert.Equal(t, tt.wantResp, resp != nil)
			assert.Equal(t, tt.attempts, res.Attempts)
			if tt.wantErr == nil {
				assert.NoError(t, res.Err)
				return
			}
			assert.ErrorIs(t, res.Err, tt.wantErr)
			if !tt.wantResp {
				assert.Equal(t, err, res.Err, "the error RoundTrip returned")
			}
		})
	}
}
