package otelretry_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/otelretry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

func TestBudgetGauges(t *testing.T) {
	t.Run("a token bucket's tokens, threshold and refusals", func(t *testing.T) {
		s := newSDK(t)
		b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 5})
		require.NoError(t, err)
		reg, err := otelretry.ObserveBudget("llm", b, otelretry.WithMeterProvider(s.mp))
		require.NoError(t, err)
		defer func() { _ = reg.Unregister() }()
		r, err := retry.New(retry.WithBudget(b), retry.WithMaxAttempts(3))
		require.NoError(t, err)
		require.ErrorIs(t, r.Do(t.Context(), failThen(httpErr(503, -1))), retry.ErrBudget)
		assert.Equal(t, map[string]point{
			"retry.budget.tokens{retry.budget.name=llm}":    {Value: 5},
			"retry.budget.threshold{retry.budget.name=llm}": {Value: 5},
			"retry.budget.refusals{retry.budget.name=llm}":  {Value: 1},
		}, s.collect(t))
	})
	t.Run("a ratio's ratio, retries left and refusals", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSDK(t)
			b, err := budget.NewRatio(budget.RatioConfig{Percent: 0.5, MinPerSecond: -1})
			require.NoError(t, err)
			reg, err := otelretry.ObserveBudget("llm", b, otelretry.WithMeterProvider(s.mp))
			require.NoError(t, err)
			defer func() { _ = reg.Unregister() }()
			r, err := retry.New(retry.WithBudget(b), retry.WithMaxAttempts(2))
			require.NoError(t, err)
			for range 4 {
				_ = r.Do(t.Context(), failThen(httpErr(503, -1)))
			}
			assert.Equal(t, map[string]point{
				"retry.budget.ratio{retry.budget.name=llm}":     {Value: 0.5},
				"retry.budget.available{retry.budget.name=llm}": {Value: 0},
				"retry.budget.refusals{retry.budget.name=llm}":  {Value: 2},
			}, s.collect(t))
		})
	})
}

func TestABreakerOpening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		ob, err := otelretry.NewBreaker("payments", otelretry.WithMeterProvider(s.mp))
		require.NoError(t, err)
		defer func() { _ = ob.Unregister() }()
		r, err := retry.New(retry.WithMaxAttempts(1))
		require.NoError(t, err)
		b, err := breaker.New(breaker.Settings{
			Name:          "payments",
			ReadyToTrip:   func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 },
			OnStateChange: ob.OnStateChange,
		}, r)
		require.NoError(t, err)
		for range 4 {
			ob.Observe(t.Context(), b.Do(t.Context(), failThen(httpErr(503, -1))))
		}
		assert.Equal(t, map[string]point{
			"retry.breaker.state{retry.breaker.name=payments,retry.breaker.state=closed}":                               {Value: 0},
			"retry.breaker.state{retry.breaker.name=payments,retry.breaker.state=half_open}":                            {Value: 0},
			"retry.breaker.state{retry.breaker.name=payments,retry.breaker.state=open}":                                 {Value: 1},
			"retry.breaker.transitions{retry.breaker.from=closed,retry.breaker.name=payments,retry.breaker.state=open}": {Value: 1},
			"retry.breaker.rejections{retry.breaker.name=payments,retry.breaker.reason=open}":                           {Value: 2},
		}, s.collect(t))
	})
}

func TestCooldowns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		oc, err := otelretry.NewCooldowns("llm", otelretry.WithMeterProvider(s.mp))
		require.NoError(t, err)
		defer func() { _ = oc.Unregister() }()
		c, err := breaker.NewCooldowns[breaker.HostModel](breaker.CooldownSettings{OnCooldown: oc.OnCooldown})
		require.NoError(t, err)
		oc.Watch(c)
		key := breaker.HostModel{Host: "api.example.com", Model: "qwen3"}
		oc.Observe(t.Context(), c.Do(t.Context(), key, func(context.Context) error { return httpErr(503, 30) }))
		for range 3 {
			oc.Observe(t.Context(), c.Do(t.Context(), key, func(context.Context) error { return nil }))
		}
		assert.Equal(t, map[string]point{
			"retry.cooldown.keys{retry.cooldown.name=llm}":           {Value: 1},
			"retry.cooldown.started{retry.cooldown.name=llm}":        {Value: 1},
			"retry.cooldown.local_failures{retry.cooldown.name=llm}": {Value: 3},
		}, s.collect(t))
	})
}

func TestALetterRecordedAndReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		oq, err := otelretry.NewQueue("jobs", otelretry.WithMeterProvider(s.mp))
		require.NoError(t, err)
		defer func() { _ = oq.Unregister() }()
		mem, err := dlq.NewMemory(0)
		require.NoError(t, err)
		q, err := dlq.NewMonitor(mem, oq.Hooks(dlq.MonitorOptions{Logger: discard()}))
		require.NoError(t, err)
		r, err := retry.New(retry.WithMaxAttempts(2))
		require.NoError(t, err)
		job := dlq.Job{ID: "42", Source: "llm-jobs"}
		err = dlq.Do(t.Context(), r, q, job, failThen(httpErr(503, -1), httpErr(503, -1)))
		require.ErrorIs(t, err, dlq.ErrDeadLettered)
		letters, err := q.List(t.Context(), dlq.Filter{})
		require.NoError(t, err)
		require.Len(t, letters, 1)
		group := letters[0].Group()

		var enqueued []dlq.Job
		require.NoError(t, q.Replay(t.Context(), letters[0].ID, dlq.EnqueueFunc(func(_ context.Context, j dlq.Job) error {
			enqueued = append(enqueued, j)
			return nil
		})))
		require.Len(t, enqueued, 1)
		require.ErrorIs(t, q.Replay(t.Context(), letters[0].ID, dlq.EnqueueFunc(func(context.Context, dlq.Job) error { return nil })), dlq.ErrNotFound)
		assert.Equal(t, map[string]point{
			"retry.dlq.letters{retry.class=http 503,retry.dlq.group=" + group + ",retry.dlq.name=jobs,retry.dlq.source=llm-jobs,retry.dlq.stop_reason=max-attempts}": {Value: 1},
			"retry.dlq.replays{retry.dlq.name=jobs,retry.dlq.replay.result=replayed}":                                                                                {Value: 1},
			"retry.dlq.replays{retry.dlq.name=jobs,retry.dlq.replay.result=not_found}":                                                                               {Value: 1},
			"retry.dlq.depth{retry.dlq.name=jobs}":                                                                                                                   {Value: 0},
		}, s.collect(t))
	})
}

func TestLetterGroupsAreCapped(t *testing.T) {
	s := newSDK(t)
	oq, err := otelretry.NewQueue("jobs", otelretry.WithMeterProvider(s.mp))
	require.NoError(t, err)
	defer func() { _ = oq.Unregister() }()
	for i := range 1000 {
		l, ok := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: fmt.Sprint("source ", i)},
			errors.New(strings.Repeat("x", i%300+1)), time.Now())
		require.True(t, ok)
		oq.OnRecord(context.Background(), l)
	}
	series := s.collect(t)
	assert.LessOrEqual(t, len(series), otelretry.MaxDistinct+1)
	sum := 0.0
	for _, p := range series {
		sum += p.Value
	}
	assert.Equal(t, 1000.0, sum, "every letter is counted, under its own values or other")
}

func TestAReplayThroughTheIdempotencyMiddleware(t *testing.T) {
	s := newSDK(t)
	os, err := otelretry.NewServer("orders", otelretry.WithMeterProvider(s.mp))
	require.NoError(t, err)
	store, err := idempotency.NewMemoryStore()
	require.NoError(t, err)
	guard, err := idempotency.Middleware(store, idempotency.WithHook(os.Hook))
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(idempotency.HeaderKey) == "k1" {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusCreated)
	}))
	send := func(key string) int {
		req := httptest.NewRequest(http.MethodPost, "/orders?user=42", strings.NewReader("book"))
		req.Header.Set(idempotency.HeaderKey, key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	var wg sync.WaitGroup
	wg.Go(func() { assert.Equal(t, http.StatusCreated, send("k1")) })
	<-entered
	assert.Equal(t, http.StatusConflict, send("k1"), "in progress")
	close(release)
	wg.Wait()
	assert.Equal(t, http.StatusCreated, send("k1"), "replayed")
	for i := range 100 {
		send(fmt.Sprint("key-", i)) // distinct keys: no new series
	}
	assert.Equal(t, map[string]point{
		"retry.idempotency.requests{retry.idempotency.name=orders,retry.idempotency.outcome=executed}":    {Value: 101},
		"retry.idempotency.requests{retry.idempotency.name=orders,retry.idempotency.outcome=in_progress}": {Value: 1},
		"retry.idempotency.requests{retry.idempotency.name=orders,retry.idempotency.outcome=replayed}":    {Value: 1},
	}, s.collect(t))
}

func TestHTTPAttempts(t *testing.T) {
	s := newSDK(t)
	oh, err := otelretry.NewHTTP("api", otelretry.WithMeterProvider(s.mp))
	require.NoError(t, err)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	r, err := retry.New(retry.WithBackoff(backoff.Constant(0)))
	require.NoError(t, err)
	client, err := httpretry.NewClient(httpretry.WithRetrier(r), httpretry.WithHook(oh.Hook))
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	for _, method := range []string{http.MethodGet, http.MethodPost, "BREW"} {
		req, err := http.NewRequest(method, srv.URL+"/items/42?token=secret", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	got := s.collect(t)
	assert.Equal(t, map[string]point{
		"retry.http.attempts{http.request.method=GET,retry.http.name=api,retry.http.once=false,retry.http.status_class=5xx}":   {Value: 1},
		"retry.http.attempts{http.request.method=GET,retry.http.name=api,retry.http.once=false,retry.http.status_class=2xx}":   {Value: 1},
		"retry.http.attempts{http.request.method=POST,retry.http.name=api,retry.http.once=true,retry.http.status_class=2xx}":   {Value: 1},
		"retry.http.attempts{http.request.method=_OTHER,retry.http.name=api,retry.http.once=true,retry.http.status_class=2xx}": {Value: 1},
	}, only(got, "retry.http.attempts"), "a POST without a key is sent once; an unknown method is _OTHER; no URL in any series")
	assert.Equal(t, uint64(1), got["retry.http.attempt.duration{http.request.method=GET,retry.http.name=api,retry.http.once=false,retry.http.status_class=5xx}"].Count)
}

func TestAnAttemptSpanCarriesTheErrorTypeNotItsText(t *testing.T) {
	s := newSDK(t)
	o, err := otelretry.NewRetrier("payments", otelretry.WithMeterProvider(s.mp),
		otelretry.WithTracerProvider(s.tp), otelretry.WithAttemptSpans())
	require.NoError(t, err)
	err = o.Traced(func(context.Context) error { return httpErr(503, -1) })(context.Background())
	require.Error(t, err)
	spans := s.spans.Ended()
	require.Len(t, spans, 1)
	assert.Contains(t, spans[0].Attributes(), attribute.String("error.type", "*classify.StatusError"))
	assert.Contains(t, spans[0].Attributes(), attribute.String("retry.name", "payments"))
	assert.Empty(t, spans[0].Status().Description, "no error text")
}
