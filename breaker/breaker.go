package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/observe"
	"github.com/sony/gobreaker/v2"
)

// defaultMaxKeys is how many keys a Breakers or a Cooldowns keeps at most
// when its config says 0.
const defaultMaxKeys = 10_000

var (
	// ErrOpen: the breaker is open; the call was not made.
	ErrOpen = errors.New("circuit breaker is open")
	// ErrTooManyRequests: the breaker is half-open and its probes are taken;
	// the call was not made.
	ErrTooManyRequests = errors.New("circuit breaker is half-open and its probes are taken")
	// Excluded is the outcome reported to a Circuit for a call that must not
	// count: the caller cancelled it, or nothing was sent. The gobreaker
	// settings NewCircuit receives recognise it (IsExcluded).
	Excluded = errors.New("breaker: outcome not counted")
)

// Circuit is one key's breaker, in the two steps of gobreaker's
// TwoStepCircuitBreaker: Allow asks to make a call and returns the function
// that reports its outcome — nil for a success, an error matching Excluded
// for a call not to be counted, any other error for a failure — or the
// refusal (an error matching ErrOpen or ErrTooManyRequests). State and Counts
// report what it knows now. A Circuit is safe for concurrent use.
type Circuit interface {
	Allow() (done func(error), err error)
	State() State
	Counts() Counts
}

// Config configures Breakers. Its zero value is usable: see the defaults in
// the package documentation.
type Config struct {
	// MaxRequests is how many probes a half-open breaker lets through; that
	// many successes close it. 0 means 1.
	MaxRequests uint32
	// Interval is the period of a closed breaker after which its counts are
	// cleared; 0 clears them only when the state changes.
	Interval time.Duration
	// Timeout is how long an open breaker stays open before it lets probes
	// through; 0 means 60s.
	Timeout time.Duration
	// ReadyToTrip says when to open, given the counts after a failure; nil
	// opens after more than 5 consecutive failures.
	ReadyToTrip func(Counts) bool
	// PerAttempt puts the breaker around every attempt instead of around
	// the whole retried call.
	PerAttempt bool
	// MaxKeys bounds the keys with a breaker: past it, a call for a new key
	// runs without one, so that calls to ever new hosts cannot grow memory
	// without bound. 0 means 10,000.
	MaxKeys int
	// NewCircuit builds a key's circuit, when the key is first seen, from
	// the gobreaker settings for it: this Config's, named by the key
	// (Key.String), with an OnStateChange that reports to the calls'
	// observers and an IsExcluded that recognises Excluded. It may build
	// one shared through Redis (package
	// github.com/retrykit/retry/breaker/redis). nil builds a local gobreaker
	// TwoStepCircuitBreaker. While it fails, the key's calls are refused
	// with its error: nothing is sent, and the next call asks it again.
	NewCircuit func(gobreaker.Settings) (Circuit, error)
}

// settings returns the gobreaker settings for the breaker named name, with
// onChange as its state change callback and tripped told the counts that
// trip it: what NewCircuit receives. gobreaker clears the counts before it
// calls onChange, so the counts that opened a breaker are kept on the way.
func (c Config) settings(name string, onChange func(name string, from, to gobreaker.State), tripped func(Counts)) gobreaker.Settings {
	trip := c.ReadyToTrip
	if trip == nil {
		trip = defaultReadyToTrip
	}
	return gobreaker.Settings{
		Name:          name,
		MaxRequests:   c.MaxRequests,
		Interval:      c.Interval,
		Timeout:       c.Timeout,
		OnStateChange: onChange,
		IsExcluded:    func(err error) bool { return errors.Is(err, Excluded) },
		ReadyToTrip: func(g gobreaker.Counts) bool {
			counts := CountsOf(g)
			if !trip(counts) {
				return false
			}
			tripped(counts)
			return true
		},
	}
}

// defaultReadyToTrip is gobreaker's default: more than 5 consecutive
// failures.
func defaultReadyToTrip(c Counts) bool { return c.ConsecutiveFailures > 5 }

func (c Config) validate() error {
	switch {
	case c.Interval < 0:
		return argerr.Field("breaker.Config.Interval", c.Interval, "must not be negative")
	case c.Timeout < 0:
		return argerr.Field("breaker.Config.Timeout", c.Timeout, "must not be negative")
	case c.MaxKeys < 0:
		return argerr.Field("breaker.Config.MaxKeys", c.MaxKeys, "must not be negative")
	}
	return nil
}

// Breakers keeps one circuit breaker per Key, made as keys are first seen.
// Give it to a Retrier with retry.WithBreakers: the retry loop asks it
// before each call (or each attempt, with Config.PerAttempt) and tells it
// how the call ended. It is safe for concurrent use, and may be shared by
// several Retriers, which then share each key's breaker. The zero Breakers
// is not usable: build one with New.
type Breakers struct {
	c    Config
	mu   sync.RWMutex
	keys map[Key]*entry
}

// entry is one key's breaker, and the state changes it has not reported.
type entry struct {
	key     Key
	circuit Circuit
	mu      sync.Mutex
	changes []Transition
	trip    Counts // the counts that tripped the breaker, until changed reads them
	pending atomic.Int32
}

// Transition is the Detail of an observe.BreakerChanged event: the breaker
// of Key went From one state To another.
type Transition struct {
	Key      Key
	From, To State
	// Counts are the counts that tripped the breaker, as ReadyToTrip saw
	// them, when it went from closed to open; zero for every other change.
	// (A breaker clears its counts as it changes state, so Breakers.Counts
	// reads zero once it is open.)
	Counts Counts
}

// New returns an empty set of breakers configured by c, or a
// *retry.InvalidError naming a bad field.
func New(c Config) (*Breakers, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = defaultMaxKeys
	}
	return &Breakers{c: c, keys: make(map[Key]*entry)}, nil
}

// PerAttempt reports whether the breakers guard each attempt rather than
// each call.
func (b *Breakers) PerAttempt() bool { return b != nil && b.c.PerAttempt }

// State returns the state of k's breaker now: closed for a key never seen.
// It moves an open breaker whose timeout has passed to half-open, as a call
// would; that change is reported with the key's next call.
func (b *Breakers) State(k Key) State {
	if e := b.lookup(k); e != nil {
		return e.circuit.State()
	}
	return StateClosed
}

// Counts returns the counts of k's breaker now: zero for a key never seen.
func (b *Breakers) Counts(k Key) Counts {
	if e := b.lookup(k); e != nil {
		return e.circuit.Counts()
	}
	return Counts{}
}

func (b *Breakers) lookup(k Key) *entry {
	e, _ := b.find(k)
	return e
}

// find returns k's breaker, or whether the set is full.
func (b *Breakers) find(k Key) (e *entry, full bool) {
	if b == nil || b.keys == nil {
		return nil, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.keys[k], len(b.keys) >= b.c.MaxKeys
}

// get returns k's breaker, made on first use; nil when the set is full. The
// circuit is made without the lock: NewCircuit may make a round trip, and
// the calls to other keys must not wait for it.
func (b *Breakers) get(k Key) (*entry, error) {
	e, full := b.find(k)
	if e != nil || full {
		return e, nil
	}
	e = &entry{key: k}
	c, err := b.circuit(k, e)
	if err != nil {
		return nil, err
	}
	e.circuit = c
	b.mu.Lock()
	defer b.mu.Unlock()
	switch old := b.keys[k]; {
	case old != nil: // made meanwhile by another call: this one is dropped
		return old, nil
	case len(b.keys) >= b.c.MaxKeys:
		return nil, nil
	}
	b.keys[k] = e
	return e, nil
}

func (b *Breakers) circuit(k Key, e *entry) (Circuit, error) {
	s := b.c.settings(k.String(), e.changed, e.tripped)
	if b.c.NewCircuit == nil {
		return local{gobreaker.NewTwoStepCircuitBreaker[any](s)}, nil
	}
	c, err := b.c.NewCircuit(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("breaker %s: %w", k, err)
	case c == nil:
		return nil, argerr.New("breaker.Config.NewCircuit", k.String(), "returned a nil Circuit")
	}
	return c, nil
}

// local is the default circuit: gobreaker's two-step breaker, in this
// package's types.
type local struct {
	cb *gobreaker.TwoStepCircuitBreaker[any]
}

func (l local) Allow() (func(error), error) { return l.cb.Allow() }
func (l local) State() State                { return StateOf(l.cb.State()) }
func (l local) Counts() Counts              { return CountsOf(l.cb.Counts()) }

// Permit is a call (or attempt) a breaker let through; Done reports how it
// ended. The zero Permit — a key past MaxKeys, which has no breaker —
// reports nothing.
type Permit struct {
	e    *entry
	done func(error)
	o    observe.Observer
}

// Allow asks k's breaker to let a call through: the retry loop calls it
// before each call (or attempt, with Config.PerAttempt), and Done after.
// It returns the refusal, wrapped with the key and matching ErrOpen or
// ErrTooManyRequests, when the breaker rejects the call; the error of
// NewCircuit if k's circuit could not be made. State changes are reported
// to o (which may be nil) with ctx, once the circuit's lock is released, so
// that o may read State. A nil or zero Breakers lets everything through.
func (b *Breakers) Allow(ctx context.Context, k Key, o observe.Observer) (Permit, error) {
	if b == nil || b.keys == nil {
		return Permit{}, nil
	}
	e, err := b.get(k)
	if e == nil || err != nil {
		return Permit{}, err
	}
	done, err := e.circuit.Allow()
	e.report(ctx, o)
	if err != nil {
		return Permit{}, rejection(k, err)
	}
	return Permit{e, done, o}, nil
}

// Done reports the call's outcome: nil for a success, an error matching
// Excluded for a call not to be counted (cancelled, or nothing sent), any
// other error for a failure.
func (p Permit) Done(ctx context.Context, outcome error) {
	if p.done == nil {
		return
	}
	p.done(outcome)
	p.e.report(ctx, p.o)
}

// rejection names the key in the circuit's refusal (the zero Key has no
// name to give).
func rejection(k Key, err error) error {
	switch {
	case errors.Is(err, gobreaker.ErrTooManyRequests):
		err = ErrTooManyRequests
	case errors.Is(err, gobreaker.ErrOpenState):
		err = ErrOpen
	}
	if k == (Key{}) {
		return fmt.Errorf("breaker: %w: the call was not made", err)
	}
	return fmt.Errorf("breaker %s: %w: the call was not made", k, err)
}

// changed records a state change; gobreaker calls it under its own lock, so
// the change is reported after the step into the circuit returns.
func (e *entry) changed(_ string, from, to gobreaker.State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := Transition{Key: e.key, From: StateOf(from), To: StateOf(to)}
	if from == gobreaker.StateClosed && to == gobreaker.StateOpen {
		t.Counts, e.trip = e.trip, Counts{}
	}
	e.changes = append(e.changes, t)
	e.pending.Add(1)
}

// tripped keeps the counts that are about to open the breaker, for changed.
func (e *entry) tripped(c Counts) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trip = c
}

// report delivers the recorded state changes to o.
func (e *entry) report(ctx context.Context, o observe.Observer) {
	if e.pending.Load() == 0 {
		return
	}
	e.mu.Lock()
	changes := e.changes
	e.changes = nil
	e.pending.Store(0)
	e.mu.Unlock()
	if o == nil {
		return
	}
	for _, t := range changes {
		o.Observe(ctx, observe.Event{Kind: observe.BreakerChanged, Detail: t})
	}
}
