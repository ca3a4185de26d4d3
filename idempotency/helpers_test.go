package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/require"
)

var (
	fp      = idempotency.NewFingerprint([]byte("POST /orders"), []byte(`{"item":"book"}`))
	otherFP = idempotency.NewFingerprint([]byte("POST /orders"), []byte(`{"item":"pen"}`))
	errBoom = errors.New("boom")
)

// The response header fields of a replay, as the protocol names them.
const (
	headerReplay   = "Idempotent-Replay"
	headerReplayOf = "Idempotent-Replay-Of"
)

// memStore is what the memory store is: a Store, a Waiter, and its Len.
type memStore interface {
	idempotency.Store
	idempotency.Waiter
	Len() int
}

// newMemory returns a memory store with the default bounds.
func newMemory(t testing.TB) memStore {
	return newBounded(t, idempotency.MemoryConfig{})
}

// newBounded returns a memory store bounded as c says.
func newBounded(t testing.TB, c idempotency.MemoryConfig) memStore {
	t.Helper()
	s, err := idempotency.NewMemoryStore(c)
	require.NoError(t, err)
	return s.(memStore)
}

// polled hides the memory store's Waiter, so that callers poll it as they
// poll a remote store.
type polled struct{ idempotency.Store }

// counter is an fn that counts its runs, takes d, and returns value.
type counter struct {
	runs  atomic.Int32
	d     time.Duration
	value string
	err   error
}

func (c *counter) fn(ctx context.Context) ([]byte, error) {
	c.runs.Add(1)
	if c.d > 0 {
		select {
		case <-time.After(c.d):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	return []byte(c.value), nil
}

// faulty is a store whose methods can be made to fail.
type faulty struct {
	idempotency.Store
	claimErr, extendErr, completeErr, releaseErr error
	completes, releases                          atomic.Int32
}

func (f *faulty) Claim(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, lease time.Duration) (idempotency.Record, bool, error) {
	if f.claimErr != nil {
		return idempotency.Record{}, false, f.claimErr
	}
	return f.Store.Claim(ctx, key, rec, lease)
}

func (f *faulty) Extend(ctx context.Context, key idempotency.StoreKey, token string, lease time.Duration) error {
	if f.extendErr != nil {
		return f.extendErr
	}
	return f.Store.Extend(ctx, key, token, lease)
}

func (f *faulty) Complete(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) error {
	f.completes.Add(1)
	if f.completeErr != nil {
		return f.completeErr
	}
	return f.Store.Complete(ctx, key, rec, retention)
}

func (f *faulty) Release(ctx context.Context, key idempotency.StoreKey, token string) error {
	f.releases.Add(1)
	if f.releaseErr != nil {
		return f.releaseErr
	}
	return f.Store.Release(ctx, key, token)
}
