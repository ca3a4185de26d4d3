package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newObserver returns an Observer named "payments" on s, with attempt spans.
func newObserver(t *testing.T, s *sdk, c otelretry.Config) *otelretry.Observer {
	t.Helper()
	c.MeterProvider, c.TracerProvider = s.mp, s.tp
	o, err := otelretry.New("payments", c)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, o.Unregister()) })
	return o
}

// observed returns a Retrier observed by an Observer named "payments" on s,
// with a constant 100ms backoff and no jitter, so that waits are exact under
// synctest.
func observed(t *testing.T, s *sdk, opts ...retry.Option) (*retry.Retrier, *otelretry.Observer) {
	t.Helper()
	o := newObserver(t, s, otelretry.Config{AttemptSpans: true})
	base := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(100 * time.Millisecond)),
		retry.WithJitter(jitter.None{}), retry.WithObserver(o)}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r, o
}

// failThen fails with errs in turn, then succeeds.
func failThen(errs ...error) func(context.Context) error {
	n := 0
	return func(context.Context) error {
		if n++; n <= len(errs) {
			return errs[n-1]
		}
		return nil
	}
}

const (
	name    = "retry.name=payments"
	success = "retry.outcome=success"
)

func TestTwoTransientFailuresThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		r, o := observed(t, s)
		ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
		st, err := r.Run(ctx, o.Traced(failThen(httpErr(503, -1), httpErr(503, -1))))
		span.End()
		require.NoError(t, err)
		require.Equal(t, 3, st.Attempts)

		assert.Equal(t, map[string]point{
			"retry.call.duration{" + name + "," + success + "}":                     {Count: 1, Sum: 0.2},
			"retry.call.retries{" + name + "," + success + "}":                      {Count: 1, Sum: 2},
			"retry.call.retry_delay{" + name + "," + success + "}":                  {Count: 1, Sum: 0.2},
			"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 2},
			"retry.attempts{" + name + ",retry.verdict=success}":                    {Value: 1},
		}, s.collect(t))

		spans := s.spans.Ended()
		require.Len(t, spans, 4, "three attempt spans and the caller's")
		for _, a := range spans[:3] {
			assert.Equal(t, "payments attempt", a.Name())
			assert.Equal(t, span.SpanContext().SpanID(), a.Parent().SpanID(), "an attempt's span is a child of the caller's")
		}
		assert.Equal(t, codes.Error, spans[0].Status().Code)
		assert.Equal(t, codes.Unset, spans[2].Status().Code)
		events := spans[3].Events()
		require.Len(t, events, 2)
		for i, e := range events {
			assert.Equal(t, "retry.scheduled", e.Name)
			assert.Contains(t, e.Attributes, attribute.Int("retry.attempt", i+1))
			assert.Contains(t, e.Attributes, attribute.String("retry.class", "http 503"))
			assert.Contains(t, e.Attributes, attribute.Float64("retry.delay", 0.1))
		}
	})
}

func TestABudgetRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 5})
		require.NoError(t, err)
		r, _ := observed(t, s, retry.WithBudget(b))
		ctx, span := s.tp.Tracer("test").Start(t.Context(), "checkout")
		err = r.Do(ctx, failThen(httpErr(503, -1)))
		span.End()
		require.ErrorIs(t, err, retry.ErrBudget)

		assert.Equal(t, map[string]point{
			"retry.call.duration{" + name + ",retry.outcome=budget}":                {Count: 1, Sum: 0},
			"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1},
		}, s.collect(t), "a call without retries records neither retries nor a retry delay")
		events := s.spans.Ended()[0].Events()
		require.Len(t, events, 1)
		assert.Equal(t, "retry.gave_up", events[0].Name)
		assert.Contains(t, events[0].Attributes, attribute.String("retry.outcome", "budget"))
		assert.Contains(t, events[0].Attributes, attribute.Int("retry.attempt", 1))
	})
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		desc    string
		opts    []retry.Option
		op      func(context.Context) error
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		outcome string
		want    map[string]point
	}{
		{
			desc: "attempts exhausted", op: failThen(httpErr(503, -1), httpErr(503, -1), httpErr(503, -1)),
			outcome: "max-attempts",
			want:    map[string]point{"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 3}},
		},
		{
			desc: "a permanent failure", op: failThen(httpErr(400, -1)), outcome: "permanent",
			want: map[string]point{"retry.attempts{retry.class=http 4xx," + name + ",retry.verdict=stop}": {Value: 1}},
		},
		{
			desc: "a Retry-After longer than MaxDelay is returned", opts: []retry.Option{retry.WithMaxDelay(time.Second)},
			op: failThen(httpErr(503, 10)), outcome: "wait-too-long",
			want: map[string]point{
				"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1},
				"retry.retry_after{" + name + ",retry.retry_after.action=returned}":     {Value: 1},
			},
		},
		{
			desc: "a Retry-After within MaxDelay is slept", op: failThen(httpErr(503, 1)), outcome: "success",
			want: map[string]point{
				"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1},
				"retry.attempts{" + name + ",retry.verdict=success}":                    {Value: 1},
				"retry.retry_after{" + name + ",retry.retry_after.action=slept}":        {Value: 1},
			},
		},
		{
			desc: "a custom classifier's reason is counted as other", outcome: "permanent",
			opts: []retry.Option{retry.WithClassifier(func(err error) classify.Decision {
				return classify.Decision{Verdict: classify.Stop, Reason: "quota of tenant 42"}
			})},
			op:   failThen(errors.New("quota")),
			want: map[string]point{"retry.attempts{retry.class=other," + name + ",retry.verdict=stop}": {Value: 1}},
		},
		{
			desc: "a call cancelled during its wait counts its failed attempt once", outcome: "canceled",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			op:   failThen(httpErr(503, -1)),
			want: map[string]point{"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1}},
		},
		{
			desc: "the caller's deadline, before the wait that would outlast it", outcome: "deadline",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 150*time.Millisecond)
			},
			op:   failThen(httpErr(503, -1), httpErr(503, -1)),
			want: map[string]point{"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 2}},
		},
		{
			desc: "a call without a required key", opts: []retry.Option{retry.WithPolicy(policy.Payment())}, outcome: "key-required",
			op: failThen(),
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSDK(t)
				r, _ := observed(t, s, tc.opts...)
				ctx, cancel := t.Context(), context.CancelFunc(func() {})
				if tc.ctx != nil {
					ctx, cancel = tc.ctx(ctx)
				}
				defer cancel()
				_ = r.Do(ctx, tc.op)
				got := s.collect(t)
				calls := only(got, "retry.call.duration")
				require.Len(t, calls, 1)
				assert.Contains(t, calls, "retry.call.duration{"+name+",retry.outcome="+tc.outcome+"}")
				want := tc.want
				if want == nil {
					want = map[string]point{}
				}
				assert.Equal(t, want, only(got, "retry.attempts", "retry.retry_after"))
			})
		})
	}
}

func TestNestedLoopsAreCountedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		outer, o := observed(t, s, retry.Outermost())
		inner, err := retry.New(retry.WithMaxAttempts(3), retry.WithObserver(o))
		require.NoError(t, err)
		op := failThen(httpErr(503, -1))
		err = outer.Do(t.Context(), func(ctx context.Context) error { return inner.Do(ctx, op) })
		require.NoError(t, err)
		assert.Equal(t, map[string]point{
			"retry.call.duration{" + name + "," + success + "}":                     {Count: 1, Sum: 0.1},
			"retry.call.retries{" + name + "," + success + "}":                      {Count: 1, Sum: 1},
			"retry.call.retry_delay{" + name + "," + success + "}":                  {Count: 1, Sum: 0.1},
			"retry.attempts{retry.class=http 503," + name + ",retry.verdict=retry}": {Value: 1},
			"retry.attempts{" + name + ",retry.verdict=success}":                    {Value: 1},
		}, s.collect(t), "one call of two attempts, not three calls")
	})
}

func TestDistinctErrorsAndKeysCreateNoSeries(t *testing.T) {
	s := newSDK(t)
	r, _ := observed(t, s, retry.WithBackoff(backoff.Constant(0)), retry.WithClassifier(func(err error) classify.Decision {
		return classify.Decision{Verdict: classify.Retry, Reason: err.Error()} // a reason nobody should use as a label
	}))
	run := func(from, to int) int {
		for i := from; i < to; i++ {
			ctx, err := retry.WithIdempotencyKey(context.Background(), fmt.Sprintf("key-%d", i))
			require.NoError(t, err)
			_ = r.Do(ctx, failThen(fmt.Errorf("user %d: boom", i), httpErr(500+i%5, -1)))
		}
		return len(s.collect(t))
	}
	first := run(0, 100)
	assert.Equal(t, first, run(100, 10_000), "10,000 calls with distinct errors and keys add no series")
	assert.LessOrEqual(t, first, 20)
}

func TestTracedWithoutAttemptSpansIsTheOperation(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	called := false
	require.NoError(t, o.Traced(func(context.Context) error { called = true; return nil })(context.Background()))
	assert.True(t, called)
	assert.Empty(t, s.spans.Ended())
}

func TestAnAttemptSpanCarriesTheErrorTypeNotItsText(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{AttemptSpans: true})
	err := o.Traced(func(context.Context) error { return httpErr(503, -1) })(context.Background())
	require.Error(t, err)
	spans := s.spans.Ended()
	require.Len(t, spans, 1)
	assert.Contains(t, spans[0].Attributes(), attribute.String("error.type", "*classify.StatusError"))
	assert.Contains(t, spans[0].Attributes(), attribute.String("retry.name", "payments"))
	assert.Empty(t, spans[0].Status().Description, "no error text")
}

func TestEventsGoOnlyToARecordingSpan(t *testing.T) {
	s := newSDK(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(s.spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	r, _ := observed(t, s, retry.WithBackoff(backoff.Constant(0)))
	ctx, span := tp.Tracer("test").Start(context.Background(), "unsampled")
	require.NoError(t, r.Do(ctx, failThen(httpErr(503, -1))))
	span.End()
	assert.Empty(t, s.spans.Ended(), "an unsampled span records nothing")
}

func TestHTTPStatusClasses(t *testing.T) {
	for _, tc := range []struct {
		desc string
		http bool
		want map[string]point
	}{
		{"with Config.HTTP, every attempt by its status class", true, map[string]point{
			"retry.http.attempts{retry.http.status_class=5xx," + name + "}":   {Value: 1},
			"retry.http.attempts{retry.http.status_class=4xx," + name + "}":   {Value: 2},
			"retry.http.attempts{retry.http.status_class=error," + name + "}": {Value: 1},
			"retry.http.attempts{retry.http.status_class=2xx," + name + "}":   {Value: 2},
		}},
		{"without it, none", false, map[string]point{}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			s := newSDK(t)
			o := newObserver(t, s, otelretry.Config{HTTP: tc.http})
			r, err := retry.New(retry.WithObserver(o), retry.WithBackoff(backoff.Constant(0)), retry.Idempotent())
			require.NoError(t, err)
			wrapped := fmt.Errorf("fetching: %w", httpErr(429, -1))
			require.NoError(t, r.Do(t.Context(), failThen(httpErr(503, -1), wrapped)), "503, a wrapped 429, then 200")
			require.NoError(t, r.Do(t.Context(), failThen(errors.New("connection reset by peer"))), "no answer, then 200")
			require.Error(t, r.Do(t.Context(), failThen(httpErr(404, -1))))
			assert.Equal(t, tc.want, only(s.collect(t), "retry.http.attempts"))
		})
	}
}

// TestADeferredLoopsWaitsAreCounted: a loop nested in an Outermost loop
// counts no call, but its limiter's hold is a wait all the same.
func TestADeferredLoopsWaitsAreCounted(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	for _, k := range []observe.Kind{observe.AttemptDone, observe.RetryScheduled, observe.GaveUp,
		observe.HedgeStarted, observe.HedgeSkipped, observe.LimiterWaited} {
		o.Observe(t.Context(), observe.Event{Kind: k, Attempt: 1, Started: 1, Delay: time.Second, Deferred: true,
			Err: &retry.Error{Stop: policy.StopAttempts}, Stop: policy.StopAttempts})
	}
	assert.Equal(t, map[string]point{"retry.limit.wait.duration{" + name + "}": {Count: 1, Sum: 1}}, s.collect(t))
}
