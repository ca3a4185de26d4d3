package idempotency

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/retrykit/retry"
)

// Defaults of the memory store's bounds.
const (
	DefaultMaxEntries = 100_000
	DefaultMaxBytes   = 64 << 20 // 64 MiB
)

// entryOverhead approximates what an entry costs beyond its key, token and
// value: the map slot, the entry, its heap slot.
const entryOverhead = 128

// MemoryStore is the in-process Store: bounded, expiring, and sharded so
// that calls with different keys rarely contend. It suits one process, and
// tests; processes that share keys need a shared store (the Redis store in
// github.com/retrykit/retry/idempotency/redis).
//
// It holds at most MaxEntries records and about MaxBytes bytes. To make room
// it drops expired records, then the finished records closest to expiry,
// never a live claim: a claim when it is full of executions in progress fails
// with ErrFull, and a record too large for it is refused with ErrTooLarge
// (Do then records the result as not retained). Expired records are dropped
// when they are met or when room is needed; the bounds hold either way.
//
// Time is read with time.Now, so tests run it on testing/synctest's fake
// clock. It implements Waiter: a caller waiting for a key in progress wakes
// when the claim ends. It is safe for concurrent use; its zero value is not
// usable — call NewMemoryStore.
type MemoryStore struct {
	shards []memShard
	seed   maphash.Seed
}

type memConfig struct {
	maxEntries int
	maxBytes   int64
	err        error
}

// MemoryOption configures NewMemoryStore.
type MemoryOption func(*memConfig)

// WithMaxEntries bounds the number of records (claims and finished) the store
// holds; at least 1. The default is 100,000.
func WithMaxEntries(n int) MemoryOption {
	return func(c *memConfig) {
		if n < 1 {
			c.fail("idempotency.WithMaxEntries", n, "must be at least 1")
			return
		}
		c.maxEntries = n
	}
}

// WithMaxBytes bounds the bytes the store's records take, keys, tokens and
// values counted, with a small overhead per record; at least 4 KiB. The
// default is 64 MiB.
func WithMaxBytes(n int64) MemoryOption {
	return func(c *memConfig) {
		if n < 4<<10 {
			c.fail("idempotency.WithMaxBytes", n, "must be at least 4 KiB")
			return
		}
		c.maxBytes = n
	}
}

func (c *memConfig) fail(name string, value any, reason string) {
	if c.err == nil {
		c.err = invalid(name, value, reason)
	}
}

// NewMemoryStore returns an empty store, or a *retry.InvalidError naming a
// bad option.
func NewMemoryStore(opts ...MemoryOption) (*MemoryStore, error) {
	c := memConfig{maxEntries: DefaultMaxEntries, maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		if o == nil {
			c.fail("idempotency.MemoryOption", nil, "must not be nil")
			continue
		}
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	n := shardCount(c.maxEntries, c.maxBytes)
	s := &MemoryStore{shards: make([]memShard, n), seed: maphash.MakeSeed()}
	for i := range s.shards {
		// Spread the bounds exactly: the shards' limits add up to the store's.
		entries := c.maxEntries / n
		if i < c.maxEntries%n {
			entries++
		}
		s.shards[i] = memShard{m: make(map[string]*memEntry), maxEntries: entries, maxBytes: c.maxBytes / int64(n)}
	}
	return s, nil
}

// shardCount is 16, halved while a shard would hold fewer than 64 records or
// less than two full-size results.
func shardCount(maxEntries int, maxBytes int64) int {
	n := 16
	for n > 1 && (maxEntries/n < 64 || maxBytes/int64(n) < 2*DefaultMaxResultSize) {
		n /= 2
	}
	return n
}

// shard returns key's shard, or an error for a store not made by
// NewMemoryStore.
func (s *MemoryStore) shard(key string) (*memShard, error) {
	if s == nil || len(s.shards) == 0 {
		return nil, invalid("MemoryStore", nil, "not made by NewMemoryStore")
	}
	return &s.shards[maphash.String(s.seed, key)%uint64(len(s.shards))], nil
}

// Len returns the number of records held, expired ones not yet dropped
// included.
func (s *MemoryStore) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// Claim implements Store.
func (s *MemoryStore) Claim(ctx context.Context, key string, rec Record, lease time.Duration) (Record, bool, error) {
	if err := checkStoreCall(ctx, key, lease); err != nil {
		return Record{}, false, err
	}
	if err := rec.Validate(); err != nil || rec.Status != InProgress {
		return Record{}, false, badRecord("Claim", rec, err)
	}
	now := time.Now()
	sh, err := s.shard(key)
	if err != nil {
		return Record{}, false, err
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.get(key, now); e != nil {
		return cloneRecord(e.rec), false, nil
	}
	e := &memEntry{key: key, rec: cloneRecord(rec), expires: now.Add(lease), done: make(chan struct{})}
	e.size = entrySize(key, e.rec)
	if err := sh.makeRoom(1, e.size, now); err != nil {
		return Record{}, false, err
	}
	sh.add(e, &sh.claims)
	return cloneRecord(rec), true, nil
}

// Extend implements Store.
func (s *MemoryStore) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	return s.withHolder(ctx, key, token, lease, func(sh *memShard, e *memEntry, now time.Time) error {
		e.expires = now.Add(lease)
		heap.Fix(&sh.claims, e.index)
		return nil
	})
}

// Complete implements Store.
func (s *MemoryStore) Complete(ctx context.Context, key string, rec Record, retention time.Duration) error {
	if err := rec.Validate(); err != nil || !rec.Status.Final() {
		if cerr := checkStoreCall(ctx, key, retention); cerr != nil {
			return cerr
		}
		return badRecord("Complete", rec, err)
	}
	return s.withHolder(ctx, key, rec.Token, retention, func(sh *memShard, e *memEntry, now time.Time) error {
		return sh.finish(e, rec, now.Add(retention), now)
	})
}

// Release implements Store.
func (s *MemoryStore) Release(ctx context.Context, key, token string) error {
	return s.withHolder(ctx, key, token, time.Millisecond, func(sh *memShard, e *memEntry, _ time.Time) error {
		sh.remove(e)
		return nil
	})
}

// withHolder runs f, under its shard's lock, on the live claim of key held
// with token; a claim that is gone, finished or another's is ErrClaimLost.
// d is the duration the call was given, checked with the arguments.
func (s *MemoryStore) withHolder(ctx context.Context, key, token string, d time.Duration, f func(*memShard, *memEntry, time.Time) error) error {
	if err := checkStoreCall(ctx, key, d); err != nil {
		return err
	}
	now := time.Now()
	sh, err := s.shard(key)
	if err != nil {
		return err
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.holder(key, token, now)
	if e == nil {
		return ErrClaimLost
	}
	return f(sh, e, now)
}

// Wait implements Waiter.
func (s *MemoryStore) Wait(ctx context.Context, key string) error {
	if ctx == nil {
		return invalid("ctx", nil, "must not be nil")
	}
	sh, err := s.shard(key)
	if err != nil {
		return err
	}
	sh.mu.Lock()
	e := sh.get(key, time.Now())
	if e == nil || e.rec.Status != InProgress {
		sh.mu.Unlock()
		return nil
	}
	done, expires := e.done, e.expires
	sh.mu.Unlock()
	t := time.NewTimer(time.Until(expires))
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func checkStoreCall(ctx context.Context, key string, d time.Duration) error {
	switch {
	case ctx == nil:
		return invalid("ctx", nil, "must not be nil")
	case key == "":
		return invalid("key", "", "must not be empty")
	case d <= 0:
		return invalid("lease or retention", d, "must be positive")
	}
	return ctx.Err()
}

func badRecord(method string, rec Record, err error) error {
	if err == nil {
		err = fmt.Errorf("status %v not accepted by %s", rec.Status, method)
	}
	return &retry.InvalidError{Name: "record", Value: rec.Status, Err: err}
}

func cloneRecord(r Record) Record {
	r.Value = bytes.Clone(r.Value)
	return r
}

func entrySize(key string, r Record) int64 {
	return int64(len(key) + len(r.Token) + len(r.Value) + entryOverhead)
}

// memShard is one lock's share of the store. Claims and finished records are
// kept in two heaps ordered by expiry: the first are never evicted while
// live, the second are evicted closest-to-expiry first.
type memShard struct {
	mu         sync.Mutex
	m          map[string]*memEntry
	claims     entryHeap
	records    entryHeap
	bytes      int64
	maxEntries int
	maxBytes   int64
	_          [64]byte // keep shards on separate cache lines
}

type memEntry struct {
	key     string
	rec     Record
	expires time.Time
	done    chan struct{} // a claim's: closed when the claim ends
	index   int           // in its heap
	size    int64
}

// get returns key's live entry, dropping it if it expired.
func (sh *memShard) get(key string, now time.Time) *memEntry {
	e := sh.m[key]
	if e != nil && !now.Before(e.expires) {
		sh.remove(e)
		return nil
	}
	return e
}

// holder returns key's live claim if token holds it.
func (sh *memShard) holder(key, token string, now time.Time) *memEntry {
	e := sh.get(key, now)
	if e == nil || e.rec.Status != InProgress || e.rec.Token != token {
		return nil
	}
	return e
}

func (sh *memShard) add(e *memEntry, h *entryHeap) {
	sh.m[e.key] = e
	heap.Push(h, e)
	sh.bytes += e.size
}

func (sh *memShard) remove(e *memEntry) {
	delete(sh.m, e.key)
	if e.done != nil {
		heap.Remove(&sh.claims, e.index)
		close(e.done)
	} else {
		heap.Remove(&sh.records, e.index)
	}
	sh.bytes -= e.size
}

// finish turns the claim e into the final record rec, making room for it.
func (sh *memShard) finish(e *memEntry, rec Record, expires, now time.Time) error {
	size := entrySize(e.key, rec)
	if size > sh.maxBytes {
		return ErrTooLarge
	}
	// Take the claim out of the accounting while room is made, so that it
	// cannot be evicted; put it back if there is none.
	heap.Remove(&sh.claims, e.index)
	sh.bytes -= e.size
	if err := sh.makeRoom(0, size, now); err != nil {
		heap.Push(&sh.claims, e)
		sh.bytes += e.size
		return ErrTooLarge
	}
	close(e.done)
	e.done, e.rec, e.expires, e.size = nil, cloneRecord(rec), expires, size
	heap.Push(&sh.records, e)
	sh.bytes += size
	return nil
}

// makeRoom drops expired claims and then finished records, closest to expiry
// first, until entries more records of size more bytes fit.
func (sh *memShard) makeRoom(entries int, size int64, now time.Time) error {
	for len(sh.m)+entries > sh.maxEntries || sh.bytes+size > sh.maxBytes {
		switch {
		case len(sh.claims) > 0 && !now.Before(sh.claims[0].expires):
			sh.remove(sh.claims[0])
		case len(sh.records) > 0:
			sh.remove(sh.records[0])
		default:
			return ErrFull
		}
	}
	return nil
}

// entryHeap orders entries by expiry; each entry knows its index.
type entryHeap []*memEntry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
