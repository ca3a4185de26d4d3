package redis

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/sony/gobreaker/v2"
)

// stateKey is where gobreaker v2 keeps a distributed breaker's shared state.
func stateKey(name string) string { return "gobreaker:state:" + name }

// Circuit returns a factory for breaker.WithCircuit: each Breaker built with
// it shares its state, under its Settings.Name, with every instance using
// the same Redis.
func Circuit(store *Store) func(gobreaker.Settings) (breaker.Circuit, error) {
	return func(s gobreaker.Settings) (breaker.Circuit, error) {
		if store == nil {
			return nil, errors.New("breaker/redis.Circuit: nil Store")
		}
		if s.Name == "" {
			return nil, errors.New("breaker/redis.Circuit: the breaker needs a Name: it is its key in Redis")
		}
		c := &circuit{store: store, settings: s, onChange: s.OnStateChange, maxProbes: max(int32(s.MaxRequests), 1)}
		c.settings.OnStateChange = c.changed
		// gobreaker retries a failing lock for 5s: find an unreachable Redis first.
		ctx, cancel := store.ctx()
		defer cancel()
		if err := store.client.Ping(ctx).Err(); err != nil {
			return nil, fmt.Errorf("breaker/redis: %s: %w", s.Name, err)
		}
		if err := c.init(); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// circuit is the two-step protocol over a gobreaker DistributedCircuitBreaker.
type circuit struct {
	store     *Store
	settings  gobreaker.Settings
	onChange  func(name string, from, to gobreaker.State)
	maxProbes int32

	mu        sync.Mutex
	dcb       *gobreaker.DistributedCircuitBreaker[any]
	seen      gobreaker.State // the last state this instance observed
	probes    atomic.Int32    // probes in flight from this instance while half-open
	downUntil atomic.Int64    // Unix nanoseconds until which Redis is not asked
}

// init creates the distributed breaker, and its shared state if missing.
func (c *circuit) init() error {
	dcb, err := gobreaker.NewDistributedCircuitBreaker[any](c.store, c.settings)
	if err != nil {
		return fmt.Errorf("breaker/redis: %s: %w", c.settings.Name, err)
	}
	c.mu.Lock()
	c.dcb = dcb
	c.mu.Unlock()
	return nil
}

func (c *circuit) breaker() *gobreaker.DistributedCircuitBreaker[any] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dcb
}

// Allow admits a call by the shared state: one GET while closed or open, a
// locked transition through gobreaker when an open breaker's timeout passed.
func (c *circuit) Allow() (func(error), error) {
	if time.Now().UnixNano() < c.downUntil.Load() {
		return c.local() // Redis failed a moment ago: do not pay its timeout on every call
	}
	data, err := c.store.GetData(stateKey(c.settings.Name))
	switch {
	case err != nil:
		return c.unreachable()
	case data == nil: // never created, or lost with a Redis restart
		if err := c.init(); err != nil {
			return c.unreachable()
		}
		return c.admit(gobreaker.StateClosed)
	}
	var shared gobreaker.SharedState
	if err := json.Unmarshal(data, &shared); err != nil {
		return c.unreachable()
	}
	state := shared.State
	if state == gobreaker.StateOpen && !time.Now().Before(shared.Expiry) {
		if state, err = c.breaker().State(); err != nil { // gobreaker moves it to half-open
			return c.unreachable()
		}
	}
	return c.admit(state)
}

func (c *circuit) admit(state gobreaker.State) (func(error), error) {
	c.observe(state)
	switch state {
	case gobreaker.StateOpen:
		return nil, gobreaker.ErrOpenState
	case gobreaker.StateHalfOpen:
		if c.probes.Add(1) > c.maxProbes {
			c.probes.Add(-1)
			return nil, gobreaker.ErrTooManyRequests
		}
		return func(outcome error) { c.report(outcome); c.probes.Add(-1) }, nil
	}
	return c.report, nil
}

// report counts the outcome in the shared state. A report refused because the
// state moved on (opened by another instance) is dropped, as gobreaker drops
// the outcome of a request from an older generation.
func (c *circuit) report(outcome error) {
	dcb := c.breaker()
	_, err := dcb.Execute(func() (any, error) { return nil, outcome })
	if err != nil && err != outcome && !errors.Is(err, gobreaker.ErrOpenState) && !errors.Is(err, gobreaker.ErrTooManyRequests) {
		// The shared state could not be updated: keep counting locally.
		c.downUntil.Store(time.Now().Add(c.store.o.Recheck).UnixNano())
		_, _ = dcb.CircuitBreaker.Execute(func() (any, error) { return nil, outcome })
	}
}

// unreachable notes that the shared state could not be read or updated, and
// falls back to local counts for the store's Recheck period.
func (c *circuit) unreachable() (func(error), error) {
	c.downUntil.Store(time.Now().Add(c.store.o.Recheck).UnixNano())
	return c.local()
}

// local is the fallback while Redis cannot be reached: the embedded local
// breaker of this instance decides and counts.
func (c *circuit) local() (func(error), error) {
	cb := c.breaker().CircuitBreaker
	switch cb.State() {
	case gobreaker.StateOpen:
		return nil, gobreaker.ErrOpenState
	}
	return func(outcome error) { _, _ = cb.Execute(func() (any, error) { return nil, outcome }) }, nil
}

// changed records a transition this instance made, and forwards it.
func (c *circuit) changed(name string, from, to gobreaker.State) {
	c.mu.Lock()
	c.seen = to
	c.mu.Unlock()
	if c.onChange != nil {
		c.onChange(name, from, to)
	}
}

// observe reports a transition another instance made, the first time this
// instance sees its result.
func (c *circuit) observe(state gobreaker.State) {
	c.mu.Lock()
	from := c.seen
	c.seen = state
	c.mu.Unlock()
	if from != state && c.onChange != nil {
		c.onChange(c.settings.Name, from, state)
	}
}

// State returns the shared state as this instance last saw it: it asks
// Redis nothing, so that a health check never waits on Redis.
func (c *circuit) State() gobreaker.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// Counts returns this instance's view of the counts: the shared counts as
// of its last update, or its local counts while Redis is unreachable.
func (c *circuit) Counts() gobreaker.Counts { return c.breaker().Counts() }
