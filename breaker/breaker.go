package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/sony/gobreaker/v2"
)

// State is a breaker's state: closed, half-open or open.
type State = gobreaker.State

// Counts are the breaker's counters, as ReadyToTrip sees them.
type Counts = gobreaker.Counts

// The breaker's states.
const (
	StateClosed   = gobreaker.StateClosed
	StateHalfOpen = gobreaker.StateHalfOpen
	StateOpen     = gobreaker.StateOpen
)

var (
	// ErrOpen: the breaker is open; the call was not made.
	ErrOpen = errors.New("circuit breaker is open")
	// ErrTooManyRequests: the breaker is half-open and its probes are taken;
	// the call was not made.
	ErrTooManyRequests = errors.New("circuit breaker is half-open and its probes are taken")
)

// RejectedError is returned for a call the breaker refused. The operation
// was not invoked. It matches ErrOpen or ErrTooManyRequests, and gobreaker's
// own sentinels.
type RejectedError struct {
	Breaker string // the breaker's name
	Reason  error  // ErrOpen or ErrTooManyRequests
	cause   error  // gobreaker's sentinel
}

// Error returns "breaker payments: circuit breaker is open: the call was not made".
func (e *RejectedError) Error() string {
	return fmt.Sprintf("breaker %s: %v: the call was not made", e.Breaker, e.Reason)
}

// Unwrap returns the reason and gobreaker's sentinel.
func (e *RejectedError) Unwrap() []error { return []error{e.Reason, e.cause} }

// Circuit is the two-step protocol of gobreaker's TwoStepCircuitBreaker: Allow
// asks to make a call and returns the function that reports its outcome
// (nil for a success, an error matching Excluded for a call not to be
// counted, any other error for a failure), or an error if the call is refused.
// State and Counts report what the circuit knows now, for health endpoints
// and metrics.
type Circuit interface {
	Allow() (done func(error), err error)
	State() State
	Counts() Counts
}

// Excluded is the outcome a Breaker reports for a call that must not count:
// the caller cancelled it, or it was never made. Settings.Gobreaker's
// IsExcluded recognises it.
var Excluded = errors.New("breaker: outcome not counted")

// Settings configures a breaker. The zero value is usable; see the defaults
// in the package documentation.
type Settings struct {
	Name        string
	MaxRequests uint32            // probes let through while half-open
	Interval    time.Duration     // closed-state period after which counts are cleared
	Timeout     time.Duration     // how long the breaker stays open
	ReadyToTrip func(Counts) bool // when to open, given the counts after a failure
	// OnStateChange, if set, hears of every change of state, as gobreaker's
	// hook does, after the call that caused it has left the circuit (never
	// under the circuit's lock). It runs on the caller's goroutine: it must
	// be quick and safe for concurrent use.
	OnStateChange func(name string, from, to State)
}

// Gobreaker returns the gobreaker settings for s, with onChange as the state
// change callback, for building a Circuit (see WithCircuit).
func (s Settings) Gobreaker(onChange func(name string, from, to State)) gobreaker.Settings {
	return gobreaker.Settings{
		Name:          s.Name,
		MaxRequests:   s.MaxRequests,
		Interval:      s.Interval,
		Timeout:       s.Timeout,
		ReadyToTrip:   s.ReadyToTrip,
		OnStateChange: onChange,
		IsExcluded:    func(err error) bool { return errors.Is(err, Excluded) },
	}
}

func (s Settings) validate() *retry.InvalidError {
	switch {
	case s.Interval < 0:
		return argerr.New("breaker.Settings.Interval", s.Interval, "must not be negative")
	case s.Timeout < 0:
		return argerr.New("breaker.Settings.Timeout", s.Timeout, "must not be negative")
	}
	return nil
}

// Option configures New.
type Option func(*Breaker) *retry.InvalidError

// PerAttempt puts the breaker around every attempt instead of around the
// whole retried call.
func PerAttempt() Option {
	return func(b *Breaker) *retry.InvalidError { b.perAttempt = true; return nil }
}

// WithCircuit builds the breaker's circuit with f instead of a local
// gobreaker TwoStepCircuitBreaker — for example a distributed one shared
// through Redis (package github.com/retrykit/retry/breaker/redis). f receives
// the gobreaker settings to use.
func WithCircuit(f func(gobreaker.Settings) (Circuit, error)) Option {
	return func(b *Breaker) *retry.InvalidError {
		if f == nil {
			return argerr.New("breaker.WithCircuit", nil, "must not be nil")
		}
		b.factory = f
		return nil
	}
}

// Breaker guards calls to one dependency with a circuit breaker and a
// Retrier. It is safe for concurrent use. The zero Breaker is not usable:
// its methods return an error matching retry.ErrInvalid; build one with New.
type Breaker struct {
	name       string
	circuit    Circuit
	factory    func(gobreaker.Settings) (Circuit, error)
	r          *retry.Retrier
	perAttempt bool
	onChange   func(name string, from, to State)

	mu      sync.Mutex
	changes []stateChange // not yet reported
	pending atomic.Int32
}

type stateChange struct {
	name     string
	from, to State
}

// New returns a Breaker with settings s around the calls of r. It returns a
// *retry.InvalidError naming a bad setting or option, or a nil r, and the
// circuit factory's error if it fails.
func New(s Settings, r *retry.Retrier, opts ...Option) (*Breaker, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, argerr.New("breaker.New", nil, "the Retrier must not be nil (build one with retry.New)")
	}
	b := &Breaker{name: s.Name, r: r, factory: local, onChange: s.OnStateChange}
	for _, o := range opts {
		if o == nil {
			return nil, argerr.New("breaker.Option", nil, "must not be nil")
		}
		if err := o(b); err != nil {
			return nil, err
		}
	}
	c, err := b.factory(s.Gobreaker(b.changed))
	if err != nil {
		return nil, fmt.Errorf("breaker.New: %w", err)
	}
	if c == nil {
		return nil, argerr.New("breaker.WithCircuit", "factory", "returned a nil Circuit")
	}
	b.circuit = c
	return b, nil
}

func local(s gobreaker.Settings) (Circuit, error) {
	return gobreaker.NewTwoStepCircuitBreaker[any](s), nil
}

// State returns the breaker's state now.
func (b *Breaker) State() State {
	if b == nil || b.circuit == nil {
		return StateClosed
	}
	return b.circuit.State()
}

// Counts returns the breaker's counters now, as ReadyToTrip sees them.
func (b *Breaker) Counts() Counts {
	if b == nil || b.circuit == nil {
		return Counts{}
	}
	return b.circuit.Counts()
}

// Do calls op through the breaker and the Retrier.
func (b *Breaker) Do(ctx context.Context, op func(context.Context) error) error {
	if op == nil {
		return argerr.New("breaker.Do", nil, "op must not be nil")
	}
	_, _, err := Value(ctx, b, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) })
	return err
}

// Value calls op through the breaker and the Retrier, and returns its last
// result and the retry loop's Stats (zero for a call the breaker refused
// outside the loop).
func Value[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (T, retry.Stats, error) {
	var v T
	var st retry.Stats
	switch {
	case b == nil || b.circuit == nil:
		return v, st, argerr.New("breaker.Value", nil, "the Breaker must be built with breaker.New")
	case op == nil:
		return v, st, argerr.New("breaker.Value", nil, "op must not be nil")
	case ctx == nil:
		return v, st, argerr.New("breaker.Value", nil, "the context must not be nil")
	}
	var err error
	if b.perAttempt {
		v, st, err = retry.Value(ctx, b.r, func(ctx context.Context) (T, error) { return guard(ctx, b, op) })
		return v, st, err
	}
	v, err = guard(ctx, b, func(ctx context.Context) (T, error) {
		var err error
		v, st, err = retry.Value(ctx, b.r, op)
		return v, err
	})
	return v, st, err
}

func isRejection(err error) bool {
	return errors.Is(err, ErrOpen) || errors.Is(err, ErrTooManyRequests)
}

// guard makes one call through the circuit: refused at once, or made and
// its outcome reported.
func guard[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (v T, err error) {
	done, rejected := b.circuit.Allow()
	b.report()
	if rejected != nil {
		return v, b.rejection(rejected)
	}
	defer func() {
		if p := recover(); p != nil {
			done(fmt.Errorf("panic: %v", p))
			b.report()
			panic(p)
		}
	}()
	v, err = op(ctx)
	done(b.outcome(err))
	b.report()
	return v, err
}

// rejection wraps the circuit's refusal: permanent, so that no retry loop
// around it tries again.
func (b *Breaker) rejection(err error) error {
	reason := ErrOpen
	if errors.Is(err, gobreaker.ErrTooManyRequests) {
		reason = ErrTooManyRequests
	} else if !errors.Is(err, gobreaker.ErrOpenState) {
		return err // the circuit itself failed (a distributed store, say)
	}
	return classify.Permanent(&RejectedError{Breaker: b.name, Reason: reason, cause: err})
}

// outcome says what the breaker counts for a call that ended with err: what
// the Retrier would retry is a failure; a cancelled or never-made call is not
// counted; anything else (a success, a 400 the caller caused) is a success.
func (b *Breaker) outcome(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, retry.ErrInvalid) {
		return Excluded // the caller gave up, or nothing was called
	}
	d := b.r.Classify(err)
	var rerr *retry.Error
	if errors.As(err, &rerr) { // a whole retried call: judge by its last attempt
		if rerr.Attempts == 0 {
			return Excluded
		}
		d = rerr.Decision
	}
	if d.Verdict == classify.Retry || d.Reason == classify.ReasonUnclassified {
		return err
	}
	return nil
}

// changed records a state change; gobreaker calls it under its own lock, so
// the change is reported after the call into the circuit returns.
func (b *Breaker) changed(name string, from, to State) {
	if b.onChange == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changes = append(b.changes, stateChange{name, from, to})
	b.pending.Add(1)
}

// report delivers recorded state changes to OnStateChange.
func (b *Breaker) report() {
	if b.pending.Load() == 0 {
		return
	}
	b.mu.Lock()
	changes := b.changes
	b.changes = nil
	b.pending.Store(0)
	b.mu.Unlock()
	for _, c := range changes {
		b.onChange(c.name, c.from, c.to)
	}
}

// Classify recognises a breaker's refusals — this package's and gobreaker's
// own ErrOpenState and ErrTooManyRequests — as permanent for the call. Add it
// with retry.WithClassifier where gobreaker is used directly.
func Classify(err error) classify.Decision {
	if isRejection(err) || errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return classify.Decision{Verdict: classify.Stop, Reason: "circuit breaker rejected"}
	}
	return classify.Decision{}
}
