package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/redisbound"
	"github.com/retrykit/retry/internal/rediswait"
	"github.com/sony/gobreaker/v2"
)

// ErrLockBusy is returned by Lock when another holder kept the lock for the
// whole LockWait.
var ErrLockBusy = errors.New("breaker/redis: lock held by another instance")

// Config configures a Store. The zero value is usable; see the package
// documentation for the defaults.
type Config struct {
	// Prefix is put before every key the Store writes.
	Prefix string
	// LockTTL is how long a lock lasts: a holder that crashed frees it after
	// this. 0 means 2s; otherwise at least 1ms.
	LockTTL time.Duration
	// LockWait is how long taking a lock that another holder has is tried
	// (1ms, then up to 10ms apart) before ErrLockBusy. 0 means 100ms.
	LockWait time.Duration
	// OpTimeout is the longest anything waits for Redis: each method of the
	// Store (Lock: LockWait, then OpTimeout), and each step of a Circuit
	// (admitting a call, reporting its outcome), whatever the client's own
	// timeouts. 0 means 1s.
	OpTimeout time.Duration
	// Recheck is how long a Circuit counts locally after Redis failed it,
	// before it asks Redis again. 0 means 1s.
	Recheck time.Duration
	// Replicas is how many replicas must have each write — a lock taken or
	// released, a breaker's state — before it counts as done: Redis's WAIT,
	// sent after the write on the same connection, within OpTimeout and at
	// most a second. 0, the default, takes a write as done once the primary
	// has it; a failover to a replica it had not reached yet loses it (a
	// breaker's state goes back to what the replica had, closed if none). A
	// write fewer replicas acknowledge is a Redis failure, and the Circuit
	// counts locally. It needs a *goredis.Client or a *goredis.ClusterClient.
	Replicas int
}

// Store is a gobreaker.SharedDataStore on Redis. It is safe for concurrent
// use; one Store per process is enough for any number of breakers.
//
// Each of its methods waits for Redis at most OpTimeout (Lock: LockWait
// plus OpTimeout). Given to gobreaker's DistributedCircuitBreaker directly, a
// call may still wait for gobreaker's own lock retries (up to 5s, 500ms
// apart) and holds the lock for the whole request; Circuit does neither.
type Store struct {
	client goredis.UniversalClient
	o      Config
	mu     sync.Mutex
	held   map[string][]string // Lock's holders in this process: tokens by key, oldest first
}

var _ gobreaker.SharedDataStore = (*Store)(nil)

// unlockScript deletes a lock only for the holder that set it.
var unlockScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// NewStore returns a Store on client, or a *retry.InvalidError naming a nil
// client or a bad option.
func NewStore(client goredis.UniversalClient, o Config) (*Store, error) {
	if isNil(client) {
		return nil, invalid("redis.NewStore", nil, "the client must not be nil")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := checkReplicas(client, o.Replicas); err != nil {
		return nil, err
	}
	o.LockTTL = orDefault(o.LockTTL, 2*time.Second)
	o.LockWait = orDefault(o.LockWait, 100*time.Millisecond)
	o.OpTimeout = orDefault(o.OpTimeout, time.Second)
	o.Recheck = orDefault(o.Recheck, time.Second)
	return &Store{client: client, o: o, held: make(map[string][]string)}, nil
}

func (o Config) validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"LockTTL", o.LockTTL}, {"LockWait", o.LockWait}, {"OpTimeout", o.OpTimeout}, {"Recheck", o.Recheck}} {
		if f.d < 0 {
			return invalid("redis.Config."+f.name, f.d, "must not be negative")
		}
	}
	if o.LockTTL > 0 && o.LockTTL < time.Millisecond {
		return invalid("redis.Config.LockTTL", o.LockTTL, "must be at least 1ms (0 means 2s)")
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// isNil is true for a nil interface and for one holding a nil pointer (a
// nil *goredis.Client), whose methods would panic.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// check refuses a Store not made by NewStore, and an empty name, before any
// work.
func (s *Store) check(method, name string) error {
	switch {
	case s == nil || s.client == nil:
		return invalid("redis.Store."+method, nil, "the Store must be made by NewStore")
	case name == "":
		return invalid("redis.Store."+method, name, "the name must not be empty")
	}
	return nil
}

func (s *Store) ctx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// Lock takes the lock name: SET NX PX with a random token, tried again for up
// to LockWait while another holder has it. It waits at most LockWait plus
// OpTimeout.
func (s *Store) Lock(name string) error {
	if err := s.check("Lock", name); err != nil {
		return err
	}
	ctx, cancel := s.ctx(s.o.LockWait + s.o.OpTimeout)
	defer cancel()
	key := s.o.Prefix + name
	_, err := s.lock(ctx, key, func(token string, sent time.Time) bool { return s.queue(key, token, sent) })
	return err
}

// Unlock releases the lock name taken by Lock in this process.
//
// gobreaker's interface names the lock, not its holder. When a holder's lock
// expired and another goroutine of this process took it, both hold a token
// for name: Unlock releases the oldest. That is safe whoever calls it: a
// newer holder got the lock only after the oldest's had expired in Redis, so
// releasing the oldest token releases nothing anyone holds (the script
// deletes the key only if it still holds that token), and the newer token
// waits for the next Unlock. A late Unlock from an expired holder never
// frees another holder's lock.
func (s *Store) Unlock(name string) error {
	if err := s.check("Unlock", name); err != nil {
		return err
	}
	key := s.o.Prefix + name
	token, ok := s.oldest(key)
	if !ok {
		return fmt.Errorf("breaker/redis: unlock %s: not held by this process", key)
	}
	ctx, cancel := s.ctx(s.o.OpTimeout)
	defer cancel()
	return s.unlock(ctx, key, token)
}

// oldest removes and returns the token of the oldest holder of key in this
// process.
func (s *Store) oldest(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tokens := s.held[key]
	switch len(tokens) {
	case 0:
		return "", false
	case 1:
		delete(s.held, key)
	default:
		s.held[key] = tokens[1:]
	}
	return tokens[0], true
}

// GetData returns the data stored under name, or nil if there is none. It
// waits at most OpTimeout.
func (s *Store) GetData(name string) ([]byte, error) {
	if err := s.check("GetData", name); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx(s.o.OpTimeout)
	defer cancel()
	return s.getData(ctx, s.o.Prefix+name)
}

// SetData stores data under name. It waits at most OpTimeout.
func (s *Store) SetData(name string, data []byte) error {
	if err := s.check("SetData", name); err != nil {
		return err
	}
	if data == nil {
		return invalid("redis.Store.SetData", nil, "the data must not be nil")
	}
	ctx, cancel := s.ctx(s.o.OpTimeout)
	defer cancel()
	return s.setData(ctx, s.o.Prefix+name, data)
}

// lock takes the lock key for one holder and returns the holder's token: SET
// NX PX with a token of its own, tried again while another holder has it,
// until LockWait or ctx ends. keep runs once Redis granted the lock to a
// command sent at sent, and says whether the holder keeps it: not if the
// lock may have expired already (Lock also records the token there).
func (s *Store) lock(ctx context.Context, key string, keep func(token string, sent time.Time) bool) (string, error) {
	token, deadline := newToken(), time.Now().Add(s.o.LockWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 10*time.Millisecond) {
		sent := time.Now()
		ok, err := redisbound.Call(ctx, "", func(ctx context.Context) (bool, error) {
			return s.setNX(ctx, key, token)
		})
		switch {
		case err != nil:
			return "", fmt.Errorf("breaker/redis: lock %s: %w", key, err)
		case ok && keep(token, sent):
			return token, nil
		case ok: // the reply came after the lock's TTL: another may hold it now
			_ = s.unlock(ctx, key, token)
		}
		if !time.Now().Before(deadline) || sleep(ctx, pause) != nil {
			return "", ErrLockBusy
		}
	}
}

// fresh is true if a lock granted to a command sent at sent cannot have
// expired yet.
func (s *Store) fresh(sent time.Time) bool { return time.Since(sent) < s.o.LockTTL }

// queue records token as the newest of this process's holders of key, if
// its lock is fresh. Holders are thus recorded in the order Redis granted
// them the lock: a later holder was granted it after this one's TTL ran out,
// which is after this recording.
func (s *Store) queue(key, token string, sent time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fresh(sent) {
		return false
	}
	s.held[key] = append(s.held[key], token)
	return true
}

// unlock releases the lock key if token still holds it.
func (s *Store) unlock(ctx context.Context, key, token string) error {
	_, err := redisbound.Call(ctx, "", func(ctx context.Context) (any, error) {
		return nil, rediswait.Run(ctx, s.client, s.o.Replicas, unlockScript, []string{key}, token).Err()
	})
	return err
}

func (s *Store) getData(ctx context.Context, key string) ([]byte, error) {
	data, err := redisbound.Call(ctx, "", func(ctx context.Context) ([]byte, error) {
		return s.client.Get(ctx, key).Bytes()
	})
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	return data, err
}

func (s *Store) setData(ctx context.Context, key string, data []byte) error {
	_, err := redisbound.Call(ctx, "", func(ctx context.Context) (any, error) {
		return nil, s.set(ctx, key, data)
	})
	return err
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
