package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/otelretry"
	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

var qwen = breaker.Key{Target: "api.example.com", Operation: "qwen3"}

func TestWatchedBudgets(t *testing.T) {
	t.Run("a token bucket's tokens, threshold and refusals", func(t *testing.T) {
		s := newSDK(t)
		b, err := budget.NewTokenBucket(budget.TokenBucketConfig{Capacity: 10, Cost: 5})
		require.NoError(t, err)
		r, o := observed(t, s, retry.WithBudget(b))
		require.NoError(t, o.Watch(b))
		require.ErrorIs(t, r.Do(t.Context(), failThen(httpErr(503, -1))), retry.ErrBudget)
		assert.Equal(t, map[string]point{
			"retry.budget.tokens{" + name + "}":    {Value: 5},
			"retry.budget.threshold{" + name + "}": {Value: 5},
			"retry.budget.refusals{" + name + "}":  {Value: 1},
		}, only(s.collect(t), "retry.budget.tokens", "retry.budget.threshold", "retry.budget.refusals"))
	})
	t.Run("a ratio's ratio, retries left and refusals", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSDK(t)
			b, err := budget.NewRatio(budget.RatioConfig{Percent: 0.5, MinPerSecond: -1})
			require.NoError(t, err)
			r, o := observed(t, s, retry.WithBudget(b), retry.WithMaxAttempts(2))
			require.NoError(t, o.Watch(b))
			for range 4 {
				_ = r.Do(t.Context(), failThen(httpErr(503, -1)))
			}
			assert.Equal(t, map[string]point{
				"retry.budget.ratio{" + name + "}":     {Value: 0.5},
				"retry.budget.available{" + name + "}": {Value: 0},
				"retry.budget.refusals{" + name + "}":  {Value: 2},
			}, only(s.collect(t), "retry.budget.ratio", "retry.budget.available", "retry.budget.refusals"))
		})
	})
}

func TestABreakerOpening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		b, err := breaker.New(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 }})
		require.NoError(t, err)
		r, _ := observed(t, s, retry.WithMaxAttempts(1), retry.WithBreakers(b))
		ctx, span := s.tp.Tracer("test").Start(breaker.WithKey(t.Context(), qwen), "checkout")
		for range 4 {
			_ = r.Do(ctx, failThen(httpErr(503, -1)))
		}
		span.End()
		const k = "retry.breaker.name=api.example.com/qwen3"
		got := s.collect(t)
		assert.Equal(t, map[string]point{
			"retry.breaker.state{" + k + ",retry.breaker.state=closed," + name + "}":                               {Value: 0},
			"retry.breaker.state{" + k + ",retry.breaker.state=half_open," + name + "}":                            {Value: 0},
			"retry.breaker.state{" + k + ",retry.breaker.state=open," + name + "}":                                 {Value: 1},
			"retry.breaker.transitions{retry.breaker.from=closed," + k + ",retry.breaker.state=open," + name + "}": {Value: 1},
			"retry.breaker.rejections{" + k + ",retry.breaker.reason=open," + name + "}":                           {Value: 2},
		}, only(got, "retry.breaker.state", "retry.breaker.transitions", "retry.breaker.rejections"))
		assert.Equal(t, point{Count: 2}, got["retry.call.duration{"+name+",retry.outcome=breaker-open}"])

		var changed []string
		for _, e := range s.spans.Ended()[0].Events() {
			if e.Name == "retry.breaker_changed" {
				changed = append(changed, e.Name)
				assert.Contains(t, e.Attributes, attribute.String("retry.breaker.state", "open"))
			}
		}
		assert.Len(t, changed, 1)
	})
}

// TestBreakerKeysAreCapped: keys name hosts and models, which grow without
// end; past MaxDistinct they are counted under "other", with no state.
func TestBreakerKeysAreCapped(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	for i := range 3 * otelretry.MaxDistinct {
		k := breaker.Key{Target: fmt.Sprint("host-", i)}
		o.Observe(t.Context(), observe.Event{Kind: observe.BreakerChanged,
			Detail: breaker.Transition{Key: k, From: breaker.StateClosed, To: breaker.StateOpen}})
	}
	got := s.collect(t)
	assert.Len(t, only(got, "retry.breaker.state"), 3*otelretry.MaxDistinct, "three states of the first MaxDistinct keys")
	transitions := only(got, "retry.breaker.transitions")
	assert.Len(t, transitions, otelretry.MaxDistinct+1)
	assert.Equal(t, point{Value: 2 * otelretry.MaxDistinct},
		transitions["retry.breaker.transitions{retry.breaker.from=closed,retry.breaker.name=other,retry.breaker.state=open,"+name+"}"])
}

func TestCooldowns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		c, err := breaker.NewCooldowns(breaker.CooldownConfig{})
		require.NoError(t, err)
		impatient, o := observed(t, s, retry.WithMaxAttempts(1), retry.WithMaxDelay(time.Second), retry.WithCooldowns(c))
		require.NoError(t, o.Watch(c))
		patient, err := retry.New(retry.WithMaxAttempts(1), retry.WithMaxDelay(time.Minute), retry.WithCooldowns(c), retry.WithObserver(o))
		require.NoError(t, err)
		ctx := breaker.WithKey(t.Context(), qwen)
		require.ErrorIs(t, impatient.Do(ctx, failThen(httpErr(503, 30))), retry.ErrExhausted)
		for range 3 {
			require.ErrorIs(t, impatient.Do(ctx, failThen()), breaker.ErrCooldown, "failed locally")
		}
		assert.Equal(t, map[string]point{
			"retry.cooldown.keys{" + name + "}":           {Value: 1},
			"retry.cooldown.started{" + name + "}":        {Value: 1},
			"retry.cooldown.local_failures{" + name + "}": {Value: 3},
		}, only(s.collect(t), "retry.cooldown.keys", "retry.cooldown.started", "retry.cooldown.local_failures"))

		require.NoError(t, patient.Do(ctx, failThen()), "waits the cooldown out")
		assert.Equal(t, map[string]point{"retry.cooldown.wait.duration{" + name + "}": {Count: 1, Sum: 30}},
			only(s.collect(t), "retry.cooldown.wait.duration"))
	})
}

// letterOf returns the letter of a job whose call ended with err, and the
// event a dead letter queue reports for it.
func letterOf(t *testing.T, job dlq.Job, err error) (dlq.Letter, observe.Event) {
	t.Helper()
	l, ok := dlq.NewLetter(job, err, time.Now())
	require.True(t, ok)
	e := observe.Event{Kind: observe.LetterAdded, Detail: l, Decision: l.Last.Decision}
	var re *retry.Error
	if errors.As(err, &re) {
		e.Stop = re.Stop
	}
	return l, e
}

func TestALetterRecordedAndReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		r, o := observed(t, s, retry.WithMaxAttempts(2))
		err := r.Do(t.Context(), failThen(httpErr(503, -1), httpErr(503, -1)))
		l, added := letterOf(t, dlq.Job{ID: "42", Source: "llm-jobs"}, err)
		o.Observe(t.Context(), added)
		_, failed := letterOf(t, dlq.Job{ID: "43", Source: "llm-jobs"}, errors.New("not from a retry loop"))
		o.Observe(t.Context(), failed)
		o.Observe(t.Context(), observe.Event{Kind: observe.QueueCounted, Detail: 2})
		o.Observe(t.Context(), observe.Event{Kind: observe.LetterReplayed, Detail: l.ID})
		o.Observe(t.Context(), observe.Event{Kind: observe.LetterReplayed, Detail: l.ID, Err: dlq.ErrNotFound})
		o.Observe(t.Context(), observe.Event{Kind: observe.QueueCounted, Detail: 1})

		src := "retry.dlq.source=llm-jobs"
		assert.Equal(t, map[string]point{
			"retry.dlq.letters{retry.class=http 503,retry.dlq.group=" + l.Group() + "," + src + ",retry.dlq.stop_reason=max-attempts," + name + "}":    {Value: 1},
			"retry.dlq.letters{retry.class=unclassified,retry.dlq.group=" + failedGroup(t) + "," + src + ",retry.dlq.stop_reason=failed," + name + "}": {Value: 1},
			"retry.dlq.replays{retry.dlq.replay.result=replayed," + name + "}":                                                                         {Value: 1},
			"retry.dlq.replays{retry.dlq.replay.result=not_found," + name + "}":                                                                        {Value: 1},
			"retry.dlq.depth{" + name + "}": {Value: 1},
		}, only(s.collect(t), "retry.dlq.letters", "retry.dlq.replays", "retry.dlq.depth"))
	})
}

func failedGroup(t *testing.T) string {
	l, _ := letterOf(t, dlq.Job{ID: "43", Source: "llm-jobs"}, errors.New("not from a retry loop"))
	return l.Group()
}

// TestEveryStopIsALetterStopReason: a letter's stop reason is its loop's
// Stop label, from the one list.
func TestEveryStopIsALetterStopReason(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	l, e := letterOf(t, dlq.Job{ID: "1", Source: "jobs"}, errors.New("boom"))
	want := map[string]point{}
	for stop := range policy.Stops() {
		e.Stop = stop
		o.Observe(t.Context(), e)
		want["retry.dlq.letters{retry.class=unclassified,retry.dlq.group="+l.Group()+",retry.dlq.source=jobs,retry.dlq.stop_reason="+stop.String()+","+name+"}"] = point{Value: 1}
	}
	assert.Equal(t, want, only(s.collect(t), "retry.dlq.letters"))
}

func TestLetterGroupsAreCapped(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	for i := range 1000 {
		_, e := letterOf(t, dlq.Job{ID: fmt.Sprint(i), Source: fmt.Sprint("source ", i)}, errors.New(strings.Repeat("x", i%300+1)))
		o.Observe(context.Background(), e)
	}
	series := only(s.collect(t), "retry.dlq.letters")
	assert.LessOrEqual(t, len(series), otelretry.MaxDistinct+1)
	sum := 0.0
	for _, p := range series {
		sum += p.Value
	}
	assert.Equal(t, 1000.0, sum, "every letter is counted, under its own values or other")
}

func TestIdempotencyRequests(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	request := func(out string, key string, err error) {
		o.Observe(t.Context(), observe.Event{Kind: observe.Request, Err: err,
			Detail: idempotency.Event{Outcome: out, Status: 201, Key: key, Err: err}})
	}
	request("executed", "k1", nil)
	request("in progress", "k1", nil)
	request("replayed", "k1", nil)
	request("store failed", "k2", errors.New("redis: connection refused"))
	request("outcome(200)", "k3", nil)
	for i := range 100 {
		request("executed", fmt.Sprint("key-", i), nil) // distinct keys: no new series
	}
	const n = "retry.idempotency.outcome="
	assert.Equal(t, map[string]point{
		"retry.idempotency.requests{" + n + "executed," + name + "}":         {Value: 101},
		"retry.idempotency.requests{" + n + "in_progress," + name + "}":      {Value: 1},
		"retry.idempotency.requests{" + n + "replayed," + name + "}":         {Value: 1},
		"retry.idempotency.requests{" + n + "store_failed," + name + "}":     {Value: 1},
		"retry.idempotency.requests{" + n + "other," + name + "}":            {Value: 1},
		"retry.idempotency.store_errors{" + n + "store_failed," + name + "}": {Value: 1},
	}, only(s.collect(t), "retry.idempotency.requests", "retry.idempotency.store_errors"))
}

// TestEveryIdempotencyOutcomeIsAValueOfItsOwn: each outcome the middleware
// reports is a retry.idempotency.outcome of its own, its label.
func TestEveryIdempotencyOutcomeIsAValueOfItsOwn(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	want := map[string]point{}
	for _, out := range []string{"executed", "replayed",
		"in progress", "key reuse", "not retained",
		"store failed", "scope full", "rejected"} {
		o.Observe(t.Context(), observe.Event{Kind: observe.Request, Detail: idempotency.Event{Outcome: out}})
		label := strings.ReplaceAll(out, " ", "_")
		want["retry.idempotency.requests{retry.idempotency.outcome="+label+","+name+"}"] = point{Value: 1}
	}
	assert.Equal(t, want, only(s.collect(t), "retry.idempotency.requests"))
	assert.NotContains(t, want, "retry.idempotency.requests{retry.idempotency.outcome=other,"+name+"}")
}

// TestUnknownDetailsAreIgnored: an event whose Detail is not what its kind
// says counts nothing, and does not panic.
func TestUnknownDetailsAreIgnored(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	for _, k := range []observe.Kind{observe.BreakerChanged, observe.LetterAdded, observe.QueueCounted, observe.Request, observe.Kind(200)} {
		o.Observe(t.Context(), observe.Event{Kind: k, Detail: "something else"})
	}
	assert.Empty(t, s.collect(t))
}

// TestARejectionsReasonIsTheStateThatRefused: the refusal says which state
// refused when it is the call's last error; otherwise (a hedge, a retry
// refused after a failure) the key's last state heard of does.
func TestARejectionsReasonIsTheStateThatRefused(t *testing.T) {
	s := newSDK(t)
	o := newObserver(t, s, otelretry.Config{})
	ctx := breaker.WithKey(t.Context(), qwen)
	refused := func(last error) {
		o.Observe(ctx, observe.Event{Kind: observe.GaveUp, Stop: policy.StopOpen,
			Err: &retry.Error{Stop: policy.StopOpen, Reason: retry.ErrBreakerOpen, Last: last}})
	}
	refused(fmt.Errorf("breaker %s: %w", qwen, breaker.ErrTooManyRequests))
	refused(fmt.Errorf("breaker %s: %w", qwen, breaker.ErrOpen))
	o.Observe(ctx, observe.Event{Kind: observe.BreakerChanged,
		Detail: breaker.Transition{Key: qwen, From: breaker.StateOpen, To: breaker.StateHalfOpen}})
	o.Observe(ctx, observe.Event{Kind: observe.HedgeSkipped, Stop: policy.StopOpen})
	refused(httpErr(503, -1))
	const k = "retry.breaker.name=api.example.com/qwen3"
	assert.Equal(t, map[string]point{
		"retry.breaker.rejections{" + k + ",retry.breaker.reason=half_open," + name + "}": {Value: 3},
		"retry.breaker.rejections{" + k + ",retry.breaker.reason=open," + name + "}":      {Value: 1},
	}, only(s.collect(t), "retry.breaker.rejections"))
}
