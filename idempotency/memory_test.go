package idempotency_test

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store { return newMemory(t) })
}

func TestMemoryStoreConformanceWithTinyShares(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		return newBounded(t, idempotency.MemoryConfig{ScopeShare: 0.01})
	})
}

func sk(key string) idempotency.StoreKey { return idempotency.StoreKey{Key: key} }

func claim(t *testing.T, s idempotency.Store, key idempotency.StoreKey, token string, lease time.Duration) error {
	t.Helper()
	_, ok, err := s.Claim(t.Context(), key, idempotency.Record{Status: idempotency.InProgress, Token: token}, lease)
	if err == nil && !ok {
		t.Fatalf("Claim(%+q) found the key held", key)
	}
	return err
}

func finish(t *testing.T, s idempotency.Store, key idempotency.StoreKey, token string, value []byte, retention time.Duration) {
	t.Helper()
	require.NoError(t, s.Complete(t.Context(), key, idempotency.Record{Status: idempotency.Succeeded, Token: token, Value: value}, retention))
}

func TestMemoryStoreStaysWithinItsBounds(t *testing.T) {
	t.Run("a full store refuses new claims rather than forget a finished record before it expires", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 3})
			for i, retention := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} {
				key := sk(fmt.Sprint("k", i))
				require.NoError(t, claim(t, s, key, "t", time.Minute))
				finish(t, s, key, "t", nil, retention)
			}
			require.ErrorIs(t, claim(t, s, sk("new"), "t", time.Minute), idempotency.ErrFull)
			_, err := idempotency.Do(t.Context(), s, "new", fp, (&counter{}).fn)
			require.ErrorIs(t, err, idempotency.ErrStore)
			require.ErrorIs(t, err, idempotency.ErrFull, "Do says why, and ran nothing")
			for i := range 3 {
				rec, held, err := s.Claim(t.Context(), sk(fmt.Sprint("k", i)), idempotency.Record{Status: idempotency.InProgress, Token: "again"}, time.Minute)
				require.NoError(t, err)
				assert.False(t, held, "k%d is still there", i)
				assert.Equal(t, idempotency.Succeeded, rec.Status)
			}
			time.Sleep(time.Hour) // k1 expires: its room is free again
			require.NoError(t, claim(t, s, sk("new"), "t", time.Minute))
			assert.Equal(t, 3, s.Len())
		})
	})
	t.Run("live claims hold their room until they end or expire", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 2})
			require.NoError(t, claim(t, s, sk("a"), "t", time.Minute))
			require.NoError(t, claim(t, s, sk("b"), "t", time.Minute))
			require.ErrorIs(t, claim(t, s, sk("c"), "t", time.Minute), idempotency.ErrFull)
			require.NoError(t, s.Release(t.Context(), sk("a"), "t"))
			require.NoError(t, claim(t, s, sk("c"), "t", time.Minute), "a released claim makes room at once")
			time.Sleep(time.Minute) // the claims expire and make room
			require.NoError(t, claim(t, s, sk("d"), "t", time.Minute))
			require.NoError(t, claim(t, s, sk("e"), "t", time.Minute))
		})
	})
	t.Run("a record larger than the room left is refused, and its claim kept", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100, MaxBytes: 64 << 10, ScopeShare: 1})
		for i := range 6 {
			key := sk(fmt.Sprint("k", i))
			require.NoError(t, claim(t, s, key, "t", time.Minute))
			finish(t, s, key, "t", make([]byte, 10<<10), time.Hour)
		}
		require.NoError(t, claim(t, s, sk("big"), "t", time.Minute))
		err := s.Complete(t.Context(), sk("big"), idempotency.Record{Status: idempotency.Succeeded, Token: "t", Value: make([]byte, 10<<10)}, time.Hour)
		require.ErrorIs(t, err, idempotency.ErrTooLarge, "64 KiB hold six 10 KiB records, not seven")
		require.NoError(t, s.Complete(t.Context(), sk("big"), idempotency.Record{Status: idempotency.NotRetained, Token: "t"}, time.Hour),
			"the claim survives a refusal, for a NotRetained record")
		assert.Equal(t, 7, s.Len(), "nothing was dropped to make room")
	})
	t.Run("Do records a result the store cannot hold as not retained", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100, MaxBytes: 64 << 10})
		big := strings.Repeat("x", 100<<10)
		res, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{value: big}).fn)
		require.NoError(t, err)
		assert.Len(t, res.Value, len(big))
		_, err = idempotency.Do(t.Context(), s, "k", fp, (&counter{}).fn)
		require.ErrorIs(t, err, idempotency.ErrNotRetained)
	})
}

func TestMemoryStoreBoundsEachScope(t *testing.T) {
	t.Run("a scope at its share is refused, and other scopes are untouched", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100, ScopeShare: 0.1})
		victim := idempotency.StoreKey{Scope: "victim", Key: "order-1"}
		require.NoError(t, claim(t, s, victim, "t", time.Minute))
		finish(t, s, victim, "t", []byte("receipt"), time.Hour)
		for i := range 10 {
			require.NoError(t, claim(t, s, idempotency.StoreKey{Scope: "flood", Key: fmt.Sprint(i)}, "t", time.Minute))
		}
		err := claim(t, s, idempotency.StoreKey{Scope: "flood", Key: "10"}, "t", time.Minute)
		require.ErrorIs(t, err, idempotency.ErrScopeFull, "ten records are a tenth of a hundred")
		rec, held, err := s.Claim(t.Context(), victim, idempotency.Record{Status: idempotency.InProgress, Token: "retry"}, time.Minute)
		require.NoError(t, err)
		assert.False(t, held)
		assert.Equal(t, "receipt", string(rec.Value), "the victim's record is intact")
		require.NoError(t, claim(t, s, idempotency.StoreKey{Scope: "other", Key: "1"}, "t", time.Minute), "another scope still claims")
	})
	t.Run("a scope's share bounds its bytes too", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxBytes: 1 << 20, ScopeShare: 0.25})
		k := idempotency.StoreKey{Scope: "a", Key: "big"}
		require.NoError(t, claim(t, s, k, "t", time.Minute))
		err := s.Complete(t.Context(), k, idempotency.Record{Status: idempotency.Succeeded, Token: "t", Value: make([]byte, 300<<10)}, time.Hour)
		require.ErrorIs(t, err, idempotency.ErrTooLarge, "300 KiB is more than a quarter of 1 MiB")
		other := idempotency.StoreKey{Scope: "b", Key: "big"}
		require.NoError(t, claim(t, s, other, "t", time.Minute))
		finish(t, s, other, "t", make([]byte, 200<<10), time.Hour)
	})
	t.Run("the unscoped keys of Do and Once have no share: only the store's bounds", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100, ScopeShare: 0.1})
		for i := range 100 {
			require.NoError(t, claim(t, s, sk(fmt.Sprint(i)), "t", time.Minute))
		}
		require.ErrorIs(t, claim(t, s, sk("100"), "t", time.Minute), idempotency.ErrFull)
	})
	t.Run("keys with an Owner count against the Owner's share, whatever their scopes", func(t *testing.T) {
		s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100, ScopeShare: 0.1})
		owned := func(scope string) idempotency.StoreKey {
			return idempotency.StoreKey{Scope: scope, Key: "k", Owner: "mallory"}
		}
		for i := range 10 {
			require.NoError(t, claim(t, s, owned(fmt.Sprint("scope-", i)), "t", time.Minute))
		}
		require.ErrorIs(t, claim(t, s, owned("scope-10"), "t", time.Minute), idempotency.ErrScopeFull,
			"a new scope is no new share")
		require.NoError(t, claim(t, s, idempotency.StoreKey{Scope: "scope-10", Key: "k", Owner: "alice"}, "t", time.Minute),
			"another owner claims")
		require.NoError(t, s.Release(t.Context(), idempotency.StoreKey{Scope: "scope-0", Key: "k"}, "t"),
			"the Owner is not part of the key")
		require.NoError(t, claim(t, s, owned("scope-11"), "t", time.Minute), "a release gives the owner's share back")
	})
	t.Run("a scope's expired records give its share back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newBounded(t, idempotency.MemoryConfig{MaxEntries: 10, ScopeShare: 0.2})
			for i := range 2 {
				k := idempotency.StoreKey{Scope: "a", Key: fmt.Sprint(i)}
				require.NoError(t, claim(t, s, k, "t", time.Minute))
				finish(t, s, k, "t", nil, time.Hour)
			}
			require.ErrorIs(t, claim(t, s, idempotency.StoreKey{Scope: "a", Key: "2"}, "t", time.Minute), idempotency.ErrScopeFull)
			time.Sleep(time.Hour)
			require.NoError(t, claim(t, s, idempotency.StoreKey{Scope: "a", Key: "2"}, "t", time.Minute))
		})
	})
}

func TestNewMemoryStoreRejectsBadBounds(t *testing.T) {
	tests := []struct {
		name string
		c    idempotency.MemoryConfig
		want string
	}{
		{"negative entries", idempotency.MemoryConfig{MaxEntries: -1}, "idempotency.MemoryConfig.MaxEntries = -1: must not be negative (0 means 100,000)"},
		{"a byte bound under 4 KiB", idempotency.MemoryConfig{MaxBytes: 100}, "idempotency.MemoryConfig.MaxBytes = 100: must be at least 4 KiB (0 means 64 MiB)"},
		{"a negative byte bound", idempotency.MemoryConfig{MaxBytes: -1}, "idempotency.MemoryConfig.MaxBytes = -1: must be at least 4 KiB"},
		{"a negative share", idempotency.MemoryConfig{ScopeShare: -0.1}, "idempotency.MemoryConfig.ScopeShare = -0.1: must be more than 0 and at most 1 (0 means 0.1)"},
		{"a share over 1", idempotency.MemoryConfig{ScopeShare: 1.5}, "idempotency.MemoryConfig.ScopeShare = 1.5: must be more than 0 and at most 1"},
		{"a share that is not a number", idempotency.MemoryConfig{ScopeShare: math.NaN()}, "idempotency.MemoryConfig.ScopeShare = NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := idempotency.NewMemoryStore(tt.c)
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestTheZeroMemoryConfigMeansTheDefaults(t *testing.T) {
	zero := newMemory(t)
	explicit := newBounded(t, idempotency.MemoryConfig{MaxEntries: 100_000, MaxBytes: 64 << 20, ScopeShare: 0.1})
	for name, s := range map[string]memStore{"the zero config": zero, "the defaults spelt out": explicit} {
		t.Run(name+" lets a scope hold 10,000 records, not one more", func(t *testing.T) {
			for i := range 10_000 {
				require.NoError(t, claim(t, s, idempotency.StoreKey{Scope: "a", Key: fmt.Sprint(i)}, "t", time.Minute))
			}
			require.ErrorIs(t, claim(t, s, idempotency.StoreKey{Scope: "a", Key: "more"}, "t", time.Minute), idempotency.ErrScopeFull)
		})
	}
}

// BenchmarkMemoryStoreClaimAndComplete claims and completes keys from a set
// of 50,000 whose records expire at once: the store's steady state, each
// claim finding the key's expired record and taking its place.
func BenchmarkMemoryStoreClaimAndComplete(b *testing.B) {
	s := newMemory(b)
	keys := make([]idempotency.StoreKey, 50_000)
	for i := range keys {
		keys[i] = idempotency.StoreKey{Scope: fmt.Sprint("client-", i%100), Key: fmt.Sprint("k", i)}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := keys[next.Add(1)%int64(len(keys))]
			_, _, _ = s.Claim(b.Context(), key, idempotency.Record{Status: idempotency.InProgress, Token: "t"}, time.Minute)
			_ = s.Complete(b.Context(), key, idempotency.Record{Status: idempotency.Succeeded, Token: "t", Value: []byte("v")}, time.Nanosecond)
		}
	})
}

func BenchmarkDoReplay(b *testing.B) {
	s := newMemory(b)
	fn := (&counter{value: "receipt"}).fn
	_, _ = idempotency.Do(b.Context(), s, "k", fp, fn)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = idempotency.Do(b.Context(), s, "k", fp, fn)
		}
	})
}
