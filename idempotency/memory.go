package idempotency

import (
	"bytes"
	"container/heap"
	"context"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Defaults of MemoryConfig.
const (
	defaultMaxEntries = 100_000
	defaultMaxBytes   = 64 << 20 // 64 MiB
	defaultScopeShare = 0.1
)

// entryOverhead approximates what an entry costs beyond its key, token and
// value: the map slot, the entry, its heap slot.
const entryOverhead = 128

// shardCount is the number of locks the store's keys are spread over.
const shardCount = 16

// memoryStore is the Store NewMemoryStore returns.
type memoryStore struct {
	shards [shardCount]memShard
	seed   maphash.Seed
	room   room
	// earliest is no later than the earliest expiry of any entry, in Unix
	// nanoseconds: a sweep before it would drop nothing, so a client refused
	// for want of room costs one load, not a visit to every shard.
	earliest atomic.Int64
}

// MemoryConfig configures NewMemoryStore. Its zero value is the default
// store: 100,000 records, 64 MiB, a tenth of each for one client's scope.
type MemoryConfig struct {
	// MaxEntries bounds the number of records (claims and finished) the
	// store holds; 0 means 100,000.
	MaxEntries int
	// MaxBytes bounds the bytes the store's records take, keys, tokens and
	// values counted, with a small overhead per record: 0 means 64 MiB, and
	// any other bound is at least 4 KiB.
	MaxBytes int64
	// ScopeShare is the fraction of the store's records and bytes that one
	// client may hold — the records of one StoreKey.Owner, or of one
	// non-empty scope without an Owner: 0 means 0.1,
	// which lets ten clients fill the store and keeps any one from taking
	// more than a tenth of it; 1 lets each take all of it. Above 0, at most 1.
	ScopeShare float64
}

// withDefaults returns c with its zero fields set to the defaults, or the
// *retry.InvalidError for its first bad field.
func (c MemoryConfig) withDefaults() (MemoryConfig, error) {
	switch {
	case c.MaxEntries < 0:
		return c, argerr.Field("idempotency.MemoryConfig.MaxEntries", c.MaxEntries, "must not be negative (0 means 100,000)")
	case c.MaxBytes < 0 || c.MaxBytes > 0 && c.MaxBytes < 4<<10:
		return c, argerr.Field("idempotency.MemoryConfig.MaxBytes", c.MaxBytes, "must be at least 4 KiB (0 means 64 MiB)")
	case !(c.ScopeShare >= 0 && c.ScopeShare <= 1):
		return c, argerr.Field("idempotency.MemoryConfig.ScopeShare", c.ScopeShare, "must be more than 0 and at most 1 (0 means 0.1)")
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = defaultMaxEntries
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = defaultMaxBytes
	}
	if c.ScopeShare == 0 {
		c.ScopeShare = defaultScopeShare
	}
	return c, nil
}

// NewMemoryStore returns an empty in-process Store, bounded as c says, or a
// *retry.InvalidError naming a bad field of c. The store is bounded,
// expiring, and sharded so that calls with different keys rarely contend. It
// suits one process, and tests; processes that share keys need a shared
// store (the Redis store in github.com/retrykit/retry/idempotency/redis).
//
// It holds at most MemoryConfig.MaxEntries records and about
// MemoryConfig.MaxBytes bytes, and each client — the keys of one
// StoreKey.Owner, or of one non-empty scope without an Owner: one client of
// the middleware — at most its share of both (MemoryConfig.ScopeShare; a tenth
// by default), so that one client cannot take the room of the others. It
// never drops a record before it expires, since a forgotten record lets a
// retry run its work again: when there is no room, it refuses. A claim over
// its client's share fails with ErrScopeFull (the middleware answers 429), a
// claim in a full store with ErrFull (503), and a
// result that does not fit with ErrTooLarge, after which Do and the
// middleware record it as not retained. The empty scope, which Do and Once
// use, has no share: only the store's bounds. Expired records are dropped
// when they are met or when room is needed.
//
// Time is read with time.Now, so tests run it on testing/synctest's fake
// clock. It implements Waiter: a caller waiting for a key in progress wakes
// when the claim ends. It is safe for concurrent use, and has a method
// Len() int, the records it holds (expired ones not yet dropped included),
// for tests and metrics.
func NewMemoryStore(c MemoryConfig) (Store, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	entries, bytes := int64(c.MaxEntries), c.MaxBytes
	s := &memoryStore{seed: maphash.MakeSeed(), room: room{
		maxEntries: entries, maxBytes: bytes, owners: make(map[string]usage),
		ownerEntries: max(1, int64(math.Floor(c.ScopeShare*float64(entries)))),
		ownerBytes:   max(entryOverhead, int64(math.Floor(c.ScopeShare*float64(bytes)))),
	}}
	for i := range s.shards {
		s.shards[i] = memShard{m: make(map[StoreKey]*memEntry), room: &s.room, earliest: &s.earliest}
	}
	s.earliest.Store(math.MaxInt64)
	return s, nil
}

// Len returns the number of records held, expired ones not yet dropped
// included.
func (s *memoryStore) Len() int {
	if s == nil || s.room.maxEntries == 0 {
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
func (s *memoryStore) Claim(ctx context.Context, key StoreKey, rec Record, lease time.Duration) (Record, bool, error) {
	if err := s.check("Claim", ctx, key, lease); err != nil {
		return Record{}, false, err
	}
	if err := rec.Validate(); err != nil || rec.Status != InProgress {
		return Record{}, false, badRecord("Claim", rec, err)
	}
	got, claimed, err := s.claim(key, rec, lease)
	if s.roomMade(err) {
		got, claimed, err = s.claim(key, rec, lease)
	}
	return got, claimed, err
}

// claim is Claim once its arguments are checked.
func (s *memoryStore) claim(key StoreKey, rec Record, lease time.Duration) (Record, bool, error) {
	now := time.Now()
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if held := sh.get(key, now); held != nil {
		return cloneRecord(held.rec), false, nil
	}
	e := &memEntry{key: key.id(), owner: key.owner(), rec: cloneRecord(rec), expires: now.Add(lease), done: make(chan struct{})}
	e.size = entrySize(e.key, e.rec)
	if err := s.room.take(e.owner, 1, e.size); err != nil {
		return Record{}, false, err
	}
	sh.add(e, &sh.claims)
	return cloneRecord(rec), true, nil
}

// Extend implements Store.
func (s *memoryStore) Extend(ctx context.Context, key StoreKey, token string, lease time.Duration) error {
	if err := s.check("Extend", ctx, key, lease); err != nil {
		return err
	}
	return s.holding(key, token, time.Now(), func(sh *memShard, e *memEntry, now time.Time) error {
		e.expires = now.Add(lease)
		heap.Fix(&sh.claims, e.index)
		return nil
	})
}

// Complete implements Store.
func (s *memoryStore) Complete(ctx context.Context, key StoreKey, rec Record, retention time.Duration) error {
	if err := s.check("Complete", ctx, key, retention); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil || !rec.Status.Final() {
		return badRecord("Complete", rec, err)
	}
	size := entrySize(key.id(), rec)
	if !s.room.fits(key.owner(), size) {
		return ErrTooLarge
	}
	err := s.complete(key, rec, size, retention)
	if s.roomMade(err) {
		err = s.complete(key, rec, size, retention)
	}
	if noRoom(err) {
		return ErrTooLarge
	}
	return err
}

// complete is Complete once its arguments are checked.
func (s *memoryStore) complete(key StoreKey, rec Record, size int64, retention time.Duration) error {
	return s.holding(key, rec.Token, time.Now(), func(sh *memShard, e *memEntry, now time.Time) error {
		return sh.finish(e, rec, size, now.Add(retention))
	})
}

// Release implements Store.
func (s *memoryStore) Release(ctx context.Context, key StoreKey, token string) error {
	if err := s.check("Release", ctx, key, time.Millisecond); err != nil {
		return err
	}
	return s.holding(key, token, time.Now(), func(sh *memShard, e *memEntry, _ time.Time) error {
		sh.remove(e)
		return nil
	})
}

// Wait implements Waiter.
func (s *memoryStore) Wait(ctx context.Context, key StoreKey) error {
	if err := s.check("Wait", ctx, key, time.Millisecond); err != nil {
		return err
	}
	sh := s.shard(key)
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

// check refuses a call on a store not made by NewMemoryStore and bad
// arguments, and returns the context's error if it is done.
func (s *memoryStore) check(method string, ctx context.Context, key StoreKey, d time.Duration) error {
	var value any
	var reason string
	switch {
	case s == nil || s.room.maxEntries == 0:
		reason = "the store was not made by NewMemoryStore"
	case ctx == nil:
		reason = "the context must not be nil"
	case key.Key == "":
		value, reason = `""`, "the key must not be empty"
	case d <= 0:
		value, reason = d, "the lease or retention must be positive"
	default:
		return ctx.Err()
	}
	return argerr.New("idempotency.NewMemoryStore."+method, value, reason)
}

func (s *memoryStore) shard(key StoreKey) *memShard {
	return &s.shards[maphash.Comparable(s.seed, key.id())%shardCount]
}

// holding runs f, under its shard's lock, on the live claim of key held with
// token; a claim that is gone, finished or another's is ErrClaimLost.
func (s *memoryStore) holding(key StoreKey, token string, now time.Time, f func(*memShard, *memEntry, time.Time) error) error {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.holder(key, token, now)
	if e == nil {
		return ErrClaimLost
	}
	return f(sh, e, now)
}

// roomMade reports whether err refused a call for want of room and a sweep
// then dropped expired records: worth trying the call once more. (The call
// cannot sweep itself: it holds one shard's lock.)
func (s *memoryStore) roomMade(err error) bool {
	now := time.Now()
	return noRoom(err) && now.UnixNano() >= s.earliest.Load() && s.sweep(now)
}

func noRoom(err error) bool { return err == ErrFull || err == ErrScopeFull }

// sweep drops the expired records of every shard, and reports whether there
// were any.
func (s *memoryStore) sweep(now time.Time) bool {
	// Entries added from now on lower earliest themselves; those already
	// in a shard lower it when the sweep visits the shard.
	s.earliest.Store(math.MaxInt64)
	dropped := false
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		dropped = sh.dropExpired(now) || dropped
		sh.mu.Unlock()
	}
	return dropped
}

// badRecord is the error for a record that Validate refused (err), or whose
// status method does not take.
func badRecord(method string, rec Record, err error) error {
	if err != nil {
		return err
	}
	return argerr.New("idempotency.NewMemoryStore."+method, rec.Status, method+" does not take a record with this status")
}

func cloneRecord(r Record) Record {
	r.Value = bytes.Clone(r.Value)
	return r
}

func entrySize(key StoreKey, r Record) int64 {
	return int64(len(key.Scope) + len(key.Key) + len(r.Token) + len(r.Value) + entryOverhead)
}

// room keeps the store's bounds: how much the whole store, and each
// non-empty owner, holds. Its lock is taken under a shard's, never the
// other way round.
type room struct {
	mu           sync.Mutex
	entries      int64
	bytes        int64
	maxEntries   int64
	maxBytes     int64
	ownerEntries int64            // an owner's share
	ownerBytes   int64            // an owner's share
	owners       map[string]usage // by owner
}

type usage struct{ entries, bytes int64 }

// fits reports whether a record of size bytes could ever be kept for owner.
func (r *room) fits(owner string, size int64) bool {
	return size <= r.maxBytes && (owner == "" || size <= r.ownerBytes)
}

// take counts n more records and size more bytes for owner, or refuses with
// the bound they would exceed: the owner's share (ErrScopeFull) first, then
// the store's (ErrFull). A negative size gives bytes back and always fits.
func (r *room) take(owner string, n, size int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.owners[owner]
	grows := n > 0 || size > 0
	switch {
	case grows && owner != "" && (u.entries+n > r.ownerEntries || u.bytes+size > r.ownerBytes):
		return ErrScopeFull
	case grows && (r.entries+n > r.maxEntries || r.bytes+size > r.maxBytes):
		return ErrFull
	}
	r.entries, r.bytes = r.entries+n, r.bytes+size
	if owner != "" {
		u.entries, u.bytes = u.entries+n, u.bytes+size
		if u.entries == 0 {
			delete(r.owners, owner)
		} else {
			r.owners[owner] = u
		}
	}
	return nil
}

// memShard is one lock's share of the store's keys. Claims and finished
// records are kept in two heaps ordered by expiry, so that the expired ones
// are found at the top.
type memShard struct {
	mu       sync.Mutex
	m        map[StoreKey]*memEntry
	claims   entryHeap
	records  entryHeap
	room     *room
	earliest *atomic.Int64 // the store's
	_        [64]byte      // keep shards on separate cache lines
}

type memEntry struct {
	key     StoreKey // without its Owner
	owner   string   // the share it counts against: "" for none
	rec     Record
	expires time.Time
	done    chan struct{} // a claim's: closed when the claim ends
	index   int           // in its heap
	size    int64
}

// get returns key's live entry, dropping it if it expired.
func (sh *memShard) get(key StoreKey, now time.Time) *memEntry {
	e := sh.m[key.id()]
	if e != nil && !now.Before(e.expires) {
		sh.remove(e)
		return nil
	}
	return e
}

// holder returns key's live claim if token holds it.
func (sh *memShard) holder(key StoreKey, token string, now time.Time) *memEntry {
	e := sh.get(key, now)
	if e == nil || e.rec.Status != InProgress || e.rec.Token != token {
		return nil
	}
	return e
}

// add adds e, whose room was taken, to the shard and to h.
func (sh *memShard) add(e *memEntry, h *entryHeap) {
	sh.m[e.key] = e
	heap.Push(h, e)
	sh.expiresAt(e.expires)
}

// expiresAt lowers the store's earliest expiry to t if t is earlier.
func (sh *memShard) expiresAt(t time.Time) {
	ns := t.UnixNano()
	for {
		old := sh.earliest.Load()
		if ns >= old || sh.earliest.CompareAndSwap(old, ns) {
			return
		}
	}
}

// remove drops e and gives its room back.
func (sh *memShard) remove(e *memEntry) {
	delete(sh.m, e.key)
	if e.done != nil {
		heap.Remove(&sh.claims, e.index)
		close(e.done)
	} else {
		heap.Remove(&sh.records, e.index)
	}
	_ = sh.room.take(e.owner, -1, -e.size)
}

// finish turns the claim e into the final record rec of size bytes, if
// there is room for the difference.
func (sh *memShard) finish(e *memEntry, rec Record, size int64, expires time.Time) error {
	if err := sh.room.take(e.owner, 0, size-e.size); err != nil {
		return err
	}
	heap.Remove(&sh.claims, e.index)
	close(e.done)
	e.done, e.rec, e.expires, e.size = nil, cloneRecord(rec), expires, size
	heap.Push(&sh.records, e)
	sh.expiresAt(expires)
	return nil
}

// dropExpired drops the expired claims and records, reports whether there
// were any, and lowers the store's earliest expiry to the shard's.
func (sh *memShard) dropExpired(now time.Time) bool {
	dropped := false
	for _, h := range []*entryHeap{&sh.claims, &sh.records} {
		for len(*h) > 0 && !now.Before((*h)[0].expires) {
			sh.remove((*h)[0])
			dropped = true
		}
		if len(*h) > 0 {
			sh.expiresAt((*h)[0].expires)
		}
	}
	return dropped
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
