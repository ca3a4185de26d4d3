package breaker

import "context"

// Key names what a call is to: a target — a host, a gRPC target, a
// database — and an operation on it — a model, a gRPC method, a query. It is
// the one call key of the library: breakers and cooldowns keep one state per
// Key, package httpretry sets (host, model) and package grpcretry (target,
// method), and a limit.Keyed can key by it. The zero Key is a key like any
// other: calls that carry none share its state.
type Key struct {
	Target    string
	Operation string
}

// String returns "target/operation", or the target alone when the operation
// is empty.
func (k Key) String() string {
	if k.Operation == "" {
		return k.Target
	}
	return k.Target + "/" + k.Operation
}

type keyContext struct{}

// keyed is a context carrying a Key. It answers Value with itself, a
// pointer, so that setting a key costs one allocation and reading it none
// (context.WithValue would box the Key too).
type keyed struct {
	context.Context
	k Key
}

func (c *keyed) Value(key any) any {
	if key == (keyContext{}) {
		return c
	}
	return c.Context.Value(key)
}

// WithKey returns a context whose calls are to k: a Retrier's breakers and
// cooldowns (retry.WithBreakers, retry.WithCooldowns) read it with KeyOf.
// A nil ctx is returned as it is.
func WithKey(ctx context.Context, k Key) context.Context {
	if ctx == nil {
		return nil
	}
	return &keyed{ctx, k}
}

// KeyOf returns the key set by WithKey, and whether there was one; the zero
// Key when there was none, or ctx is nil.
func KeyOf(ctx context.Context) (Key, bool) {
	if ctx == nil {
		return Key{}, false
	}
	if c, ok := ctx.Value(keyContext{}).(*keyed); ok {
		return c.k, true
	}
	return Key{}, false
}
