package httpretry

import (
	"net/http"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/internal/argerr"
)

// defaultDrainLimit is how much of a discarded body is read before closing
// it (WithDrainLimit).
const defaultDrainLimit = 64 << 10

// maxKindBody is how much of an error response's body is read for its kind
// (WithKind, and the idempotency answers of a keyed request).
const maxKindBody = 64 << 10

// Option configures New and NewClient. Options apply in order; a later one
// overrides an earlier one of the same kind. A bad option — nil, or given a
// value it refuses — makes New return a *retry.InvalidError naming it and
// its value.
type Option func(*config) *retry.InvalidError

// config is what the options set.
type config struct {
	r          *retry.Retrier    // New's: every request runs through it
	base       http.RoundTripper // nil: http.DefaultTransport, read at each request
	model      func(*http.Request) string
	kind       func(*http.Response, []byte) string
	hedger     *retry.Hedger // nil: no hedging
	drainLimit int64
	mint       bool
}

// WithBase sets the transport that sends each attempt. The default is
// http.DefaultTransport.
func WithBase(rt http.RoundTripper) Option {
	return func(c *config) *retry.InvalidError {
		if rt == nil {
			return argerr.New("httpretry.WithBase", nil, "must not be nil")
		}
		c.base = rt
		return nil
	}
}

// WithModel reads the model (or any second key) of a request: the
// Operation of its call key, whose Target is the request's host (see
// breaker.Key). The Retrier's breakers, cooldowns and keyed limiter keep
// one state per (host, model). The default reads none: one per host.
func WithModel(model func(*http.Request) string) Option {
	return func(c *config) *retry.InvalidError {
		if model == nil {
			return argerr.New("httpretry.WithModel", nil, "must not be nil")
		}
		c.model = model
		return nil
	}
}

// WithKind reads an API's own error code from an error response's body (at
// most its first 64 KiB, which stay readable), so that classification can
// tell apart, for example, a gateway's "upstream-error" 502
// (classify.KindUpstreamError) or a spend cap.
func WithKind(kind func(resp *http.Response, body []byte) string) Option {
	return func(c *config) *retry.InvalidError {
		if kind == nil {
			return argerr.New("httpretry.WithKind", nil, "must not be nil")
		}
		c.kind = kind
		return nil
	}
}

// WithDrainLimit sets how many bytes of a discarded body are read before it
// is closed; a larger body's connection is closed instead of reused, and 0
// closes every discarded body at once. The default is 64 KiB.
func WithDrainLimit(n int64) Option {
	return func(c *config) *retry.InvalidError {
		if n < 0 {
			return argerr.New("httpretry.WithDrainLimit", n, "must not be negative")
		}
		c.drainLimit = n
		return nil
	}
}

// MintKeys gives every request that is not idempotent by its method (POST,
// PATCH, …) and carries no key — in its Idempotency-Key header or its
// context — a new key (idempotency.NewKey), sent with each of its attempts,
// so that it may be retried. Use it only with a server that honours
// Idempotency-Key: to any other, a repeated POST is a second order.
//
// A key is minted per RoundTrip, which is one logical call: a caller that
// repeats a call itself (a job redelivered, a user's second click) must put
// its own key in the request — one derived from the job with
// idempotency.DeriveKey — or each repetition is a new call with a new key.
// No key is ever minted to replace one the server refused as reused.
func MintKeys() Option {
	return func(c *config) *retry.InvalidError {
		c.mint = true
		return nil
	}
}

// WithHedging hedges the requests the transport may repeat — an idempotent
// method, or a keyed request — through a retry.Hedger built from New's
// Retrier (retry.NewHedger, with retry.Idempotent: the transport knows
// which requests are safe to repeat): a request still without a response
// after the delay d gives is sent again alongside, up to maxInFlight at
// once, and the first success wins. A request sent once is not hedged. A
// nil or invalid d, or a maxInFlight below 2, is refused.
func WithHedging(d hedge.Delay, maxInFlight int) Option {
	return func(c *config) *retry.InvalidError {
		r, err := c.r.With(retry.Idempotent())
		if err == nil {
			c.hedger, err = retry.NewHedger(r, d, maxInFlight)
		}
		if err != nil {
			return renamed("httpretry.WithHedging", err)
		}
		return nil
	}
}

// renamed returns err, a refusal of the retry package, under name: the
// option the caller wrote.
func renamed(name string, err error) *retry.InvalidError {
	if ie, ok := err.(*retry.InvalidError); ok {
		return &retry.InvalidError{Name: name, Value: ie.Value, Err: ie.Err}
	}
	return &retry.InvalidError{Name: name, Err: err}
}
