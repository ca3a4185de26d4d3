package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
	// client's own timeouts (and no longer than half of what is left of its
	// context's deadline), and how long a script may take before Redis is
	// taken for away. 0 means 200ms.
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
	// Probe, MinRate, Burst, Hold, Window, Timeouts, Start: see
	// limit.AdaptiveConfig) and
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
	id     string // the instance's name in the script's accounts
	o      Config
	args   []any // the configuration part of the script's arguments
	local  *limit.Adaptive

	// Answers recorded, cumulative: the script counts only what it has
	// not seen from this instance, so news sent twice — a script run
	// after its caller gave up on it, or retried by go-redis — count once.
	news  counts
	acked counts // as of the last answer: what a Redis that forgot the instance missed since

	retryAfter atomic.Int64 // the longest Retry-After since the last answer
	nextSync   atomic.Int64 // Unix ns: while the fleet does not limit, the next ask
	downUntil  atomic.Int64 // Unix ns: 0 while Redis answers
	answered   atomic.Int64 // Unix ns: the last answer
	rateBits   atomic.Uint64
}

// counts are an instance's answers: accepted, throttled and, of these, the
// timeouts.
type counts struct{ accepted, throttled, timedOut atomic.Int64 }

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
	l := &Limiter{client: client, key: o.Prefix + "retry:limit:" + name, id: strconv.FormatUint(rand.Uint64(), 36),
		o: o, local: local,
		args: []any{c.Beta, c.Scale, c.Probe, c.MinRate, c.Burst.Microseconds(), c.Hold.Microseconds(),
			c.Window.Microseconds(), o.TTL.Milliseconds(), limit.Patience.Seconds(), c.Start}}
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
// Redis is given at most OpTimeout, and at most half of what is left of
// ctx's deadline: without its answer by then, the instance's local limiter
// decides, as it does while Redis is away (it did not answer within
// OpTimeout, and then for Recheck).
func (l *Limiter) Acquire(ctx context.Context, maxWait time.Duration) bool {
	if l == nil || l.local == nil || ctx == nil {
		return false
	}
	start := time.Now()
	now := start.UnixNano()
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
		return l.local.Acquire(ctx, max(maxWait-time.Since(start), 0))
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
		l.news.accepted.Add(1)
	case o.Result == limit.Throttled, o.Result == limit.TimedOut && l.o.Adaptive.Timeouts:
		if o.Result == limit.TimedOut {
			l.news.timedOut.Add(1)
		}
		l.news.throttled.Add(1)
		raise(&l.retryAfter, int64(o.RetryAfter))
		l.nextSync.Store(0) // tell the fleet with the next Acquire
	}
}

// raise sets v to x if x is larger.
func raise(v *atomic.Int64, x int64) {
	for old := v.Load(); x > old && !v.CompareAndSwap(old, x); old = v.Load() {
	}
}

func (l *Limiter) down() bool {
	until := l.downUntil.Load()
	return until != 0 && time.Now().UnixNano() < until
}

// ask runs the script with the instance's news, and waits for its answer
// at most OpTimeout and half of what is left of ctx's deadline. The script
// reserves nothing once the caller has stopped waiting for it (it compares
// that time with Redis's clock), and runs on, within OpTimeout, after the
// caller left: its answer, or its failure, is still learnt from.
func (l *Limiter) ask(ctx context.Context, maxWait time.Duration, take int) (int64, error) {
	now := time.Now()
	bound := l.o.OpTimeout
	if d, ok := ctx.Deadline(); ok {
		bound, maxWait = min(bound, d.Sub(now)/2), min(maxWait, d.Sub(now))
	}
	if bound <= 0 {
		return 0, errors.New("limit/redis: no time left to ask Redis")
	}
	done := make(chan answer, 1)
	go l.call(context.WithoutCancel(ctx), l.scriptArgs(maxWait, take, now.Add(bound)), done)
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case a := <-done:
		return a.wait, a.err
	case <-t.C:
		return 0, fmt.Errorf("limit/redis: no answer from Redis within %v", bound)
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
}

// answer is the script's: the wait for the turn (µs), or why none came.
type answer struct {
	wait int64
	err  error
}

// scriptArgs returns the script's arguments: the instance's news, the
// turn asked for, until when its caller waits for the answer, the rate to
// start a forgotten fleet at, and the configuration.
func (l *Limiter) scriptArgs(maxWait time.Duration, take int, giveUp time.Time) []any {
	args := []any{l.id, l.news.accepted.Load(), l.news.throttled.Load(), l.news.timedOut.Load(),
		l.acked.accepted.Load(), l.acked.throttled.Load(), l.acked.timedOut.Load(),
		time.Duration(l.retryAfter.Load()).Microseconds(), maxWait.Microseconds(), take, giveUp.UnixMicro(), l.seed()}
	return append(args, l.args...)
}

// seed is the rate a fleet whose Redis forgot it (a restart with empty
// data) starts at: the fleet's rate as this instance last heard it, if it
// heard it within TTL; 0 (no limit until a throttled answer) otherwise.
func (l *Limiter) seed() float64 {
	rate := math.Float64frombits(l.rateBits.Load())
	if math.IsInf(rate, 0) || time.Now().UnixNano()-l.answered.Load() > int64(l.o.TTL) {
		return 0
	}
	return rate
}

// call runs the script within OpTimeout, learns from its answer or its
// failure, and sends it to done.
func (l *Limiter) call(ctx context.Context, args []any, done chan<- answer) {
	ctx, cancel := context.WithTimeout(ctx, l.o.OpTimeout)
	defer cancel()
	res, err := redisbound.Call(ctx, "limit/redis: ", func(ctx context.Context) ([]any, error) {
		return acquireScript.Run(ctx, l.client, []string{l.key}, args...).Slice()
	})
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("limit/redis: unexpected answer %v", res)
	}
	if err != nil {
		l.downUntil.Store(time.Now().Add(l.o.Recheck).UnixNano())
		done <- answer{err: err}
		return
	}
	l.learn(args, res)
	wait, _ := res[0].(int64)
	done <- answer{wait: wait}
}

// learn takes in the script's answer to args: Redis is back, the news
// sent are told, and the fleet's rate is res's.
func (l *Limiter) learn(args, res []any) {
	l.downUntil.Store(0)
	l.answered.Store(time.Now().UnixNano())
	raise(&l.acked.accepted, args[1].(int64))
	raise(&l.acked.throttled, args[2].(int64))
	raise(&l.acked.timedOut, args[3].(int64))
	if ra := l.retryAfter.Load(); time.Duration(ra).Microseconds() <= args[7].(int64) {
		l.retryAfter.CompareAndSwap(ra, 0) // told; unless a longer one came since
	}
	if s, ok := res[1].(string); ok {
		if rate, err := strconv.ParseFloat(s, 64); err == nil {
			l.rateBits.Store(math.Float64bits(rate))
		}
	}
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
