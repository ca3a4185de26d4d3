package breaker_test

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
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// dependency counts its calls and answers with err (nil: success).
type dependency struct {
	mu    sync.Mutex
	calls int
	err   error
}

func (d *dependency) call(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	return d.err
}

func (d *dependency) set(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.err = err
}

func (d *dependency) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// events records what reaches a breaker's OnStateChange.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) onChange(name string, from, to breaker.State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, name+": "+from.String()+"→"+to.String())
}

func (e *events) changes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, c := range e.list {
		out = append(out, strings.TrimPrefix(c, "payments: "))
	}
	return out
}

// observed returns the shared settings reporting to ev.
func observed(ev *events) breaker.Settings {
	s := settings
	s.OnStateChange = ev.onChange
	return s
}

func retrier(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(10 * ms)), retry.WithJitter(jitter.None{})}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

// trips after 3 consecutive failures, stays open 1s, lets 2 probes through.
var settings = breaker.Settings{
	Name:        "payments",
	MaxRequests: 2,
	Timeout:     time.Second,
	ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
}

func TestAnOpenBreakerRejectsAtOnceWithoutCallingTheDependency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		b, err := breaker.New(observed(&ev), retrier(t))
		require.NoError(t, err)
		dep := &dependency{err: syscall.ECONNREFUSED}
		for range 3 {
			require.ErrorIs(t, b.Do(t.Context(), dep.call), retry.ErrExhausted)
		}
		assert.Equal(t, 9, dep.count(), "three logical calls of three attempts each")
		assert.Equal(t, []string{"closed→open"}, ev.changes())

		start := time.Now()
		err = b.Do(t.Context(), dep.call)
		assert.Equal(t, 9, dep.count(), "rejected: the dependency was not called")
		assert.Zero(t, time.Since(start), "no retry, no sleep")
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.ErrorIs(t, err, gobreaker.ErrOpenState)
		assert.NotErrorIs(t, err, syscall.ECONNREFUSED, "told apart from the dependency's own errors")
		var rej *breaker.RejectedError
		require.ErrorAs(t, err, &rej)
		assert.Equal(t, "payments", rej.Breaker)
		assert.Equal(t, "breaker payments: circuit breaker is open: the call was not made", err.Error())
	})
}

func TestHalfOpenLetsTheProbesThroughAndSuccessCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		b, err := breaker.New(observed(&ev), retrier(t, retry.WithMaxAttempts(1)))
		require.NoError(t, err)
		dep := &dependency{err: syscall.ECONNRESET}
		for range 3 {
			_ = b.Do(t.Context(), dep.call)
		}
		require.ErrorIs(t, b.Do(t.Context(), dep.call), breaker.ErrOpen)

		time.Sleep(time.Second + ms) // the open timeout has passed: half-open
		dep.set(nil)
		// Two probes in flight at once take both slots; a third call is refused.
		release := make(chan struct{})
		slow := func(ctx context.Context) error { <-release; return dep.call(ctx) }
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { assert.NoError(t, b.Do(t.Context(), slow)) })
		}
		synctest.Wait()
		assert.ErrorIs(t, b.Do(t.Context(), dep.call), breaker.ErrTooManyRequests)
		close(release)
		wg.Wait()

		require.NoError(t, b.Do(t.Context(), dep.call), "two successful probes closed it")
		assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed"}, ev.changes())
	})
}

func TestAFailedProbeReopens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		b, err := breaker.New(observed(&ev), retrier(t, retry.WithMaxAttempts(1)))
		require.NoError(t, err)
		dep := &dependency{err: syscall.ECONNRESET}
		for range 3 {
			_ = b.Do(t.Context(), dep.call)
		}
		time.Sleep(time.Second + ms)
		calls := dep.count()
		assert.ErrorIs(t, b.Do(t.Context(), dep.call), syscall.ECONNRESET, "the probe went through")
		assert.Equal(t, calls+1, dep.count())
		assert.ErrorIs(t, b.Do(t.Context(), dep.call), breaker.ErrOpen, "and its failure reopened the breaker")
		assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→open"}, ev.changes())
	})
}

func TestWhatCountsAsFailureFollowsTheRetrierClassifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := breaker.New(settings, retrier(t))
		require.NoError(t, err)
		badRequest := &dependency{err: &classify.StatusError{Code: http.StatusBadRequest}}
		for range 10 {
			assert.ErrorIs(t, b.Do(t.Context(), badRequest.call), retry.ErrPermanent)
		}
		assert.Equal(t, 10, badRequest.count(), "a 400 the caller caused never opens the breaker")

		ctx, cancel := context.WithCancel(t.Context())
		canceled := func(context.Context) error { cancel(); return context.Canceled }
		for range 10 {
			_ = b.Do(ctx, canceled)
		}
		ok := &dependency{}
		assert.NoError(t, b.Do(t.Context(), ok.call), "cancelled calls are not counted")

		custom, err := breaker.New(settings, retrier(t, retry.WithClassifier(func(err error) classify.Decision {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return classify.Decision{Verdict: classify.Stop, Reason: "refused is final here"}
			}
			return classify.Decision{}
		})))
		require.NoError(t, err)
		refused := &dependency{err: syscall.ECONNREFUSED}
		for range 5 {
			_ = custom.Do(t.Context(), refused.call)
		}
		assert.Equal(t, 5, refused.count(), "the caller's classifier decides for the breaker too")
	})
}

func TestOutsideCountsOneLogicalCallPerAttemptCountsEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{err: syscall.ECONNRESET}
		outside, err := breaker.New(settings, retrier(t))
		require.NoError(t, err)
		require.ErrorIs(t, outside.Do(t.Context(), dep.call), retry.ErrExhausted)
		assert.Equal(t, 3, dep.count(), "three attempts, one failure counted: still closed")
		require.ErrorIs(t, outside.Do(t.Context(), dep.call), retry.ErrExhausted)

		dep = &dependency{err: syscall.ECONNRESET}
		each, err := breaker.New(settings, retrier(t, retry.WithMaxAttempts(5)), breaker.PerAttempt())
		require.NoError(t, err)
		err = each.Do(t.Context(), dep.call)
		assert.Equal(t, 3, dep.count(), "the third failed attempt opened it; the fourth was refused")
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.ErrorIs(t, err, retry.ErrPermanent, "a rejection is permanent for the call: no retry")
		var rerr *retry.Error
		require.ErrorAs(t, err, &rerr)
		assert.Equal(t, 4, rerr.Attempts)
	})
}

func TestStateAndCountsAreReadable(t *testing.T) {
	b, err := breaker.New(settings, retrier(t, retry.WithMaxAttempts(1)))
	require.NoError(t, err)
	assert.Equal(t, breaker.StateClosed, b.State())
	dep := &dependency{err: syscall.ECONNRESET}
	_ = b.Do(t.Context(), dep.call)
	assert.Equal(t, uint32(1), b.Counts().ConsecutiveFailures)
	_ = b.Do(t.Context(), dep.call)
	_ = b.Do(t.Context(), dep.call)
	assert.Equal(t, breaker.StateOpen, b.State())
}

func TestClassifyRecognisesRejections(t *testing.T) {
	for _, err := range []error{gobreaker.ErrOpenState, gobreaker.ErrTooManyRequests, breaker.ErrOpen, breaker.ErrTooManyRequests} {
		assert.Equal(t, classify.Stop, breaker.Classify(err).Verdict, "%v", err)
	}
	assert.Equal(t, classify.NoOpinion, breaker.Classify(syscall.ECONNRESET).Verdict)
}

func TestBadSettings(t *testing.T) {
	r := retrier(t)
	tests := []struct {
		name    string
		s       breaker.Settings
		r       *retry.Retrier
		opts    []breaker.Option
		wantErr string
	}{
		{"a negative timeout", breaker.Settings{Timeout: -1}, r, nil, "breaker.Settings.Timeout(-1ns): must not be negative"},
		{"a negative interval", breaker.Settings{Interval: -time.Second}, r, nil, "breaker.Settings.Interval(-1s): must not be negative"},
		{"a nil Retrier", breaker.Settings{}, nil, nil, "breaker.New(<nil>): the Retrier must not be nil"},
		{"a nil option", breaker.Settings{}, r, []breaker.Option{nil}, "breaker.Option(<nil>): must not be nil"},
		{"a nil circuit factory", breaker.Settings{}, r, []breaker.Option{breaker.WithCircuit(nil)}, "breaker.WithCircuit(<nil>): must not be nil"},
		{"a factory returning nil", breaker.Settings{}, r, []breaker.Option{breaker.WithCircuit(func(gobreaker.Settings) (breaker.Circuit, error) { return nil, nil })}, "returned a nil Circuit"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := breaker.New(tt.s, tt.r, tt.opts...)
			assert.ErrorIs(t, err, retry.ErrInvalid)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
	_, err := breaker.New(breaker.Settings{}, r, breaker.WithCircuit(func(gobreaker.Settings) (breaker.Circuit, error) { return nil, errors.New("store down") }))
	assert.ErrorContains(t, err, "store down")
}

func TestBadArgumentsDoNotPanic(t *testing.T) {
	ran := false
	op := func(context.Context) error { ran = true; return nil }
	vop := func(context.Context) (int, error) { ran = true; return 0, nil }
	b, err := breaker.New(breaker.Settings{}, retrier(t))
	require.NoError(t, err)
	var nilCtx context.Context
	var nilCD *breaker.Cooldowns[string]
	calls := map[string]func() error{
		"Do on a zero Breaker":         func() error { return new(breaker.Breaker).Do(t.Context(), op) },
		"Do on a nil Breaker":          func() error { return (*breaker.Breaker)(nil).Do(t.Context(), op) },
		"Do with a nil op":             func() error { return b.Do(t.Context(), nil) },
		"Do with a nil context":        func() error { return b.Do(nilCtx, op) },
		"Value with a nil Breaker":     func() error { _, _, err := breaker.Value(t.Context(), nil, vop); return err },
		"Value with a nil op":          func() error { _, _, err := breaker.Value[int](t.Context(), b, nil); return err },
		"Cooldowns.Do on nil":          func() error { return nilCD.Do(t.Context(), "k", op) },
		"Cooldowns.Do on a zero value": func() error { return new(breaker.Cooldowns[string]).Do(t.Context(), "k", op) },
		"Cooldowns.Do with a nil op": func() error {
			cd, _ := breaker.NewCooldowns[string](breaker.CooldownSettings{})
			return cd.Do(t.Context(), "k", nil)
		},
		"Cooldowns.Do with a nil context": func() error {
			cd, _ := breaker.NewCooldowns[string](breaker.CooldownSettings{})
			return cd.Do(nilCtx, "k", op)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(), retry.ErrInvalid)
			assert.False(t, ran, "nothing ran")
		})
	}
	assert.Equal(t, breaker.StateClosed, new(breaker.Breaker).State())
	assert.Zero(t, (*breaker.Breaker)(nil).Counts())
	assert.NoError(t, nilCD.Check("k"))
	_, ok := nilCD.Observe("k", errors.New("x"))
	assert.False(t, ok)
	nilCD.Start("k", time.Now())
	assert.Zero(t, nilCD.Len())
}

func TestAPanickingOperationCountsAsAFailure(t *testing.T) {
	b, err := breaker.New(breaker.Settings{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }}, retrier(t, retry.WithMaxAttempts(1)))
	require.NoError(t, err)
	assert.Panics(t, func() { _ = b.Do(t.Context(), func(context.Context) error { panic("boom") }) })
	assert.ErrorIs(t, b.Do(t.Context(), func(context.Context) error { return nil }), breaker.ErrOpen)
}

func TestValueReportsTheLoopStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, opts := range [][]breaker.Option{nil, {breaker.PerAttempt()}} {
			b, err := breaker.New(breaker.Settings{}, retrier(t))
			if opts != nil {
				b, err = breaker.New(breaker.Settings{}, retrier(t), opts...)
			}
			require.NoError(t, err)
			calls := 0
			v, st, err := breaker.Value(t.Context(), b, func(context.Context) (int, error) {
				if calls++; calls < 3 {
					return 0, syscall.ECONNRESET
				}
				return 7, nil
			})
			require.NoError(t, err)
			assert.Equal(t, 7, v)
			assert.Equal(t, retry.Stats{Attempts: 3, Waited: 20 * ms, Elapsed: 20 * ms, Winner: 3}, st)
		}
	})
}
