package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
)

// ErrLockBusy is returned by Lock when another holder kept the lock for the
// whole LockWait.
var ErrLockBusy = errors.New("breaker/redis: lock held by another instance")

// Options configures a Store. The zero value is usable; see the package
// documentation for the defaults.
type Options struct {
	Prefix    string
	LockTTL   time.Duration
	LockWait  time.Duration
	OpTimeout time.Duration
	Recheck   time.Duration
}

// Store is a gobreaker.SharedDataStore on Redis. It is safe for concurrent
// use; one Store per process is enough for any number of breakers.
type Store struct {
	client goredis.UniversalClient
	o      Options
	mu     sync.Mutex
	tokens map[string]string // the locks this process holds, by key
}

var _ gobreaker.SharedDataStore = (*Store)(nil)

// unlockScript deletes a lock only for the holder that set it.
var unlockScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// NewStore returns a Store on client, or an error naming a negative option.
func NewStore(client goredis.UniversalClient, o Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("breaker/redis.NewStore: nil client")
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"LockTTL", o.LockTTL}, {"LockWait", o.LockWait}, {"OpTimeout", o.OpTimeout}, {"Recheck", o.Recheck}} {
		if f.d < 0 {
			return nil, fmt.Errorf("breaker/redis.Options.%s = %v: must not be negative", f.name, f.d)
		}
	}
	o.LockTTL = orDefault(o.LockTTL, 2*time.Second)
	o.LockWait = orDefault(o.LockWait, 100*time.Millisecond)
	o.OpTimeout = orDefault(o.OpTimeout, time.Second)
	o.Recheck = orDefault(o.Recheck, time.Second)
	return &Store{client: client, o: o, tokens: make(map[string]string)}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.o.OpTimeout)
}

// Lock takes the lock name for this process: SET NX PX with a random token,
// tried again for up to LockWait while another instance holds it.
func (s *Store) Lock(name string) error {
	key, token := s.o.Prefix+name, newToken()
	deadline := time.Now().Add(s.o.LockWait)
	pause := time.Millisecond
	for {
		ctx, cancel := s.ctx()
		ok, err := s.client.SetNX(ctx, key, token, s.o.LockTTL).Result()
		cancel()
		if err != nil {
			return fmt.Errorf("breaker/redis: lock %s: %w", key, err)
		}
		if ok {
			s.mu.Lock()
			s.tokens[key] = token
			s.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return ErrLockBusy
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// Unlock releases the lock name if this process holds it: a lock that expired
// and was taken by another instance is left alone.
func (s *Store) Unlock(name string) error {
	key := s.o.Prefix + name
	s.mu.Lock()
	token, ok := s.tokens[key]
	delete(s.tokens, key)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("breaker/redis: unlock %s: not held by this process", key)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return unlockScript.Run(ctx, s.client, []string{key}, token).Err()
}

// GetData returns the data stored under name, or nil if there is none.
func (s *Store) GetData(name string) ([]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	data, err := s.client.Get(ctx, s.o.Prefix+name).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	return data, err
}

// SetData stores data under name.
func (s *Store) SetData(name string, data []byte) error {
	ctx, cancel := s.ctx()
	defer cancel()
	return s.client.Set(ctx, s.o.Prefix+name, data, 0).Err()
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
