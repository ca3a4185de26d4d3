package httpretry

import (
	"context"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
)

// hostModelKey marks the (host, model) of a request in the context its
// retry loop runs with.
type hostModelKey struct{}

// WithHostModelContext puts each request's (host, model) — the host of its
// URL and the model WithModel reads — in the context its retry loop runs
// with, where HostModelOf reads it: so that a limit.Keyed given to the
// transport's Retrier (retry.WithLimiter) limits each (host, model) on its
// own. It costs a context value (one allocation) per request.
func WithHostModelContext() Option {
	return func(t *Transport) *retry.InvalidError {
		t.hostModelCtx = true
		return nil
	}
}

// HostModelOf returns the (host, model) of the request whose retry loop runs
// with ctx, if the transport was given WithHostModelContext. It is the key
// function of a limit.Keyed[breaker.HostModel].
func HostModelOf(ctx context.Context) (breaker.HostModel, bool) {
	if ctx == nil {
		return breaker.HostModel{}, false
	}
	hm, ok := ctx.Value(hostModelKey{}).(breaker.HostModel)
	return hm, ok
}

// withHostModel returns the loop's context, with the request's (host, model)
// if the transport asked for it.
func (c *call) withHostModel(ctx context.Context) context.Context {
	if !c.t.hostModelCtx {
		return ctx
	}
	return context.WithValue(ctx, hostModelKey{}, c.hm)
}
