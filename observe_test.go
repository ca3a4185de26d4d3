package retry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHookSeesEveryAttemptRetryAndGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		s := always(httpErr(503, -1))
		err := exact(t, retry.WithObserver(observe.Func(ev.hook))).Do(t.Context(), s.op)
		require.Error(t, err)
		assert.Equal(t, []observe.Kind{
			observe.AttemptDone, observe.RetryScheduled,
			observe.AttemptDone, observe.RetryScheduled,
			observe.AttemptDone, observe.GaveUp,
		}, ev.kinds())
		attempts := []int{1, 1, 2, 2, 3, 3}
		for i, e := range ev.list {
			assert.Equal(t, attempts[i], e.Attempt, "event %d (%v) is 1-based", i, e.Kind)
		}
		retry1 := ev.list[1]
		assert.Equal(t, 100*ms, retry1.Delay)
		assert.Equal(t, classify.ReasonUnavailable, retry1.Decision.Reason)
		assert.Equal(t, classify.Retry, retry1.Decision.Verdict)
		assert.Error(t, retry1.Err)
		retry2 := ev.list[3]
		assert.Equal(t, 200*ms, retry2.Delay)
		assert.Equal(t, 100*ms, retry2.Waited)
		assert.Equal(t, 100*ms, retry2.Elapsed)
		gaveUp := ev.list[5]
		assert.Same(t, err, gaveUp.Err)
		assert.Equal(t, 300*ms, gaveUp.Waited)
	})
}

func TestHookSeesASuccess(t *testing.T) {
	var ev events
	require.NoError(t, exact(t, retry.WithObserver(observe.Func(ev.hook))).Do(t.Context(), failing().op))
	require.Len(t, ev.list, 1)
	assert.Equal(t, observe.AttemptDone, ev.list[0].Kind)
	assert.Equal(t, 1, ev.list[0].Attempt)
	assert.NoError(t, ev.list[0].Err)
}

func TestHookSeesAGiveUpBeforeTheFirstAttempt(t *testing.T) {
	var ev events
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.Error(t, exact(t, retry.WithObserver(observe.Func(ev.hook))).Do(ctx, failing().op))
	assert.Equal(t, []observe.Kind{observe.GaveUp}, ev.kinds())
}

func TestSeveralHooksAllRun(t *testing.T) {
	var a, b events
	require.NoError(t, exact(t, retry.WithObserver(observe.Func(a.hook)), retry.WithObserver(observe.Func(b.hook))).Do(t.Context(), failing().op))
	assert.Len(t, a.list, 1)
	assert.Len(t, b.list, 1)
}

func TestLoggerLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
		// A short backoff wait, then a 2s Retry-After, then give up.
		s := always(errReset)
		s.errs[1] = httpErr(429, 2)
		err := exact(t, retry.WithLogger(log)).Do(t.Context(), s.op)
		require.Error(t, err)
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.Len(t, lines, 3, buf.String())
		assert.Contains(t, lines[0], `level=DEBUG msg="retry: waiting before the next attempt" attempt=1 delay=100ms class="connection reset"`)
		assert.Contains(t, lines[1], `level=INFO msg="retry: waiting before the next attempt" attempt=2 delay=2.`)
		assert.Contains(t, lines[1], `class="http 429"`)
		assert.Contains(t, lines[2], `level=INFO msg="retry: gave up" error.reason="attempts exhausted" error.attempts=3`)
		assert.Contains(t, lines[2], `error.last_error="connection reset by peer"`)
	})
}

func TestLoggerAtInfoSkipsShortWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
		require.NoError(t, exact(t, retry.WithLogger(log)).Do(t.Context(), failing(errReset).op))
		assert.Empty(t, buf.String(), "a 100ms wait is DEBUG")
	})
}

func TestNilLoggerLogsNothing(t *testing.T) {
	r, err := retry.New(retry.WithLogger(nil))
	require.NoError(t, err)
	require.NoError(t, r.Do(t.Context(), func(context.Context) error { return nil }))
}

func TestErrorLogValue(t *testing.T) {
	e := &retry.Error{Stats: retry.Stats{Attempts: 2, Waited: sec, Elapsed: 2 * sec}, Reason: retry.ErrWaitTooLong,
		Last: errors.New("busy"), Decision: classify.Decision{Reason: "http 429"}, RetryAfter: time.Minute}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "err", e)
	out := buf.String()
	for _, want := range []string{`"reason":"server asked to wait longer than the maximum delay"`, `"attempts":2`, `"waited":1000000000`,
		`"class":"http 429"`, `"retry_after":60000000000`, `"last_error":"busy"`} {
		assert.Contains(t, out, want)
	}
}
