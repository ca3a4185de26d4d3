package breaker_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// payments is the key most tests call.
var payments = breaker.Key{Target: "payments.example", Operation: "charge"}

// to returns the test's context, keyed k.
func to(t *testing.T, k breaker.Key) context.Context { return breaker.WithKey(t.Context(), k) }

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

// recorder is an observer that keeps every event, and the context it came
// with.
type recorder struct {
	mu     sync.Mutex
	events []observe.Event
	ctxs   []context.Context
}

func (r *recorder) Observe(ctx context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.ctxs = append(r.ctxs, ctx)
}

// of returns the events of kind k.
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

// changes returns the breakers' changes of state, "from→to".
func (r *recorder) changes() []string {
	var out []string
	for _, e := range r.of(observe.BreakerChanged) {
		tr := e.Detail.(breaker.Transition)
		out = append(out, tr.From.String()+"→"+tr.To.String())
	}
	return out
}

// trips after 3 consecutive failures, stays open 1s, lets 2 probes through.
var tripAt3 = breaker.Config{
	MaxRequests: 2,
	Timeout:     time.Second,
	ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
}

// trips at the first failure, stays open 1s, lets 1 probe through.
var tripAt1 = breaker.Config{
	Timeout:     time.Second,
	ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
}

func newBreakers(t *testing.T, c breaker.Config) *breaker.Breakers {
	t.Helper()
	b, err := breaker.New(c)
	require.NoError(t, err)
	return b
}

func newCooldowns(t *testing.T, c breaker.CooldownConfig) *breaker.Cooldowns {
	t.Helper()
	cd, err := breaker.NewCooldowns(c)
	require.NoError(t, err)
	return cd
}

// retrier makes 3 attempts, 10ms apart, unless opts say otherwise.
func retrier(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	base := []retry.Option{retry.WithMaxAttempts(3), retry.WithBackoff(backoff.Constant(10 * ms)), retry.WithJitter(jitter.None{})}
	r, err := retry.New(append(base, opts...)...)
	require.NoError(t, err)
	return r
}

// retryErr returns err as a *retry.Error.
func retryErr(t *testing.T, err error) *retry.Error {
	t.Helper()
	var rerr *retry.Error
	require.ErrorAs(t, err, &rerr)
	return rerr
}

// unavailable is an HTTP 503 asking to come back after seconds (none when
// negative).
func unavailable(seconds int) error {
	h := http.Header{}
	if seconds >= 0 {
		h.Set("Retry-After", strconv.Itoa(seconds))
	}
	return &classify.StatusError{Code: http.StatusServiceUnavailable, Header: h}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}
