package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
)

// defaultMaxDelay is the longest a cooldown lasts when CooldownConfig says 0.
const defaultMaxDelay = time.Hour

// ErrCooldown is matched by every *CooldownError.
var ErrCooldown = errors.New("cooling down after the server's 503 with Retry-After")

// CooldownError says that a key is cooling down: calls to it go out again
// at Until, Left from when it was checked. A retry loop reports it as the
// last error of a call that stopped rather than wait out a cooldown longer
// than it could: nothing was sent. It is never the server's answer.
type CooldownError struct {
	Key   Key
	Until time.Time
	Left  time.Duration
}

// Error returns "breaker: api.example.com/qwen3 is cooling down until
// 12:00:30Z (4s left) after the server's 503 with Retry-After: failed
// locally, no request sent".
func (e *CooldownError) Error() string {
	return fmt.Sprintf("breaker: %s is cooling down until %s (%v left) after the server's 503 with Retry-After: failed locally, no request sent",
		e.Key, e.Until.UTC().Format(time.RFC3339), e.Left)
}

// Is matches ErrCooldown.
func (e *CooldownError) Is(target error) bool { return target == ErrCooldown }

// CooldownConfig configures Cooldowns. The zero value is usable.
type CooldownConfig struct {
	// MaxKeys bounds the keys cooling down at once: when full, expired keys
	// are dropped, then the one closest to its end. 0 means 10,000.
	MaxKeys int
	// MaxDelay bounds how long one Retry-After can cool a key down. 0 means
	// an hour.
	MaxDelay time.Duration
}

// Cooldowns is a registry of keys cooling down after a server answered
// "unavailable, come back after d" — an HTTP 503 or a gRPC UNAVAILABLE with
// a Retry-After. Give it to a Retrier with retry.WithCooldowns: the retry
// loop checks it before every attempt, and a key cooling down is not sent
// to until its cooldown ends, so that every caller of the key stops asking
// a server that already said when to come back, not only the caller it
// told. One key's cooldown does not stop another's. It is safe for
// concurrent use; while no key is cooling down, Check takes no lock. The
// zero Cooldowns is not usable: build one with NewCooldowns.
type Cooldowns struct {
	c      CooldownConfig
	mu     sync.Mutex
	until  map[Key]time.Time
	active atomic.Int64 // len(until), readable without the lock
}

// NewCooldowns returns an empty registry, or a *retry.InvalidError naming a
// negative field.
func NewCooldowns(c CooldownConfig) (*Cooldowns, error) {
	switch {
	case c.MaxKeys < 0:
		return nil, argerr.Field("breaker.CooldownConfig.MaxKeys", c.MaxKeys, "must not be negative")
	case c.MaxDelay < 0:
		return nil, argerr.Field("breaker.CooldownConfig.MaxDelay", c.MaxDelay, "must not be negative")
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = defaultMaxKeys
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = defaultMaxDelay
	}
	return &Cooldowns{c: c, until: make(map[Key]time.Time)}, nil
}

// Check returns a *CooldownError if k is cooling down now, and nil
// otherwise. A nil or zero registry has nothing cooling down.
func (c *Cooldowns) Check(k Key) error {
	if c == nil || c.active.Load() == 0 {
		return nil // the common case: nothing is cooling down
	}
	now := time.Now()
	c.mu.Lock()
	until, ok := c.until[k]
	if ok && !now.Before(until) {
		c.drop(k)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return &CooldownError{Key: k, Until: until, Left: until.Sub(now)}
}

// Observe starts k's cooldown if err, classified d, is a server's
// "unavailable" (an HTTP 503 or a gRPC UNAVAILABLE) with a Retry-After, and
// reports it to o (which may be nil) with ctx. It reports whether a
// cooldown started. A later cooldown extends a key's, an earlier one does
// not shorten it. A nil or zero registry observes nothing.
func (c *Cooldowns) Observe(ctx context.Context, k Key, err error, d classify.Decision, o observe.Observer) bool {
	if c == nil || c.until == nil || err == nil || d.RetryAfter <= 0 ||
		d.Reason != classify.ReasonUnavailable && d.Reason != classify.ReasonGRPCUnavailable {
		return false
	}
	length := min(d.RetryAfter, c.c.MaxDelay)
	c.start(k, time.Now().Add(length))
	if o != nil {
		o.Observe(ctx, observe.Event{Kind: observe.CooldownStarted, Err: err, Decision: d, Delay: length, Detail: k})
	}
	return true
}

// Len returns how many keys are registered (some may have just expired).
func (c *Cooldowns) Len() int {
	if c == nil {
		return 0
	}
	return int(c.active.Load())
}

func (c *Cooldowns) start(k Key, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.until[k]; ok {
		if until.After(old) {
			c.until[k] = until
		}
		return
	}
	if len(c.until) >= c.c.MaxKeys {
		c.makeRoom(time.Now())
	}
	c.until[k] = until
	c.active.Store(int64(len(c.until)))
}

// makeRoom drops expired keys, then, if the registry is still full, the key
// whose cooldown ends first. The caller holds the lock.
func (c *Cooldowns) makeRoom(now time.Time) {
	var first Key
	var firstUntil time.Time
	for k, until := range c.until {
		if !now.Before(until) {
			delete(c.until, k)
			continue
		}
		if firstUntil.IsZero() || until.Before(firstUntil) {
			first, firstUntil = k, until
		}
	}
	if len(c.until) >= c.c.MaxKeys {
		delete(c.until, first)
	}
}

func (c *Cooldowns) drop(k Key) {
	delete(c.until, k)
	c.active.Store(int64(len(c.until)))
}
