package idempotency_test

import (
	"fmt"
	"strings"
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

func TestMemoryStoreConformanceWithOneShard(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		return newMemory(t, idempotency.WithMaxEntries(100), idempotency.WithMaxBytes(4<<20))
	})
}

func claim(t *testing.T, s idempotency.Store, key, token string, lease time.Duration) bool {
	t.Helper()
	_, ok, err := s.Claim(t.Context(), key, idempotency.Record{Status: idempotency.InProgress, Token: token}, lease)
	require.NoError(t, err)
	return ok
}

func finish(t *testing.T, s idempotency.Store, key, token string, value []byte, retention time.Duration) {
	t.Helper()
	require.NoError(t, s.Complete(t.Context(), key, idempotency.Record{Status: idempotency.Succeeded, Token: token, Value: value}, retention))
}

func TestMemoryStoreStaysWithinItsBounds(t *testing.T) {
	t.Run("finished records closest to expiry make room for new claims", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newMemory(t, idempotency.WithMaxEntries(3))
			for i, retention := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} {
				key := fmt.Sprint("k", i)
				require.True(t, claim(t, s, key, "t", time.Minute))
				finish(t, s, key, "t", nil, retention)
			}
			require.True(t, claim(t, s, "new", "t", time.Minute))
			assert.Equal(t, 3, s.Len())
			assert.True(t, claim(t, s, "k1", "again", time.Minute), "k1, closest to expiry, was evicted")
			assert.False(t, claim(t, s, "k0", "again", time.Minute), "k0 was kept")
		})
	})
	t.Run("live claims are never evicted: a full store refuses new claims", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newMemory(t, idempotency.WithMaxEntries(2))
			require.True(t, claim(t, s, "a", "t", time.Minute))
			require.True(t, claim(t, s, "b", "t", time.Minute))
			_, _, err := s.Claim(t.Context(), "c", idempotency.Record{Status: idempotency.InProgress, Token: "t"}, time.Minute)
			require.ErrorIs(t, err, idempotency.ErrFull)
			_, err = idempotency.Do(t.Context(), s, "c", fp, (&counter{}).fn)
			require.ErrorIs(t, err, idempotency.ErrStore)
			require.ErrorIs(t, err, idempotency.ErrFull)
			time.Sleep(time.Minute) // the claims expire and make room
			assert.True(t, claim(t, s, "c", "t", time.Minute))
		})
	})
	t.Run("the byte bound evicts records and refuses one larger than the store", func(t *testing.T) {
		s := newMemory(t, idempotency.WithMaxEntries(100), idempotency.WithMaxBytes(64<<10))
		for i := range 10 {
			key := fmt.Sprint("k", i)
			require.True(t, claim(t, s, key, "t", time.Minute))
			finish(t, s, key, "t", make([]byte, 10<<10), time.Hour)
		}
		assert.LessOrEqual(t, s.Len(), 6, "64 KiB hold at most six 10 KiB records")
		require.True(t, claim(t, s, "huge", "t", time.Minute))
		err := s.Complete(t.Context(), "huge", idempotency.Record{Status: idempotency.Succeeded, Token: "t", Value: make([]byte, 65<<10)}, time.Hour)
		require.ErrorIs(t, err, idempotency.ErrTooLarge)
		require.NoError(t, s.Complete(t.Context(), "huge", idempotency.Record{Status: idempotency.NotRetained, Token: "t"}, time.Hour),
			"the claim survives a refusal, for a NotRetained record")
	})
	t.Run("Do records a result the store cannot hold as not retained", func(t *testing.T) {
		s := newMemory(t, idempotency.WithMaxEntries(100), idempotency.WithMaxBytes(64<<10))
		big := strings.Repeat("x", 100<<10)
		res, err := idempotency.Do(t.Context(), s, "k", fp, (&counter{value: big}).fn)
		require.NoError(t, err)
		assert.Len(t, res.Value, len(big))
		_, err = idempotency.Do(t.Context(), s, "k", fp, (&counter{}).fn)
		require.ErrorIs(t, err, idempotency.ErrNotRetained)
	})
}

func TestNewMemoryStoreRejectsBadBounds(t *testing.T) {
	tests := []struct {
		name string
		opt  idempotency.MemoryOption
		want string
	}{
		{"zero entries", idempotency.WithMaxEntries(0), "idempotency.WithMaxEntries(0): must be at least 1"},
		{"a byte bound under 4 KiB", idempotency.WithMaxBytes(100), "idempotency.WithMaxBytes(100): must be at least 4 KiB"},
		{"a nil option", nil, "must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := idempotency.NewMemoryStore(tt.opt)
			require.ErrorIs(t, err, retry.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestStoresNotMadeByTheirConstructorAreErrorsNotPanics(t *testing.T) {
	for name, s := range map[string]*idempotency.MemoryStore{"the zero MemoryStore": {}, "a nil MemoryStore": nil} {
		t.Run(name, func(t *testing.T) {
			_, _, err := s.Claim(t.Context(), "k", idempotency.Record{Status: idempotency.InProgress, Token: "t"}, time.Minute)
			require.ErrorIs(t, err, retry.ErrInvalid)
			require.ErrorIs(t, s.Extend(t.Context(), "k", "t", time.Minute), retry.ErrInvalid)
			require.ErrorIs(t, s.Complete(t.Context(), "k", idempotency.Record{Status: idempotency.Succeeded, Token: "t"}, time.Minute), retry.ErrInvalid)
			require.ErrorIs(t, s.Release(t.Context(), "k", "t"), retry.ErrInvalid)
			require.ErrorIs(t, s.Wait(t.Context(), "k"), retry.ErrInvalid)
			assert.Zero(t, s.Len())
			_, err = idempotency.Do(t.Context(), s, "k", fp, (&counter{}).fn)
			require.ErrorIs(t, err, idempotency.ErrStore)
		})
	}
}

func BenchmarkMemoryStoreClaimAndComplete(b *testing.B) {
	s := newMemory(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			key := fmt.Sprint("k", i, "-", &i)
			i++
			_, _, _ = s.Claim(b.Context(), key, idempotency.Record{Status: idempotency.InProgress, Token: "t"}, time.Minute)
			_ = s.Complete(b.Context(), key, idempotency.Record{Status: idempotency.Succeeded, Token: "t", Value: []byte("v")}, time.Minute)
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
