package idempotency

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/retrykit/retry"
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

// Option configures Do, Once, Middleware or NewTransport. Options apply in
// order, a later one overriding an earlier one. A bad value, or an option
// given to a function it does not apply to, makes the function return a
// *retry.InvalidError naming the option and its value.
type Option func(*config)

// target is what an Option is given to, to reject options that would be
// silently ignored there.
type target uint8

const (
	forDo target = 1 << iota
	forOnce
	forMiddleware
	forTransport
)

func (t target) String() string {
	var names []string
	for _, n := range []struct {
		t    target
		name string
	}{{forDo, "Do"}, {forOnce, "Once"}, {forMiddleware, "Middleware"}, {forTransport, "NewTransport"}} {
		if t&n.t != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ", ")
}

type config struct {
	target       target
	err          error
	lease        time.Duration
	retention    time.Duration
	maxResult    int
	keepFailures bool
	poll         time.Duration
	maxWait      time.Duration
	keyOptional  bool
	methods      []string
	maxBody      int64
	fingerprint  func(*http.Request, []byte) Fingerprint
	scope        func(*http.Request) string
	retryAfter   time.Duration
	// failValue is what a kept failure stores: the error's text for Do, the
	// failed response for Middleware.
	failValue func(value []byte, err error) []byte
}

func newConfig(t target, opts []Option) (*config, error) {
	c := &config{
		target: t, lease: DefaultLease, retention: DefaultRetention, maxResult: DefaultMaxResultSize,
		poll: DefaultPollInterval, methods: []string{http.MethodPost, http.MethodPatch},
		maxBody: DefaultMaxRequestBody, fingerprint: requestFingerprint, retryAfter: DefaultRetryAfter,
		failValue: func(_ []byte, err error) []byte { return []byte(err.Error()) },
	}
	for _, o := range opts {
		if o == nil {
			c.fail("idempotency.Option", nil, "must not be nil")
			continue
		}
		o(c)
	}
	return c, c.err
}

func (c *config) fail(name string, value any, reason string) {
	if c.err == nil {
		c.err = invalid(name, value, reason)
	}
}

// invalid is the error for a bad argument or option: the library's one type
// for them, matching retry.ErrInvalid.
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}

// use reports whether the option may be given where it is; otherwise it
// records the error.
func (c *config) use(name string, value any, allowed target) bool {
	if c.target&allowed == 0 {
		c.fail(name, value, "applies to "+allowed.String()+" only")
		return false
	}
	return true
}

// WithLease sets how long a claim lasts without news of its executor. While
// fn runs, its claim is extended every lease/3, so a live executor keeps the
// key however long it works, and a crashed one frees it within the lease. At
// least 1ms; the default is 30s. For Do, Once and Middleware.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if !c.use("idempotency.WithLease", d, forDo|forOnce|forMiddleware) {
			return
		}
		if d < time.Millisecond {
			c.fail("idempotency.WithLease", d, "must be at least 1ms")
			return
		}
		c.lease = d
	}
}

// WithRetention sets how long a finished execution's outcome is kept, and so
// how long its key replays instead of running again. At least 1ms; the
// default is 24h. For Do, Once and Middleware.
func WithRetention(d time.Duration) Option {
	return func(c *config) {
		if !c.use("idempotency.WithRetention", d, forDo|forOnce|forMiddleware) {
			return
		}
		if d < time.Millisecond {
			c.fail("idempotency.WithRetention", d, "must be at least 1ms")
			return
		}
		c.retention = d
	}
}

// WithMaxResultSize sets the retention cap in bytes: a result larger than n
// is returned to its first caller and then reported to later ones as not
// retained (ErrNotRetained). At least 0; the default is 1 MiB. For Do, Once
// and Middleware (where n bounds the encoded response).
func WithMaxResultSize(n int) Option {
	return func(c *config) {
		if !c.use("idempotency.WithMaxResultSize", n, forDo|forOnce|forMiddleware) {
			return
		}
		if n < 0 {
			c.fail("idempotency.WithMaxResultSize", n, "must not be negative")
			return
		}
		c.maxResult = n
	}
}

// KeepFailures keeps a failed execution's outcome for the retention window,
// so that later calls with the key get it back (ErrStoredFailure, or the
// stored error response from Middleware) instead of running again. Without it
// — the default — a failure releases the key at once and a retry runs anew.
// Keep failures when a failure is deterministic and costly to repeat; release
// them when it may be transient. For Do and Middleware (Once runs its effect
// until it succeeds).
func KeepFailures() Option {
	return func(c *config) {
		if c.use("idempotency.KeepFailures", true, forDo|forMiddleware) {
			c.keepFailures = true
		}
	}
}

// WithPollInterval sets the longest wait between two checks of a key in
// progress, for stores that cannot signal the end of a claim (see Waiter) and
// for a server that sends no Retry-After with its 409. Waits start at 10ms
// and double up to d. At least 1ms; the default is 500ms. For Do, Once and
// NewTransport.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if !c.use("idempotency.WithPollInterval", d, forDo|forOnce|forTransport) {
			return
		}
		if d < time.Millisecond {
			c.fail("idempotency.WithPollInterval", d, "must be at least 1ms")
			return
		}
		c.poll = d
	}
}

// WithMaxWait bounds how long a call waits for an execution in progress
// before it returns ErrInProgress; 0, the default, waits as long as the
// context allows. For Do, Once and NewTransport.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		if !c.use("idempotency.WithMaxWait", d, forDo|forOnce|forTransport) {
			return
		}
		if d < 0 {
			c.fail("idempotency.WithMaxWait", d, "must not be negative")
			return
		}
		c.maxWait = d
	}
}

// KeyOptional lets requests without an Idempotency-Key through to the
// handler, unguarded. By default a guarded request without a key is refused
// with 400. For Middleware.
func KeyOptional() Option {
	return func(c *config) {
		if c.use("idempotency.KeyOptional", true, forMiddleware) {
			c.keyOptional = true
		}
	}
}

// WithMethods sets the request methods the middleware guards; requests with
// other methods pass through. The default is POST and PATCH, the methods
// that are not idempotent by themselves. For Middleware.
func WithMethods(methods ...string) Option {
	return func(c *config) {
		if !c.use("idempotency.WithMethods", methods, forMiddleware) {
			return
		}
		if len(methods) == 0 {
			c.fail("idempotency.WithMethods", methods, "needs at least one method")
			return
		}
		for _, m := range methods {
			if m == "" || strings.ContainsAny(m, " \t\r\n") {
				c.fail("idempotency.WithMethods", methods, "a method must be a non-empty token")
				return
			}
		}
		c.methods = append([]string(nil), methods...)
	}
}

// WithMaxRequestBody sets the largest request body the middleware reads to
// fingerprint a request, in bytes; a larger one is refused with 413. At
// least 0; the default is 1 MiB. For Middleware.
func WithMaxRequestBody(n int64) Option {
	return func(c *config) {
		if !c.use("idempotency.WithMaxRequestBody", n, forMiddleware) {
			return
		}
		if n < 0 {
			c.fail("idempotency.WithMaxRequestBody", n, "must not be negative")
			return
		}
		c.maxBody = n
	}
}

// WithFingerprint sets how the middleware fingerprints a request, given the
// request and its body as received. The default hashes the method, the path,
// the raw query and the body bytes — what the client sent, never a parsed
// model with defaults filled in. For Middleware.
func WithFingerprint(f func(r *http.Request, body []byte) Fingerprint) Option {
	return func(c *config) {
		if !c.use("idempotency.WithFingerprint", "func", forMiddleware) {
			return
		}
		if f == nil {
			c.fail("idempotency.WithFingerprint", nil, "must not be nil")
			return
		}
		c.fingerprint = f
	}
}

// WithScope partitions keys by the string f returns for a request — the
// authenticated account, typically — so that one client can never replay
// another's response by guessing its key. The default is one scope for all
// requests: use it only when every client is trusted alike. For Middleware.
func WithScope(f func(r *http.Request) string) Option {
	return func(c *config) {
		if !c.use("idempotency.WithScope", "func", forMiddleware) {
			return
		}
		if f == nil {
			c.fail("idempotency.WithScope", nil, "must not be nil")
			return
		}
		c.scope = f
	}
}

// WithRetryAfter sets the Retry-After the middleware sends with a 409 for a
// request whose key is in progress: when the client should check again.
// Whole seconds, at least 1s; the default is 1s. For Middleware.
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) {
		if !c.use("idempotency.WithRetryAfter", d, forMiddleware) {
			return
		}
		if d < time.Second || d%time.Second != 0 {
			c.fail("idempotency.WithRetryAfter", d, "must be a whole number of seconds, at least 1s")
			return
		}
		c.retryAfter = d
	}
}
