package idempotency

import (
	"errors"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/argerr"
)

// Defaults of the options; the package documentation explains each choice.
const (
	DefaultLease          = 30 * time.Second
	DefaultRetention      = 24 * time.Hour
	DefaultMaxResultSize  = 1 << 20 // 1 MiB
	DefaultPollInterval   = 500 * time.Millisecond
	DefaultMaxRequestBody = 1 << 20 // 1 MiB
	DefaultRetryAfter     = time.Second
)

// firstPoll is the first wait between two checks of a key in progress; the
// waits double up to the poll interval.
const firstPoll = 10 * time.Millisecond

// CallOption configures Do and Once. Options apply in order, a later one
// overriding an earlier one; a bad value makes the call return a
// *retry.InvalidError naming the option and its value, before any work.
type CallOption interface{ applyCall(*callConfig) }

// MiddlewareOption configures Middleware, which returns the first bad one as
// a *retry.InvalidError naming the option and its value.
type MiddlewareOption interface{ applyMiddleware(*middlewareConfig) }

// Option configures Do, Once and Middleware alike: how long a claim and an
// outcome last, and what is kept. Each function that takes it validates it as
// it takes its own options.
type Option interface {
	CallOption
	MiddlewareOption
}

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
}

func defaultExec() execConfig {
	return execConfig{lease: DefaultLease, retention: DefaultRetention, maxResult: DefaultMaxResultSize,
		failValue: func(_ []byte, err error) []byte { return []byte(err.Error()) }}
}

// callConfig configures one call of Do or Once.
type callConfig struct {
	execConfig
	poll    time.Duration
	maxWait time.Duration
	err     error
}

// setting is one option: its name and value for the error that reports it,
// why the value is refused (nil if it is good), and what it sets in the
// configuration C it applies to.
type setting[C any] struct {
	name  string
	value any
	bad   error
	set   func(*C)
}

// apply sets the option in c unless an earlier option was refused; a refused
// option records its error in *err.
func (s setting[C]) apply(c *C, err *error) {
	switch {
	case *err != nil:
	case s.bad != nil:
		*err = &retry.InvalidError{Name: s.name, Value: s.value, Err: s.bad}
	default:
		s.set(c)
	}
}

// sharedOption is an Option: it sets what Do, Once and Middleware share.
type sharedOption struct{ setting[execConfig] }

func (o sharedOption) applyCall(c *callConfig)             { o.apply(&c.execConfig, &c.err) }
func (o sharedOption) applyMiddleware(c *middlewareConfig) { o.apply(&c.execConfig, &c.err) }

type callOption struct{ setting[callConfig] }

func (o callOption) applyCall(c *callConfig) { o.apply(c, &c.err) }

// applyAll applies opts in order; a nil one is refused under name.
func applyAll[O any](name string, opts []O, err *error, apply func(O)) {
	for _, o := range opts {
		if any(o) == nil {
			if *err == nil {
				*err = argerr.New(name, nil, "must not be nil")
			}
			continue
		}
		apply(o)
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

// WithLease sets how long a claim lasts without news of its executor. While
// the work runs, its claim is extended every lease/3, so a live executor
// keeps the key however long it works, and a crashed one frees it within the
// lease. At least 1ms; the default is 30s.
func WithLease(d time.Duration) Option {
	return sharedOption{setting[execConfig]{"idempotency.WithLease", d, atLeastMillisecond(d),
		func(c *execConfig) { c.lease = d }}}
}

// WithRetention sets how long a finished execution's outcome is kept, and so
// how long its key replays instead of running again. At least 1ms; the
// default is 24h.
func WithRetention(d time.Duration) Option {
	return sharedOption{setting[execConfig]{"idempotency.WithRetention", d, atLeastMillisecond(d),
		func(c *execConfig) { c.retention = d }}}
}

// WithMaxResultSize sets the retention cap in bytes: a result larger than n
// is returned to its first caller and then reported to later ones as not
// retained (ErrNotRetained). For Middleware, n bounds the encoded response.
// At least 0; the default is 1 MiB.
func WithMaxResultSize(n int) Option {
	return sharedOption{setting[execConfig]{"idempotency.WithMaxResultSize", n, notNegative(n),
		func(c *execConfig) { c.maxResult = n }}}
}

// KeepFailures keeps a failed execution's outcome for the retention window,
// so that later calls with the key get it back (ErrStoredFailure from Do and
// Once, the stored error response from Middleware) instead of running again.
// Without it — the default — a failure releases the key at once and a retry
// runs anew. Keep failures when a failure is deterministic and costly to
// repeat; release them when it may be transient. The middleware never keeps
// an authentication failure (401, 403, 407): fresh credentials deserve a run.
func KeepFailures() Option {
	return sharedOption{setting[execConfig]{"idempotency.KeepFailures", true, nil,
		func(c *execConfig) { c.keepFailures = true }}}
}

// WithPollInterval sets the longest wait between two checks of a key in
// progress, for stores that cannot signal the end of a claim (see Waiter).
// Waits start at 10ms and double up to d. At least 1ms; the default is
// 500ms.
func WithPollInterval(d time.Duration) CallOption {
	return callOption{setting[callConfig]{"idempotency.WithPollInterval", d, atLeastMillisecond(d),
		func(c *callConfig) { c.poll = d }}}
}

// WithMaxWait bounds how long a call waits for an execution in progress
// before it returns ErrInProgress; 0, the default, waits as long as the
// context allows.
func WithMaxWait(d time.Duration) CallOption {
	return callOption{setting[callConfig]{"idempotency.WithMaxWait", d, notNegative(d),
		func(c *callConfig) { c.maxWait = d }}}
}
