package redis

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/sony/gobreaker/v2"
)

// The keys of a distributed breaker's shared state and of the lock around
// its updates, under the Store's prefix: gobreaker v2's own, so that
// instances using its DistributedCircuitBreaker directly share the breaker.
func stateKey(name string) string { return "gobreaker:state:" + name }
func mutexKey(name string) string { return "gobreaker:mutex:" + name }

// Circuit returns a factory for breaker.Config.NewCircuit: each key's
// breaker is a distributed breaker named by the key (the Settings.Name it
// receives, Key.String: "target/operation"; the zero Key's name is empty),
// and shares its state with every instance using the same Redis under the
// same Prefix. Making one asks Redis nothing: a key first seen while Redis
// is unreachable is guarded by local counts until Redis answers again (see
// the package documentation). The factory returns a *retry.InvalidError for
// a Store not made by NewStore.
func Circuit(store *Store) func(gobreaker.Settings) (breaker.Circuit, error) {
	return func(s gobreaker.Settings) (breaker.Circuit, error) {
		if store == nil || store.client == nil {
			return nil, invalid("redis.Circuit", nil, "the Store must be made by NewStore")
		}
		return newCircuit(store, s), nil
	}
}

// circuit is the two-step protocol over a gobreaker DistributedCircuitBreaker.
type circuit struct {
	store     *Store
	settings  gobreaker.Settings
	onChange  func(name string, from, to gobreaker.State)
	maxProbes int32
	stateKey  string
	mutexKey  string
	view      *view
	turn      chan struct{} // held by this instance's step in progress

	mu        sync.Mutex
	dcb       *gobreaker.DistributedCircuitBreaker[any]
	seen      gobreaker.State // the last state this instance observed
	probes    atomic.Int32    // probes in flight from this instance while half-open
	downUntil atomic.Int64    // 0 while Redis answers; else Unix nanoseconds until which Redis is not asked
}

func newCircuit(store *Store, s gobreaker.Settings) *circuit {
	c := &circuit{
		store: store, settings: s, onChange: s.OnStateChange, maxProbes: max(int32(s.MaxRequests), 1),
		stateKey: store.o.Prefix + stateKey(s.Name), mutexKey: store.o.Prefix + mutexKey(s.Name),
		view: &view{store: store}, turn: make(chan struct{}, 1),
	}
	c.settings.OnStateChange = c.changed
	_ = c.create() // outside a step, the view reads an empty state: this cannot fail
	return c
}

// view is the gobreaker.SharedDataStore a circuit gives gobreaker. gobreaker
// takes its lock through its store, and retries a busy or failing lock for
// 5s, 500ms apart, inside the caller's call. So the circuit takes the lock
// itself, bounded by its step (see step), before it calls gobreaker, and the
// view's Lock and Unlock do nothing. Its reads and writes end with the step;
// outside a step (while the breaker is built) it reads an empty state and
// writes nothing.
type view struct {
	store *Store
	ctx   context.Context // the step in progress; set and read under the circuit's turn
}

func (v *view) Lock(string) error   { return nil }
func (v *view) Unlock(string) error { return nil }

func (v *view) GetData(name string) ([]byte, error) {
	if v.ctx == nil {
		return []byte("{}"), nil
	}
	return v.store.getData(v.ctx, v.store.o.Prefix+name)
}

func (v *view) SetData(name string, data []byte) error {
	if v.ctx == nil {
		return nil
	}
	return v.store.setData(v.ctx, v.store.o.Prefix+name, data)
}

// create builds the distributed breaker; in a step, it also writes a fresh
// shared state if there is none.
func (c *circuit) create() error {
	dcb, err := gobreaker.NewDistributedCircuitBreaker[any](c.view, c.settings)
	if err != nil {
		return err
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

// step runs f, a call into gobreaker that updates the shared state, as this
// instance's one step in progress, holding the fleet's lock under a token of
// its own, with gobreaker's reads and writes ending with ctx. It fails when
// ctx ends first, when Redis fails, and when another instance holds the
// lock for LockWait.
func (c *circuit) step(ctx context.Context, f func() error) error {
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-c.turn }()
	token, err := c.store.lock(ctx, c.mutexKey, func(_ string, sent time.Time) bool { return c.store.fresh(sent) })
	if err != nil {
		return err
	}
	defer func() {
		if ctx.Err() == nil { // else it expires after LockTTL
			_ = c.store.unlock(ctx, c.mutexKey, token)
		}
	}()
	c.view.ctx = ctx
	defer func() { c.view.ctx = nil }()
	return f()
}

// Allow admits a call by the shared state: one GET while closed or open, a
// locked transition through gobreaker when an open breaker's timeout passed.
// It waits for Redis at most OpTimeout. If another instance holds the lock
// for LockWait, the call is judged by the state read: an open breaker being
// moved to half-open by someone else rejects it.
func (c *circuit) Allow() (func(error), error) {
	mark, ask := c.ask()
	if !ask {
		return c.local() // Redis failed a moment ago: do not pay its timeout on every call
	}
	ctx, cancel := c.store.ctx(c.store.o.OpTimeout)
	defer cancel()
	state, err := c.shared(ctx)
	if err != nil && !errors.Is(err, ErrLockBusy) {
		c.down()
		return c.local()
	}
	c.up(mark)
	return c.admit(state)
}

// shared returns the fleet's state, moving an open breaker whose timeout
// passed to half-open, and creating a missing state. With ErrLockBusy, it
// returns the state it read.
func (c *circuit) shared(ctx context.Context) (gobreaker.State, error) {
	data, err := c.store.getData(ctx, c.stateKey)
	switch {
	case err != nil:
		return 0, err
	case data == nil: // never created, or lost with a Redis restart
		return gobreaker.StateClosed, c.step(ctx, c.create)
	}
	var st gobreaker.SharedState
	if err := json.Unmarshal(data, &st); err != nil {
		return 0, err
	}
	if st.State != gobreaker.StateOpen || time.Now().Before(st.Expiry) {
		return st.State, nil
	}
	state := st.State
	err = c.step(ctx, func() (err error) {
		state, err = c.breaker().State() // gobreaker moves it to half-open
		return err
	})
	return state, err
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

// report counts the outcome in the shared state, waiting for Redis at most
// OpTimeout; if Redis fails, it counts locally. A report refused because the
// state moved on (opened by another instance) is dropped, as gobreaker drops
// the outcome of a request from an older generation.
func (c *circuit) report(outcome error) {
	mark, ask := c.ask()
	if !ask {
		c.count(outcome)
		return
	}
	ctx, cancel := c.store.ctx(c.store.o.OpTimeout)
	defer cancel()
	err := c.step(ctx, func() error {
		_, err := c.breaker().Execute(func() (any, error) { return nil, outcome })
		if err == outcome || errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			return nil
		}
		return err
	})
	if err != nil {
		c.down()
		c.count(outcome)
		return
	}
	c.up(mark)
}

// ask reports whether a call asks Redis. While Redis answers, every call
// does. After it failed, calls count locally until Recheck has passed; then
// one call asks again, with the mark it returns, while the others keep
// counting locally.
func (c *circuit) ask() (mark int64, ok bool) {
	until := c.downUntil.Load()
	if until == 0 {
		return 0, true
	}
	now := time.Now().UnixNano()
	mark = now + int64(c.store.o.Recheck)
	return mark, now >= until && c.downUntil.CompareAndSwap(until, mark)
}

// up notes that Redis answered the call that asked again with mark.
func (c *circuit) up(mark int64) {
	if mark != 0 {
		c.downUntil.CompareAndSwap(mark, 0)
	}
}

// down notes that Redis failed, or that the fleet's lock could not be taken
// within LockWait: calls count locally for Recheck.
func (c *circuit) down() {
	c.downUntil.Store(time.Now().Add(c.store.o.Recheck).UnixNano())
}

// local is the fallback while Redis fails: the embedded local breaker of
// this instance, holding the last shared state it saw, decides and counts.
func (c *circuit) local() (func(error), error) {
	if c.breaker().CircuitBreaker.State() == gobreaker.StateOpen {
		return nil, gobreaker.ErrOpenState
	}
	return c.count, nil
}

func (c *circuit) count(outcome error) {
	_, _ = c.breaker().CircuitBreaker.Execute(func() (any, error) { return nil, outcome })
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
func (c *circuit) State() breaker.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return breaker.StateOf(c.seen)
}

// Counts returns this instance's view of the counts: the shared counts as
// of its last update, or its local counts while Redis is unreachable.
func (c *circuit) Counts() breaker.Counts { return breaker.CountsOf(c.breaker().Counts()) }
