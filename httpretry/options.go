package httpretry

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/internal/breakerset"
)

// DefaultDrainLimit is how much of a discarded body is read before closing it.
const DefaultDrainLimit = 64 << 10

// MaxKindBody is how much of an error response's body is read for its kind
// (WithKind, and the idempotency answers of a keyed request).
const MaxKindBody = 64 << 10

// Option configures New and NewClient. Options apply in order; a later one
// overrides an earlier one of the same kind (WithHook adds). A bad option —
// nil, or given a value it refuses — makes New return a *retry.InvalidError
// naming it and its value.
type Option func(*Transport) *retry.InvalidError

// WithBase sets the transport that sends each attempt. The default is
// http.DefaultTransport.
func WithBase(rt http.RoundTripper) Option {
	return func(t *Transport) *retry.InvalidError {
		if rt == nil {
			return argerr.New("httpretry.WithBase", nil, "must not be nil")
		}
		t.base = rt
		return nil
	}
}

// WithRetrier sets the retry policy. The default is retry.New() with no
// options.
func WithRetrier(r *retry.Retrier) Option {
	return func(t *Transport) *retry.InvalidError {
		if r == nil {
			return argerr.New("httpretry.WithRetrier", nil, "must not be nil")
		}
		t.r = r
		return nil
	}
}

// WithBreakers gives every (host, model) its own circuit breaker around the
// retried request, with the settings that settings returns for it (its Name
// defaults to the key) and opts. The breakers are made as keys are first
// seen, and kept: at most 10,000 (breaker.DefaultMaxKeys); past that, a
// request for a new key runs without a breaker, so that requests to ever new
// hosts cannot grow the transport's memory without bound.
func WithBreakers(settings func(breaker.HostModel) breaker.Settings, opts ...breaker.Option) Option {
	return func(t *Transport) *retry.InvalidError {
		if settings == nil {
			return argerr.New("httpretry.WithBreakers", nil, "the settings function must not be nil")
		}
		for i, o := range opts {
			if o == nil {
				return argerr.New("httpretry.WithBreakers", "option "+strconv.Itoa(i), "must not be nil")
			}
		}
		t.breakers = breakerset.New("httpretry", settings, 0, opts...)
		return nil
	}
}

// WithCooldowns checks every attempt against cd: a (host, model) cooling
// down after a 503 with Retry-After fails locally, without a request. The
// cooldowns report through cd's own CooldownSettings.OnCooldown.
func WithCooldowns(cd *breaker.Cooldowns[breaker.HostModel]) Option {
	return func(t *Transport) *retry.InvalidError {
		if cd == nil {
			return argerr.New("httpretry.WithCooldowns", nil, "must not be nil")
		}
		t.cooldowns = cd
		return nil
	}
}

// WithModel reads the model (or any second key) of a request, for the
// breakers and cooldowns: one per (host, model). The default reads none.
func WithModel(model func(*http.Request) string) Option {
	return func(t *Transport) *retry.InvalidError {
		if model == nil {
			return argerr.New("httpretry.WithModel", nil, "must not be nil")
		}
		t.model = model
		return nil
	}
}

// WithKind reads an API's own error code from an error response's body (at
// most MaxKindBody of it, which stays readable), so that classification
// can tell apart, for example, a gateway's "upstream-error" 502
// (classify.KindUpstreamError) or a spend cap.
func WithKind(kind func(resp *http.Response, body []byte) string) Option {
	return func(t *Transport) *retry.InvalidError {
		if kind == nil {
			return argerr.New("httpretry.WithKind", nil, "must not be nil")
		}
		t.kind = kind
		return nil
	}
}

// WithDrainLimit sets how many bytes of a discarded body are read before it
// is closed; a larger body's connection is closed instead of reused, and 0
// closes every discarded body at once. The default is DefaultDrainLimit.
func WithDrainLimit(n int64) Option {
	return func(t *Transport) *retry.InvalidError {
		if n < 0 {
			return argerr.New("httpretry.WithDrainLimit", n, "must not be negative")
		}
		t.drainLimit = n
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
	return func(t *Transport) *retry.InvalidError {
		t.mint = true
		return nil
	}
}

// WithHook adds a function called after every attempt, with the attempt's
// method, redacted URL, status (or error) and, for a request sent once, why.
// It runs on the calling goroutine, synchronously: it must be quick and safe
// for concurrent use. Several hooks run in the order given.
func WithHook(f func(context.Context, Attempt)) Option {
	return func(t *Transport) *retry.InvalidError {
		if f == nil {
			return argerr.New("httpretry.WithHook", nil, "must not be nil")
		}
		t.hooks = append(t.hooks, f)
		return nil
	}
}

// WithLogger logs, at INFO, every request sent once that failed, with why it
// was not retried: the failure a retry would have hidden. The Retrier's own
// logger (retry.WithLogger) logs the waits and give-ups of the others. A nil
// logger logs nothing, as does a Transport without this option.
func WithLogger(l *slog.Logger) Option {
	return func(t *Transport) *retry.InvalidError {
		t.logger = l
		return nil
	}
}
