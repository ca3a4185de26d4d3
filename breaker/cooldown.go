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
)

// Cooldown defaults.
const (
	DefaultMaxKeys  = 10_000
	DefaultMaxDelay = time.Hour
)

// ErrCooldown is matched by every *CooldownError.
var ErrCooldown = errors.New("cooling down after the server's 503 with Retry-After")

// CooldownError is returned for a call that failed locally because its key is
// cooling down: no request was sent. It is never the server's answer.
//
// A retry loop around it waits until the cooldown ends before the next
// attempt (or, if that is longer than its MaxDelay, returns the wait): the
// error carries the remaining time as a Retry-After.
type CooldownError struct {
	Key   string    // the key, as text
	Until time.Time // when calls for the key may go out again
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

// RetryAfter returns the time left, so that a retry loop waits it out.
func (e *CooldownError) RetryAfter() time.Duration { return e.Left }

// HostModel is the usual cooldown key: one model on one host, so that one
// model's outage does not stop the others.
type HostModel struct{ Host, Model string }

// String returns "host/model".
func (k HostModel) String() string { return k.Host + "/" + k.Model }

// CooldownSettings configures Cooldowns. The zero value is usable.
type CooldownSettings struct {
	// MaxKeys bounds the keys cooling down at once: when full, expired keys are
	// dropped, then the one closest to its end. 0 means 10,000.
	MaxKeys int
	// MaxDelay bounds how long one Retry-After can cool a key down. 0 means
	// an hour.
	MaxDelay time.Duration
	// OnCooldown, if set, hears of each cooldown that Do or Observe starts:
	// the key (as text), when calls for it may go out again, and the error
	// that started it. It runs on the caller's goroutine: it must be quick
	// and safe for concurrent use.
	OnCooldown func(key string, until time.Time, err error)
}

// Cooldowns is a registry of keys cooling down after a 503 with Retry-After.
// One key's cooldown does not stop another's. It is safe for concurrent use;
// while no key is cooling down, Check takes no lock.
type Cooldowns[K comparable] struct {
	s      CooldownSettings
	mu     sync.Mutex
	until  map[K]time.Time
	active atomic.Int64 // len(until), readable without the lock
}

// NewCooldowns returns an empty registry, or a *retry.InvalidError naming a
// negative setting.
func NewCooldowns[K comparable](s CooldownSettings) (*Cooldowns[K], error) {
	switch {
	case s.MaxKeys < 0:
		return nil, argerr.New("breaker.CooldownSettings.MaxKeys", s.MaxKeys, "must not be negative")
	case s.MaxDelay < 0:
		return nil, argerr.New("breaker.CooldownSettings.MaxDelay", s.MaxDelay, "must not be negative")
	}
	if s.MaxKeys == 0 {
		s.MaxKeys = DefaultMaxKeys
	}
	if s.MaxDelay == 0 {
		s.MaxDelay = DefaultMaxDelay
	}
	return &Cooldowns[K]{s: s, until: make(map[K]time.Time)}, nil
}

// Do calls op for key unless key is cooling down, in which case it returns a
// *CooldownError at once (marked with its Retry-After) without calling op.
// A 503 with Retry-After from op starts the key's cooldown.
func (c *Cooldowns[K]) Do(ctx context.Context, key K, op func(context.Context) error) error {
	switch {
	case c == nil || c.until == nil:
		return argerr.New("breaker.Cooldowns.Do", nil, "the registry must be built with breaker.NewCooldowns")
	case op == nil:
		return argerr.New("breaker.Cooldowns.Do", nil, "op must not be nil")
	case ctx == nil:
		return argerr.New("breaker.Cooldowns.Do", nil, "the context must not be nil")
	}
	if err := c.Check(key); err != nil {
		return err
	}
	err := op(ctx)
	c.Observe(key, err)
	return err
}

// Check returns a *CooldownError, marked with the time left as its
// Retry-After, if key is cooling down now; nil otherwise. A nil or zero
// registry has nothing cooling down.
func (c *Cooldowns[K]) Check(key K) error {
	if c == nil || c.active.Load() == 0 {
		return nil // the common case: nothing is cooling down
	}
	return c.CheckAt(time.Now(), key)
}

// CheckAt is Check at time now.
func (c *Cooldowns[K]) CheckAt(now time.Time, key K) error {
	if c == nil || c.until == nil {
		return nil
	}
	c.mu.Lock()
	until, ok := c.until[key]
	if ok && !now.Before(until) {
		c.drop(key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	left := until.Sub(now)
	return classify.Mark(&CooldownError{Key: keyString(key), Until: until, Left: left},
		classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonCooldown, RetryAfter: left})
}

// Observe starts key's cooldown if err is an HTTP 503 with a Retry-After,
// tells OnCooldown, and reports when it ends. A nil or zero registry
// observes nothing.
func (c *Cooldowns[K]) Observe(key K, err error) (time.Time, bool) {
	return c.ObserveAt(time.Now(), key, err)
}

// ObserveAt is Observe at time now.
func (c *Cooldowns[K]) ObserveAt(now time.Time, key K, err error) (time.Time, bool) {
	if c == nil || c.until == nil || err == nil {
		return time.Time{}, false
	}
	d := classify.Default(err)
	if d.Reason != classify.ReasonUnavailable || d.RetryAfter <= 0 {
		return time.Time{}, false
	}
	until := now.Add(min(d.RetryAfter, c.s.MaxDelay))
	c.Start(key, until)
	if c.s.OnCooldown != nil {
		c.s.OnCooldown(keyString(key), until, err)
	}
	return until, true
}

// Start makes key cool down until the given time (a later time extends it,
// an earlier one does not shorten it). A nil or zero registry ignores it.
func (c *Cooldowns[K]) Start(key K, until time.Time) {
	if c == nil || c.until == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.until[key]; ok {
		if until.After(old) {
			c.until[key] = until
		}
		return
	}
	if len(c.until) >= c.s.MaxKeys {
		c.makeRoom(time.Now())
	}
	c.until[key] = until
	c.active.Store(int64(len(c.until)))
}

// Len returns how many keys are registered (some may have just expired).
func (c *Cooldowns[K]) Len() int {
	if c == nil {
		return 0
	}
	return int(c.active.Load())
}

// makeRoom drops expired keys, then, if the registry is still full, the key
// whose cooldown ends first. The caller holds the lock.
func (c *Cooldowns[K]) makeRoom(now time.Time) {
	var first K
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
	if len(c.until) >= c.s.MaxKeys {
		delete(c.until, first)
	}
}

func (c *Cooldowns[K]) drop(key K) {
	delete(c.until, key)
	c.active.Store(int64(len(c.until)))
}

func keyString(k any) string {
	if s, ok := k.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(k)
}
