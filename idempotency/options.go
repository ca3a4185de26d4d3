package idempotency

import (
	"errors"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
)

// Defaults of the options; the package documentation explains each choice.
const (
	defaultLease          = 30 * time.Second
	defaultRetention      = 24 * time.Hour
	defaultMaxResultSize  = 1 << 20 // 1 MiB
	defaultPollInterval   = 500 * time.Millisecond
	defaultMaxRequestBody = 1 << 20 // 1 MiB
	defaultRetryAfter     = time.Second
)

// firstPoll is the first wait between two checks of a key in progress; the
// waits double up to the poll interval.
const firstPoll = 10 * time.Millisecond

// Option configures Do, Once or Middleware. Options apply in order, a later
// one overriding an earlier one; the first bad one makes Do and Once return,
// and Middleware refuse, a *retry.InvalidError naming the option and its
// value, before any work.
//
// WithLease, WithRetention, WithMaxResultSize, KeepFailures and WithObserver
// configure all three; WithMaxWait and WithPollInterval only Do and Once; the
// others only Middleware. An option given where it would mean nothing is refused alike.
type Option func(*config) *retry.InvalidError

// execConfig is what every execution needs: Do's, Once's and the
// middleware's.
type execConfig struct {
	lease        time.Duration
	retention    time.Duration
	maxResult    int
	keepFailures bool
	// failValue is what a kept failure stores: the error's text for Do, the
	// failed response for Middleware.
	failValue func(value []byte, err error) []byte
	observers []observe.Observer // WithObserver
}

// config is what the options set: for one call of Do or Once, or for one
// Middleware (middleware).
type config struct {
	execConfig
	middleware bool
	poll       time.Duration // Do and Once
	maxWait    time.Duration // Do and Once
	guardConfig
}

func defaultExec() execConfig {
	return execConfig{lease: defaultLease, retention: defaultRetention, maxResult: defaultMaxResultSize,
		failValue: func(_ []byte, err error) []byte { return []byte(err.Error()) }}
}

// apply applies opts in order and returns the first refusal.
func (c *config) apply(opts []Option) error {
	for _, o := range opts {
		if o == nil {
			return argerr.New("idempotency.Option", nil, "must not be nil")
		}
		if err := o(c); err != nil {
			return err
		}
	}
	return nil
}

// audience is what an option configures.
type audience uint8

const (
	forAll        audience = iota // Do, Once and Middleware
	forCalls                      // Do and Once
	forMiddleware                 // Middleware
)

// option is an Option named name, for a: value shows in its error, bad is
// why the value is refused (nil if it is good), and set applies it.
func option(name string, value any, bad error, a audience, set func(*config)) Option {
	return func(c *config) *retry.InvalidError {
		switch {
		case bad != nil:
			return &retry.InvalidError{Name: name, Value: value, Err: bad}
		case a == forCalls && c.middleware:
			return argerr.New(name, value, "configures Do and Once, not Middleware")
		case a == forMiddleware && !c.middleware:
			return argerr.New(name, value, "configures Middleware, not Do or Once")
		}
		set(c)
		return nil
	}
}

var (
	errUnderMillisecond = errors.New("must be at least 1ms")
	errNegative         = errors.New("must not be negative")
	errNil              = errors.New("must not be nil")
)

// atLeastMillisecond refuses a duration too short to be a lease or a wait.
func atLeastMillisecond(d time.Duration) error {
	if d < time.Millisecond {
		return errUnderMillisecond
	}
	return nil
}

func notNegative[N int | int64 | time.Duration](n N) error {
	if n < 0 {
		return errNegative
	}
	return nil
}

// refuseIf returns the reason a value is refused when bad holds, else nil.
func refuseIf(bad bool, reason string) error {
	if bad {
		return errors.New(reason)
	}
	return nil
}

// WithLease sets how long a claim lasts without news of its executor. While
// the work runs, its claim is extended every lease/3, so a live executor
// keeps the key however long it works, and a crashed one frees it within the
// lease. At least 1ms; the default is 30s.
func WithLease(d time.Duration) Option {
	return option("idempotency.WithLease", d, atLeastMillisecond(d), forAll, func(c *config) { c.lease = d })
}

// WithRetention sets how long a finished execution's outcome is kept, and so
// how long its key replays instead of running again. At least 1ms; the
// default is 24h.
func WithRetention(d time.Duration) Option {
	return option("idempotency.WithRetention", d, atLeastMillisecond(d), forAll, func(c *config) { c.retention = d })
}

// WithMaxResultSize sets the retention cap in bytes: a result larger than n
// is returned to its first caller and then reported to later ones as not
// retained (ErrNotRetained). For Middleware, n bounds the encoded response.
// At least 0; the default is 1 MiB.
func WithMaxResultSize(n int) Option {
	return option("idempotency.WithMaxResultSize", n, notNegative(n), forAll, func(c *config) { c.maxResult = n })
}

// KeepFailures keeps a failed execution's outcome for the retention window,
// so that later calls with the key get it back (ErrStoredFailure from Do and
// Once, the stored error response from Middleware) instead of running again.
// Without it — the default — a failure releases the key at once and a retry
// runs anew. Keep failures when a failure is deterministic and costly to
// repeat; release them when it may be transient. The middleware never keeps
// an authentication failure (401, 403, 407): fresh credentials deserve a run.
func KeepFailures() Option {
	return option("idempotency.KeepFailures", true, nil, forAll, func(c *config) { c.keepFailures = true })
}

// WithPollInterval sets, for Do and Once, the longest wait between two
// checks of a key in progress, for stores that cannot signal the end of a
// claim (see Waiter). Waits start at 10ms and double up to d. At least 1ms;
// the default is 500ms.
func WithPollInterval(d time.Duration) Option {
	return option("idempotency.WithPollInterval", d, atLeastMillisecond(d), forCalls, func(c *config) { c.poll = d })
}

// WithMaxWait bounds how long Do and Once wait for an execution in progress
// before they return ErrInProgress; 0, the default, waits as long as the
// context allows. (The middleware does not wait: it answers 409.)
func WithMaxWait(d time.Duration) Option {
	return option("idempotency.WithMaxWait", d, notNegative(d), forCalls, func(c *config) { c.maxWait = d })
}
