package grpcretry

import (
	"context"
	"errors"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// limitedError is what a call returns when the Retrier's limiter
// (retry.WithLimiter) refused an attempt: the loop's *retry.Error, whose
// Reason is retry.ErrLimited, with a gRPC status of its own. Without it,
// status.Code would report the last attempt's code — UNKNOWN when the first
// attempt was refused and nothing was sent, or the server's UNAVAILABLE
// before a refused retry, which a retry layer around this one would retry.
type limitedError struct {
	err    error // the *retry.Error
	status *status.Status
}

func (e *limitedError) Error() string { return e.err.Error() }

func (e *limitedError) Unwrap() error { return e.err }

// GRPCStatus returns RESOURCE_EXHAUSTED — the code gRPC gives a limit the
// client itself hit — with a message that says the refusal was local.
func (e *limitedError) GRPCStatus() *status.Status { return e.status }

// callError returns the error a call that failed with err ends with: an
// *EndedError when the caller's context ended it, a limitedError when the
// limiter refused it, err otherwise.
func callError(ctx context.Context, err error) error {
	if ended := endedBy(ctx, err); ended != err {
		return ended
	}
	if !errors.Is(err, retry.ErrLimited) {
		return err
	}
	return &limitedError{err: err, status: status.New(codes.ResourceExhausted, err.Error())}
}

// targetMethodKey marks the (target, method) of a call in the context its
// retry loop runs with.
type targetMethodKey struct{}

// WithTargetMethodContext puts each call's (target, method) in the context
// its retry loop runs with, where TargetMethodOf reads it: so that a
// limit.Keyed given to the Retrier (retry.WithLimiter) limits each (target,
// method) on its own. It costs a context value (one allocation) per call.
func WithTargetMethodContext() Option {
	return func(i *Interceptor) *retry.InvalidError {
		i.keyCtx = true
		return nil
	}
}

// TargetMethodOf returns the (target, method) of the call whose retry loop
// runs with ctx — breaker.HostModel{Host: the ClientConn's target, Model:
// the full method name} — if the Interceptor was given
// WithTargetMethodContext. It is the key function of a
// limit.Keyed[breaker.HostModel].
func TargetMethodOf(ctx context.Context) (breaker.HostModel, bool) {
	if ctx == nil {
		return breaker.HostModel{}, false
	}
	k, ok := ctx.Value(targetMethodKey{}).(breaker.HostModel)
	return k, ok
}

// withTargetMethod returns the loop's context, with the call's (target,
// method) if the Interceptor was asked for it.
func (i *Interceptor) withTargetMethod(ctx context.Context, key breaker.HostModel) context.Context {
	if !i.keyCtx {
		return ctx
	}
	return context.WithValue(ctx, targetMethodKey{}, key)
}
