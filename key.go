package retry

import (
	"context"

	"github.com/retrykit/retry/internal/keys"
)

type keyContext struct{}

// WithIdempotencyKey returns a context that marks the call made with it as
// carrying key, so that a timed-out attempt may be retried: the server
// recognises the repeated key and does not run the work twice. The operation
// reads the key with IdempotencyKey and sends it; the same key goes with every
// attempt of the call.
//
// The key must be non-empty, at most 255 characters and free of control
// characters (idempotency.ValidateKey); otherwise ctx is returned with an
// *InvalidError.
func WithIdempotencyKey(ctx context.Context, key string) (context.Context, error) {
	if ctx == nil {
		return ctx, invalid("WithIdempotencyKey", nil, "the context must not be nil")
	}
	if err := keys.Validate(key); err != nil {
		return ctx, &InvalidError{Name: "WithIdempotencyKey", Value: keys.Abbreviate(key), Err: err}
	}
	return context.WithValue(ctx, keyContext{}, key), nil
}

// IdempotencyKey returns the key set by WithIdempotencyKey, if any.
func IdempotencyKey(ctx context.Context) (string, bool) {
	if ctx == nil {
		return "", false
	}
	key, ok := ctx.Value(keyContext{}).(string)
	return key, ok
}

// outermostKey marks a SingleAttempt context: loops running under it make
// one attempt and leave the decision to the code around them.
type outermostKey struct{}

func nestedInOutermost(ctx context.Context) bool { return ctx.Value(outermostKey{}) != nil }

// SingleAttempt returns a context with which retry loops make one attempt
// each and return its error unchanged, for work that must not be repeated —
// a request that is not idempotent, say — while what surrounds the loop (a
// circuit breaker, the observers) still sees the real failure. It is the
// context an Outermost loop gives its operation; the events of a loop under
// it are marked Deferred (observe.Event).
func SingleAttempt(ctx context.Context) context.Context {
	if ctx == nil {
		return nil // the loop reports a nil context as invalid
	}
	return context.WithValue(ctx, outermostKey{}, true)
}
