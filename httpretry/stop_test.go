package httpretry_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noRetries is a retry budget that refuses every retry.
type noRetries struct{}

func (noRetries) Record(budget.Attempt) {}
func (noRetries) Allow() bool           { return false }

// firstOnly is a rate limiter that lets a call's first attempt go and
// refuses the others.
type firstOnly struct{ n atomic.Int32 }

func (l *firstOnly) Acquire(context.Context, time.Duration) bool { return l.n.Add(1) == 1 }
func (l *firstOnly) Record(context.Context, limit.Outcome)       {}

// TestWhatRoundTripReturnsForEachStopReason drives the transport to every
// reason a call stops (policy.Stops) and checks what RoundTrip returns, as
// the package documentation's table has it: the last error response when
// the loop stopped on it, the error when a stage refused or the caller gave
// up (a response an earlier attempt got is then drained and closed). It
// fails when policy.Stop gains a reason without a case here.
func TestWhatRoundTripReturnsForEachStopReason(t *testing.T) {
	openOnFirstFailure := func(t *testing.T) retry.Option {
		b, err := breaker.New(breaker.Config{PerAttempt: true, ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
		require.NoError(t, err)
		return retry.WithBreakers(b)
	}
	cases := map[policy.Stop]struct {
		script   []reply
		hold     bool // the server processes the request; its answer never comes
		opts     func(*testing.T) []retry.Option
		post     bool          // a POST without a key, sent once
		deadline time.Duration // the request's context's
		cancelAt time.Duration // when the request's context is cancelled
		wantResp bool          // the last error response; false: the error
	}{
		policy.StopPermanent:     {script: []reply{{status: 404}}, wantResp: true},
		policy.StopNotIdempotent: {script: []reply{{status: 201}}, hold: true, post: true, opts: opts(retry.WithAttemptTimeout(time.Second))},
		policy.StopAttempts:      {script: []reply{{status: 503}}, wantResp: true},
		policy.StopClassLimit:    {script: []reply{{status: 500}}, wantResp: true},
		policy.StopWaitTooLong:   {script: []reply{{status: 429, header: retryAfter("120")}}, wantResp: true},
		policy.StopElapsed:       {script: []reply{{status: 503, header: retryAfter("1")}}, opts: opts(retry.WithMaxElapsed(500 * ms)), wantResp: true},
		policy.StopDeadline:      {script: []reply{{status: 503, header: retryAfter("5")}}, deadline: 3 * time.Second, wantResp: true},
		policy.StopBudget:        {script: []reply{{status: 503}}, opts: opts(retry.WithBudget(noRetries{})), wantResp: true},
		policy.StopKeyRequired:   {script: []reply{{status: 200}}, opts: opts(retry.WithPolicy(policy.Policy{RequireKey: true}))},
		policy.StopLimited:       {script: []reply{{status: 503}}, opts: func(*testing.T) []retry.Option { return []retry.Option{retry.WithLimiter(&firstOnly{})} }},
		policy.StopOpen:          {script: []reply{{status: 503}}, opts: func(t *testing.T) []retry.Option { return []retry.Option{openOnFirstFailure(t)} }},
		policy.StopCanceled:      {script: []reply{{status: 503, header: retryAfter("2")}}, cancelAt: time.Second},
	}
	for s := range policy.Stops() {
		tt, ok := cases[s]
		if !ok {
			t.Errorf("no case for the stop reason %q: add it here, to answers and to the package documentation", s)
			continue
		}
		t.Run(s.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &fakeRT{script: tt.script}
				base := http.RoundTripper(rt)
				if tt.hold {
					base = scripted(t, chaos.Timeout(time.Hour)).Transport(rt)
				}
				var ropts []retry.Option
				if tt.opts != nil {
					ropts = tt.opts(t)
				}
				tr := transport(t, exact(t, 10*ms, ropts...), httpretry.WithBase(base))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.deadline > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
				if tt.post {
					req = post(t, ctx, "http://api.test/orders", "{}")
				}
				req, res := asking(t, req)
				resp, err := tr.RoundTrip(req)
				var rerr *retry.Error
				require.ErrorAs(t, res.Err, &rerr)
				require.Equal(t, s, rerr.Stop, "the case stops the call for its reason: %v", res.Err)
				if tt.wantResp {
					require.NoError(t, err)
					require.NotNil(t, resp, "the last error response")
					resp.Body.Close()
				} else {
					assert.Nil(t, resp)
					assert.Equal(t, res.Err, err, "the error")
				}
				assert.Equal(t, int64(rt.count()), rt.closed.Load(), "every response is closed: by the caller, or drained by the transport")
			})
		})
	}
}

func opts(o ...retry.Option) func(*testing.T) []retry.Option {
	return func(*testing.T) []retry.Option { return o }
}
