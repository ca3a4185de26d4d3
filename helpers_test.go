package retry_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/require"
)

const (
	ms  = time.Millisecond
	sec = time.Second
)

var (
	errReset   = syscall.ECONNRESET
	errUnknown = errors.New("something odd")
)

func httpErr(code int, retryAfter int) error {
	h := http.Header{}
	if retryAfter >= 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	return &classify.StatusError{Code: code, Header: h}
}

// script is an operation that fails with its errors in turn, then succeeds.
type script struct {
	mu    sync.Mutex
	errs  []error
	calls int
	at    []time.Time // when each call started (fake time under synctest)
}

func failing(errs ...error) *script { return &script{errs: errs} }

// always fails with err forever.
func always(err error) *script {
	errs := make([]error, 1000)
	for i := range errs {
		errs[i] = err
	}
	return &script{errs: errs}
}

func (s *script) op(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	s.calls++
	if s.calls <= len(s.errs) {
		return s.errs[s.calls-1]
	}
	return nil
}

// gaps returns the time between consecutive calls.
func (s *script) gaps() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(s.at); i++ {
		out = append(out, s.at[i].Sub(s.at[i-1]))
	}
	return out
}

// exact is a Retrier with an exact (unjittered) schedule: 100ms, 200ms, 400ms…
func exact(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{
		retry.WithBackoff(backoff.Exponential{Base: 100 * ms, MaxDelay: 10 * sec}),
		retry.WithJitter(jitter.None{}),
	}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

// events records hook events.
type events struct {
	mu   sync.Mutex
	list []observe.Event
}

func (e *events) hook(_ context.Context, ev observe.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *events) kinds() []observe.Kind {
	var out []observe.Kind
	for _, ev := range e.list {
		out = append(out, ev.Kind)
	}
	return out
}
