package redis

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/internal/redisbound"
	"github.com/retrykit/retry/internal/rediswait"
)

// defaultPrefix is put before every key the store writes, unless
// Config says otherwise.
const defaultPrefix = "idempotency:"

// holds is true when v, a stored record, is the claim of token: the layout
// of idempotency.Record.MarshalBinary — version 1, status InProgress (1),
// the token's length, the token.
const holds = `
local function holds(v, token)
  return v and string.byte(v, 1) == 1 and string.byte(v, 2) == 1
    and string.byte(v, 3) == #token and string.sub(v, 4, 3 + #token) == token
end
`

var (
	// KEYS[1] the key; ARGV[1] the encoded claim; ARGV[2] the lease in ms.
	claimScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`)
	// KEYS[1] the key; ARGV[1] the token; ARGV[2] the lease in ms.
	extendScript = goredis.NewScript(holds + `
if not holds(redis.call('GET', KEYS[1]), ARGV[1]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)
	// KEYS[1] the key; ARGV[1] the token; ARGV[2] the encoded record;
	// ARGV[3] the retention in ms.
	completeScript = goredis.NewScript(holds + `
if not holds(redis.call('GET', KEYS[1]), ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)
	// KEYS[1] the key; ARGV[1] the token.
	releaseScript = goredis.NewScript(holds + `
if not holds(redis.call('GET', KEYS[1]), ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1`)
)

// Store is an idempotency.Store in Redis. It is safe for concurrent use, and
// any number of processes may share one Redis through it.
//
// Each method returns by the end of its context, whatever the client's
// settings: a go-redis client bounds a command by its context only with
// ContextTimeoutEnabled, and otherwise by its own ReadTimeout (3s by
// default), so the store waits for the command in a goroutine of its own
// and returns at the context's end with its error ("no answer from Redis").
// The command itself ends with the client's timeouts, its answer dropped;
// a write it carried may still take effect, as after any lost reply.
type Store struct {
	c        goredis.Scripter
	prefix   string
	replicas int
}

// Config configures New. Its zero value is the default store: keys named
// "idempotency:" and the idempotency key.
type Config struct {
	// Prefix is put before the store's Redis keys, to keep them apart from
	// other data and other stores in the same database; "" means
	// "idempotency:".
	Prefix string
	// Unprefixed writes the idempotency keys as they are, without a prefix.
	// It is refused with a Prefix.
	Unprefixed bool
	// Replicas is how many replicas must have each write — a claim, an
	// extension, a result, a release — before the store acknowledges it:
	// Redis's WAIT, sent after the write on the same connection. 0, the
	// default, acknowledges a write once the primary has it; a failover to
	// a replica it had not reached yet loses it, and the key runs again
	// (see "Replicas and failover" in the package documentation). A write
	// that fewer replicas acknowledge within a second, or by the context's
	// deadline if sooner, is an error — though the primary may keep it, as
	// a claim whose caller crashed. It needs a *goredis.Client or a
	// *goredis.ClusterClient.
	Replicas int
}

// prefix returns the prefix c asks for, or the *retry.InvalidError of a
// contradiction.
func (c Config) prefix() (string, error) {
	switch {
	case c.Unprefixed && c.Prefix != "":
		return "", invalid("redis.Config.Unprefixed", true, "contradicts Config.Prefix "+strconv.Quote(c.Prefix))
	case c.Unprefixed:
		return "", nil
	case c.Prefix == "":
		return defaultPrefix, nil
	}
	return c.Prefix, nil
}

// New returns a Store that keeps its records through c — a *goredis.Client,
// *goredis.ClusterClient, *goredis.Ring or anything else that runs scripts —
// configured by cfg. A nil c, or a bad field of cfg, is a
// *retry.InvalidError.
func New(c goredis.Scripter, cfg Config) (*Store, error) {
	if isNil(c) {
		return nil, invalid("redis.New", nil, "the client must not be nil")
	}
	prefix, err := cfg.prefix()
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Replicas < 0:
		return nil, invalid("redis.Config.Replicas", cfg.Replicas, "must not be negative")
	case cfg.Replicas > 0 && !rediswait.Supported(c):
		return nil, invalid("redis.Config.Replicas", cfg.Replicas, fmt.Sprintf("waiting for replicas needs a *goredis.Client or a *goredis.ClusterClient, not a %T", c))
	}
	return &Store{c: c, prefix: prefix, replicas: cfg.Replicas}, nil
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

// Claim implements idempotency.Store.
func (s *Store) Claim(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, lease time.Duration) (idempotency.Record, bool, error) {
	if rec.Status != idempotency.InProgress {
		return idempotency.Record{}, false, invalid("redis.Store.Claim", rec.Status, "the record must be InProgress")
	}
	v, err := encode("Claim", rec)
	if err == nil {
		err = s.check(ctx, "Claim", key, lease)
	}
	if err != nil {
		return idempotency.Record{}, false, err
	}
	got, err := redisbound.Call(ctx, "", func(ctx context.Context) (string, error) {
		return rediswait.Run(ctx, s.c, s.replicas, claimScript, []string{s.redisKey(key)}, v, ms(lease)).Text()
	})
	switch {
	case errors.Is(err, goredis.Nil):
		return rec, true, nil
	case err != nil:
		return idempotency.Record{}, false, fmt.Errorf("idempotency/redis: claim: %w", err)
	}
	var stored idempotency.Record
	if err := stored.UnmarshalBinary([]byte(got)); err != nil {
		return idempotency.Record{}, false, fmt.Errorf("idempotency/redis: key %q: %w", s.redisKey(key), err)
	}
	return stored, false, nil
}

// Extend implements idempotency.Store.
func (s *Store) Extend(ctx context.Context, key idempotency.StoreKey, token string, lease time.Duration) error {
	if err := s.checkToken(ctx, "Extend", key, token, lease); err != nil {
		return err
	}
	return s.fenced(ctx, "extend", extendScript, key, token, ms(lease))
}

// Complete implements idempotency.Store.
func (s *Store) Complete(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, retention time.Duration) error {
	if !rec.Status.Final() {
		return invalid("redis.Store.Complete", rec.Status, "the record must be final")
	}
	v, err := encode("Complete", rec)
	if err == nil {
		err = s.check(ctx, "Complete", key, retention)
	}
	if err != nil {
		return err
	}
	return s.fenced(ctx, "complete", completeScript, key, rec.Token, v, ms(retention))
}

// Release implements idempotency.Store.
func (s *Store) Release(ctx context.Context, key idempotency.StoreKey, token string) error {
	if err := s.checkToken(ctx, "Release", key, token, time.Millisecond); err != nil {
		return err
	}
	return s.fenced(ctx, "release", releaseScript, key, token)
}

// fenced runs a script that acts only for the claim's holder.
func (s *Store) fenced(ctx context.Context, op string, script *goredis.Script, key idempotency.StoreKey, token string, args ...any) error {
	ok, err := redisbound.Call(ctx, "", func(ctx context.Context) (int, error) {
		return rediswait.Run(ctx, s.c, s.replicas, script, []string{s.redisKey(key)}, append([]any{token}, args...)...).Int()
	})
	switch {
	case err != nil:
		return fmt.Errorf("idempotency/redis: %s: %w", op, err)
	case ok != 1:
		return idempotency.ErrClaimLost
	}
	return nil
}

func encode(method string, rec idempotency.Record) (string, error) {
	b, err := rec.MarshalBinary()
	if err != nil {
		return "", invalid("redis.Store."+method, rec.Status, "bad record: "+err.Error())
	}
	return string(b), nil
}

// check refuses, before any work, a Store not made by New, a nil context,
// an empty key, and a lease or retention under the millisecond that PX
// counts in.
func (s *Store) check(ctx context.Context, method string, key idempotency.StoreKey, d time.Duration) error {
	name := "redis.Store." + method
	switch {
	case s == nil || s.c == nil:
		return invalid(name, nil, "the Store must be made by New")
	case ctx == nil:
		return invalid(name, nil, "the context must not be nil")
	case key.Key == "":
		return invalid(name, `""`, "the key must not be empty")
	case d < time.Millisecond:
		return invalid(name, d, "the lease or retention must be at least 1ms")
	}
	return nil
}

// checkToken is check for a method that names the claim by its token.
func (s *Store) checkToken(ctx context.Context, method string, key idempotency.StoreKey, token string, d time.Duration) error {
	if err := s.check(ctx, method, key, d); err != nil {
		return err
	}
	if token == "" {
		return invalid("redis.Store."+method, token, "the token must not be empty")
	}
	return nil
}

// redisKey is the Redis key of key: the prefix, then key's string form (the
// key itself when it has no scope).
func (s *Store) redisKey(key idempotency.StoreKey) string { return s.prefix + key.String() }

// ms is a duration in whole milliseconds, as PX and PEXPIRE take it.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
