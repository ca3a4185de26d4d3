package httpretry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
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
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

// recorder keeps the events an observer hears.
type recorder struct {
	mu     sync.Mutex
	events []observe.Event
	ctxs   []context.Context
}

func (r *recorder) Observe(ctx context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events, r.ctxs = append(r.events, e), append(r.ctxs, ctx)
}

func (r *recorder) of(k observe.Kind) []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []observe.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func TestTheRetriersObserverHearsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRT{script: []reply{{status: 503}, {status: 200}}}
		reset := scripted(t, chaos.Fault{}, chaos.ResetBeforeSend()) // the second request
		rec := &recorder{}
		tr := transport(t, exact(t, 10*ms, retry.WithObserver(rec)), httpretry.WithBase(reset.Transport(rt)))
		ctx := context.WithValue(t.Context(), ctxKey{}, "mine")
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://user:pw@api.test/doc?sig=s3cret", strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		done := rec.of(observe.AttemptDone)
		require.Len(t, done, 3)
		for i, e := range done {
			assert.Equal(t, i+1, e.Attempt)
			assert.False(t, e.Deferred, "the transport's call is the one that counts")
		}
		var se *classify.StatusError
		require.ErrorAs(t, done[0].Err, &se, "an error status reaches the observer as a StatusError")
		assert.Equal(t, 503, se.Code)
		assert.ErrorIs(t, done[1].Err, syscall.ECONNRESET)
		assert.NoError(t, done[2].Err)
		for _, c := range rec.ctxs {
			assert.Equal(t, "mine", c.Value(ctxKey{}), "the observer gets the request's context")
		}
	})
}

func TestTheObserverHearsACallACooldownRefused(t *testing.T) {
	cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
	require.NoError(t, err)
	cd.Observe(t.Context(), breaker.Key{Target: "api.test"}, errors.New("503"),
		classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnavailable, RetryAfter: time.Hour}, nil)
	rec := &recorder{}
	rt := &fakeRT{script: []reply{{status: 200}}}
	tr := transport(t, quick(t, retry.WithCooldowns(cd), retry.WithObserver(rec)), httpretry.WithBase(rt))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
	_, err = tr.RoundTrip(req)
	assert.ErrorIs(t, err, breaker.ErrCooldown)
	gaveUp := rec.of(observe.GaveUp)
	require.Len(t, gaveUp, 1)
	assert.Equal(t, policy.StopWaitTooLong, gaveUp[0].Stop, "an hour is longer than the call can wait")
	assert.Zero(t, gaveUp[0].Attempt)
	assert.Empty(t, rec.of(observe.AttemptDone))
	assert.Zero(t, rt.count())
}

func TestARequestSentOnceIsAnOrdinaryCallOfTheRetrier(t *testing.T) {
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
			rec := &recorder{}
			rt := &fakeRT{script: []reply{{status: tt.status}}}
			r := quick(t, retry.WithLogger(logger(&logs)), retry.WithObserver(rec))
			tr := transport(t, r, httpretry.WithBase(rt))
			req, res := asking(t, post(t, t.Context(), "http://api.test/orders", "{}"))
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			done := rec.of(observe.AttemptDone)
			require.Len(t, done, 1, "one attempt, heard like any other")
			assert.False(t, done[0].Deferred, "not left to a loop around: observers count it")
			if !tt.wantLog {
				assert.Empty(t, logs.String())
				return
			}
			assert.Contains(t, logs.String(), "level=INFO")
			assert.Contains(t, logs.String(), "retry: gave up")
			assert.Contains(t, logs.String(), "stop=max-attempts")
			assert.Contains(t, res.Err.Error(), "without an Idempotency-Key a POST is not safe to repeat", "why, in the Result")
		})
	}
}

func TestTheResultIsReportedOnEveryPath(t *testing.T) {
	for _, tt := range []struct {
		name     string
		script   []reply
		reset    bool // every answer lost to a reset
		header   string
		attempts int
		wantErr  error // nil: a success
		wantResp bool
	}{
		{"a success after a retry", []reply{{status: 503}, {status: 200}}, false, "", 2, nil, true},
		{"an error response the loop gave up on", []reply{{status: 503}}, false, "", 3, retry.ErrExhausted, true},
		{"a transport failure", []reply{{status: 200}}, true, "", 3, syscall.ECONNRESET, false},
		{"a key refused before sending", []reply{{status: 200}}, false, strings.Repeat("k", 300), 0, retry.ErrInvalid, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rt http.RoundTripper = &fakeRT{script: tt.script}
			if tt.reset {
				rt = resets(t).Transport(rt)
			}
			req, _ := http.NewRequest(http.MethodPut, "http://api.test/x", nil)
			if tt.header != "" {
				req.Header.Set(idempotency.HeaderKey, tt.header)
			}
			req, res := asking(t, req)
			resp, err := transport(t, exact(t, 0), httpretry.WithBase(rt)).RoundTrip(req)
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
