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
type Circuit interface {
	Allow() (done func(error), err error)
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

func (s Settings) validate() error {
	switch {
	case s.Interval < 0:
		return fmt.Errorf("breaker.Settings.Interval = %v: must not be negative", s.Interval)
	case s.Timeout < 0:
		return fmt.Errorf("breaker.Settings.Timeout = %v: must not be negative", s.Timeout)
	}
	return nil
}

// Option configures a Breaker.
type Option func(*Breaker)

// PerAttempt puts the breaker around every attempt instead of around the
// whole retried call.
func PerAttempt() Option { return func(b *Breaker) { b.perAttempt = true } }

// WithCircuit builds the breaker's circuit with f instead of a local
// gobreaker TwoStepCircuitBreaker — for example a distributed one shared
// through Redis (package github.com/retrykit/retry/breaker/redis). f receives
// the gobreaker settings to use.
func WithCircuit(f func(gobreaker.Settings) (Circuit, error)) Option {
	return func(b *Breaker) { b.factory = f }
}

// WithFallback turns a rejection (ErrOpen, ErrTooManyRequests) into a
// degraded answer — a cached value, a default — for Value calls with the same
// T. f receives the rejection.
func WithFallback[T any](f func(ctx context.Context, rejected error) (T, error)) Option {
	return func(b *Breaker) { b.fallback = f }
}

// Breaker guards calls to one dependency with a circuit breaker and a
// Retrier. It is safe for concurrent use.
type Breaker struct {
	name       string
	circuit    Circuit
	factory    func(gobreaker.Settings) (Circuit, error)
	r          *retry.Retrier
	perAttempt bool
	fallback   any

	mu      sync.Mutex
	changes []retry.Event // state changes not yet reported
	pending atomic.Int32
}

// New returns a Breaker with settings s, retrying with r (nil means a
// Retrier with the defaults). It returns an error naming a bad setting or
// option.
func New(s Settings, r *retry.Retrier, opts ...Option) (*Breaker, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	b := &Breaker{name: s.Name, r: r, factory: local}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("breaker.New: nil Option")
		}
		o(b)
	}
	if b.factory == nil {
		return nil, errors.New("breaker.WithCircuit: nil factory")
	}
	c, err := b.factory(s.Gobreaker(b.changed))
	if err != nil {
		return nil, fmt.Errorf("breaker.New: %w", err)
	}
	if c == nil {
		return nil, errors.New("breaker.WithCircuit: the factory returned a nil Circuit")
	}
	b.circuit = c
	return b, nil
}

func local(s gobreaker.Settings) (Circuit, error) {
	return gobreaker.NewTwoStepCircuitBreaker[any](s), nil
}

// Do calls op through the breaker and the Retrier.
func (b *Breaker) Do(ctx context.Context, op func(context.Context) error) error {
	if op == nil {
		return errors.New("breaker: nil op")
	}
	_, err := Value(ctx, b, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) })
	return err
}

// Value calls op through the breaker and the Retrier and returns its last
// result. A rejection is turned into the fallback's answer when the Breaker
// has a fallback for T (WithFallback).
func Value[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (T, error) {
	v, _, err := RunValue(ctx, b, op)
	return v, err
}

// RunValue is Value that also reports the retry loop's Stats (zero for a
// call the breaker refused outside the loop).
func RunValue[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (T, retry.Stats, error) {
	var zero T
	switch {
	case b == nil:
		return zero, retry.Stats{}, errors.New("breaker: nil Breaker")
	case op == nil:
		return zero, retry.Stats{}, errors.New("breaker: nil op")
	}
	var v T
	var st retry.Stats
	var err error
	if b.perAttempt {
		v, st, err = retry.RunValue(ctx, b.r, func(ctx context.Context) (T, error) { return guard(ctx, b, op) })
	} else {
		v, err = guard(ctx, b, func(ctx context.Context) (T, error) {
			var err error
			v, st, err = retry.RunValue(ctx, b.r, op)
			return v, err
		})
	}
	v, err = answer(ctx, b, v, err)
	return v, st, err
}

// answer applies the fallback to a rejection.
func answer[T any](ctx context.Context, b *Breaker, v T, err error) (T, error) {
	var zero T
	if err != nil && b.fallback != nil && isRejection(err) {
		f, ok := b.fallback.(func(context.Context, error) (T, error))
		if !ok {
			return v, fmt.Errorf("breaker.WithFallback: the fallback (%T) does not answer for %T", b.fallback, zero)
		}
		return f(ctx, err)
	}
	return v, err
}

func isRejection(err error) bool {
	return errors.Is(err, ErrOpen) || errors.Is(err, ErrTooManyRequests)
}

// guard makes one call through the circuit: refused at once, or made and
// its outcome reported.
func guard[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (v T, err error) {
	done, rejected := b.circuit.Allow()
	b.report(ctx)
	if rejected != nil {
		return v, b.rejection(rejected)
	}
	defer func() {
		if p := recover(); p != nil {
			done(fmt.Errorf("panic: %v", p))
			b.report(ctx)
			panic(p)
		}
	}()
	v, err = op(ctx)
	done(b.outcome(err))
	b.report(ctx)
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
	if errors.Is(err, context.Canceled) {
		return Excluded
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changes = append(b.changes, retry.Event{Kind: retry.BreakerStateChanged, Name: name, From: from.String(), To: to.String()})
	b.pending.Add(1)
}

// report delivers recorded state changes to the Retrier's observers.
func (b *Breaker) report(ctx context.Context) {
	if b.pending.Load() == 0 {
		return
	}
	b.mu.Lock()
	changes := b.changes
	b.changes = nil
	b.pending.Store(0)
	b.mu.Unlock()
	for _, e := range changes {
		b.r.Notify(ctx, e)
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
