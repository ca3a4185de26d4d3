package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/internal/redisbound"
	"github.com/retrykit/retry/limit"
)

// Config configures a Limiter. The zero value is usable; see the package
// documentation for the defaults.
type Config struct {
	// Prefix is put before the limit's key ("retry:limit:" + name).
	Prefix string
	// OpTimeout is the longest an Acquire waits for Redis, whatever the
	// client's own timeouts. 0 means 200ms.
	OpTimeout time.Duration
	// Recheck is how long an instance limits locally after Redis failed
	// it, before it asks Redis again. 0 means 1s.
	Recheck time.Duration
	// Sync is how often an instance asks Redis while the fleet does not
	// limit yet (no throttled answer so far); its first throttled answer
	// asks at once. 0 means 50ms.
	Sync time.Duration
	// TTL is how long the shared state outlives the last call. 0 means 1h.
	TTL time.Duration
	// Adaptive holds the parameters of the shared limiter (Beta, Scale,
	// Probe, MinRate, Burst, Hold, Window: see limit.AdaptiveConfig) and
	// configures each instance's local one, which limits while Redis is
	// away.
	Adaptive limit.AdaptiveConfig
}

// Limiter is a limit.Limiter whose state lives in Redis, shared by every
// instance that uses the same name: a fleet sharing one API key behaves as
// one client. Each Acquire that limits is one round trip, a Lua script that
// also carries the instance's news since its last one; Record never waits
// for Redis. It is safe for concurrent use.
type Limiter struct {
	client goredis.UniversalClient
	key    string
	o      Config
	args   []any // the configuration part of the script's arguments
	local  *limit.Adaptive

	accepted, throttled atomic.Int64 // news not yet told to Redis
	timedOut            atomic.Int64 // of the throttled, the timeouts
	retryAfter          atomic.Int64 // the longest Retry-After in them
	nextSync            atomic.Int64 // Unix ns: while the fleet does not limit, the next ask
	downUntil           atomic.Int64 // Unix ns: 0 while Redis answers
	rateBits            atomic.Uint64
}

var _ limit.Limiter = (*Limiter)(nil)

// New returns the Limiter named name on client, or a *retry.InvalidError
// naming a nil client, an empty name or a bad option.
func New(client goredis.UniversalClient, name string, o Config) (*Limiter, error) {
	switch {
	case client == nil || reflect.ValueOf(client).Kind() == reflect.Pointer && reflect.ValueOf(client).IsNil():
		return nil, invalid("redis.New", nil, "the client must not be nil")
	case name == "":
		return nil, invalid("redis.New", name, "the limit needs a name: it is its key in Redis")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	local, err := limit.NewAdaptive(o.Adaptive)
	if err != nil {
		return nil, err
	}
	c := o.Adaptive
	l := &Limiter{client: client, key: o.Prefix + "retry:limit:" + name, o: o, local: local,
		args: []any{c.Beta, c.Scale, c.Probe, c.MinRate, c.Burst.Microseconds(), c.Hold.Microseconds(),
			c.Window.Microseconds(), o.TTL.Milliseconds(), limit.Patience.Seconds()}}
	l.rateBits.Store(math.Float64bits(math.Inf(1)))
	return l, nil
}

func (o Config) validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"OpTimeout", o.OpTimeout}, {"Recheck", o.Recheck}, {"Sync", o.Sync}, {"TTL", o.TTL}} {
		if f.d < 0 {
			return invalid("redis.Config."+f.name, f.d, "must not be negative")
		}
	}
	if o.TTL > 0 && o.TTL < time.Millisecond {
		return invalid("redis.Config.TTL", o.TTL, "must be at least 1ms")
	}
	return nil
}

func (o Config) withDefaults() Config {
	o.OpTimeout = orDefault(o.OpTimeout, 200*time.Millisecond)
	o.Recheck = orDefault(o.Recheck, time.Second)
	o.Sync = orDefault(o.Sync, 50*time.Millisecond)
	o.TTL = orDefault(o.TTL, time.Hour)
	o.Adaptive = o.Adaptive.WithDefaults()
	return o
}

func orDefault[T float64 | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// Validate reports a Limiter not made by New.
func (l *Limiter) Validate() error {
	if l == nil || l.local == nil {
		return invalid("redis.Limiter", nil, "must be made by redis.New")
	}
	return nil
}

// Rate returns the fleet's rate as of this instance's last round trip, in
// attempts per second (+Inf while the fleet does not limit), or the local
// limiter's while Redis is away. A Limiter not made by New returns 0.
func (l *Limiter) Rate() float64 {
	switch {
	case l == nil || l.local == nil:
		return 0
	case l.down():
		return l.local.Rate()
	}
	return math.Float64frombits(l.rateBits.Load())
}

// Local returns the instance's own limiter, which learns from every answer
// and limits while Redis is away.
func (l *Limiter) Local() *limit.Adaptive {
	if l == nil {
		return nil
	}
	return l.local
}

// Acquire asks the fleet for the attempt's turn and waits for it, at most
// maxWait; while the fleet does not limit, it asks at most every Sync.
// While Redis is away (it did not answer within OpTimeout, and then for
// Recheck), the instance's local limiter decides.
func (l *Limiter) Acquire(ctx context.Context, maxWait time.Duration) bool {
	if l == nil || l.local == nil || ctx == nil {
		return false
	}
	now := time.Now().UnixNano()
	switch {
	case l.down():
		return l.local.Acquire(ctx, maxWait)
	case now < l.nextSync.Load():
		return true // the fleet does not limit, and nothing new was throttled
	}
	wait, err := l.ask(ctx, maxWait, 1)
	switch {
	case err != nil && ctx.Err() != nil:
		return false
	case err != nil:
		return l.local.Acquire(ctx, maxWait)
	case wait == -2:
		l.nextSync.Store(now + int64(l.o.Sync))
		return true
	case wait < 0:
		return false
	}
	return sleep(ctx, time.Duration(wait)*time.Microsecond)
}

// Record tells the instance's local limiter, and, with its next round trip,
// the fleet, how an attempt ended. It never waits for Redis.
func (l *Limiter) Record(ctx context.Context, o limit.Outcome) {
	if l == nil || l.local == nil {
		return
	}
	l.local.Record(ctx, o)
	switch {
	case o.Result == limit.Accepted:
		l.accepted.Add(1)
	case o.Result == limit.Throttled, o.Result == limit.TimedOut && l.o.Adaptive.Timeouts:
		if o.Result == limit.TimedOut {
			l.timedOut.Add(1)
		}
		l.throttled.Add(1)
		for ra := int64(o.RetryAfter); ; {
			old := l.retryAfter.Load()
			if ra <= old || l.retryAfter.CompareAndSwap(old, ra) {
				break
			}
		}
		l.nextSync.Store(0) // tell the fleet with the next Acquire
	}
}

func (l *Limiter) down() bool {
	until := l.downUntil.Load()
	return until != 0 && time.Now().UnixNano() < until
}

// ask runs the script with the news since the last round trip, within
// OpTimeout and ctx. On failure the news are kept for the next one, and
// Redis is not asked again for Recheck.
func (l *Limiter) ask(parent context.Context, maxWait time.Duration, take int) (int64, error) {
	acc, thr, to, ra := l.accepted.Swap(0), l.throttled.Swap(0), l.timedOut.Swap(0), l.retryAfter.Swap(0)
	ctx, cancel := context.WithTimeout(parent, l.o.OpTimeout)
	defer cancel()
	args := append([]any{acc, thr, time.Duration(ra).Microseconds(), maxWait.Microseconds(), take}, l.args...)
	args = append(args, to)
	res, err := redisbound.Call(ctx, "limit/redis: ", func(ctx context.Context) ([]any, error) {
		return acquireScript.Run(ctx, l.client, []string{l.key}, args...).Slice()
	})
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("limit/redis: unexpected answer %v", res)
	}
	if err != nil {
		l.accepted.Add(acc)
		l.throttled.Add(thr)
		l.timedOut.Add(to)
		if parent.Err() == nil { // the caller's own end is not Redis's fault
			l.downUntil.Store(time.Now().Add(l.o.Recheck).UnixNano())
		}
		return 0, err
	}
	l.downUntil.Store(0)
	if s, ok := res[1].(string); ok {
		if rate, err := strconv.ParseFloat(s, 64); err == nil {
			l.rateBits.Store(math.Float64bits(rate))
		}
	}
	wait, _ := res[0].(int64)
	return wait, nil
}

// sleep waits d, or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
