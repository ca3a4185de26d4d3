package limit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/internal/argerr"
)

// defaultMaxKeys bounds the limiters a Keyed keeps.
const defaultMaxKeys = 10_000

// Keyed is a Limiter per key, made on first use, for limits that belong to a
// key — an API key, a host, a (host, model) — rather than to a process: like
// the breaker's cooldown registry, one key's limit does not slow another's.
// Each call's key comes from its context, read by the function given to
// NewKeyed; a call whose context carries no key is not limited. The call
// key, breaker.Key, is one: package httpretry sets each request's (host,
// model) and package grpcretry each call's (target, method), for a Keyed
// that reads it with breaker.KeyOf (see CallKeyed); any other key, set with
// context.WithValue where the call is made, is another.
//
// It is safe for concurrent use; finding a key's limiter takes no lock once
// it exists.
type Keyed[K comparable] struct {
	key        func(context.Context) (K, bool)
	newLimiter func(K) (Limiter, error)
	max        int
	m          sync.Map // K → Limiter
	n          atomic.Int64
	makes      sync.Mutex
}

// NewKeyed returns a registry that reads a call's key with key and makes the
// limiter of a new key with newLimiter, keeping at most maxKeys (0 means 10,000;
// past it, new keys are not limited); or an error matching retry.ErrInvalid
// for a nil function or a negative maxKeys.
func NewKeyed[K comparable](key func(context.Context) (K, bool), newLimiter func(K) (Limiter, error), maxKeys int) (*Keyed[K], error) {
	switch {
	case key == nil:
		return nil, argerr.New("limit.NewKeyed", nil, "the key function must not be nil")
	case newLimiter == nil:
		return nil, argerr.New("limit.NewKeyed", nil, "the newLimiter function must not be nil")
	case maxKeys < 0:
		return nil, argerr.New("limit.NewKeyed", maxKeys, "maxKeys must not be negative")
	case maxKeys == 0:
		maxKeys = defaultMaxKeys
	}
	return &Keyed[K]{key: key, newLimiter: newLimiter, max: maxKeys}, nil
}

// CallKeyed reports whether k's keys are call keys (K is breaker.Key), read
// from the context with breaker.KeyOf: a Retrier given k then says it is
// Keyed, and an integration that sets the call key only for the stages
// that read it (a context value costs an allocation per call) sets it.
func (k *Keyed[K]) CallKeyed() bool {
	switch any(*new(K)).(type) {
	case breaker.Key:
		return true
	}
	return false
}

// Validate reports a registry not made by NewKeyed.
func (k *Keyed[K]) Validate() error {
	if k == nil || k.key == nil {
		return argerr.New("limit.Keyed", nil, "must be made by limit.NewKeyed")
	}
	return nil
}

// Get returns key's limiter, made now if it is new, for its metrics; nil
// and newLimiter's error if that failed, or nil if the registry is
// full.
func (k *Keyed[K]) Get(key K) (Limiter, error) {
	if k == nil || k.key == nil {
		return nil, k.Validate()
	}
	if l, ok := k.m.Load(key); ok {
		return l.(Limiter), nil
	}
	k.makes.Lock()
	defer k.makes.Unlock()
	if l, ok := k.m.Load(key); ok {
		return l.(Limiter), nil
	}
	if k.n.Load() >= int64(k.max) {
		return nil, nil
	}
	l, err := k.newLimiter(key)
	if err != nil || l == nil {
		return nil, err
	}
	k.m.Store(key, l)
	k.n.Add(1)
	return l, nil
}

// of returns the limiter of the call's key, or nil.
func (k *Keyed[K]) of(ctx context.Context) Limiter {
	if k == nil || k.key == nil || ctx == nil {
		return nil
	}
	key, ok := k.key(ctx)
	if !ok {
		return nil
	}
	l, _ := k.Get(key)
	return l
}

// Acquire asks the limiter of the call's key. A call without a key, or
// whose key's limiter could not be made, is not limited; a registry not
// made by NewKeyed refuses every attempt.
func (k *Keyed[K]) Acquire(ctx context.Context, maxWait time.Duration) bool {
	if k == nil || k.key == nil {
		return false
	}
	if l := k.of(ctx); l != nil {
		return l.Acquire(ctx, maxWait)
	}
	return true
}

// Record tells the limiter of the call's key how the attempt ended.
func (k *Keyed[K]) Record(ctx context.Context, o Outcome) {
	if l := k.of(ctx); l != nil {
		l.Record(ctx, o)
	}
}
