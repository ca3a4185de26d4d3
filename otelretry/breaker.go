package otelretry

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/breaker"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the breaker and cooldown metrics.
const (
	KeyBreaker      = attribute.Key("retry.breaker.name")   // the name given to NewBreaker
	KeyBreakerState = attribute.Key("retry.breaker.state")  // "closed", "half_open", "open"
	KeyFromState    = attribute.Key("retry.breaker.from")   // a transition's former state
	KeyRejection    = attribute.Key("retry.breaker.reason") // "open", "half_open"
	KeyCooldowns    = attribute.Key("retry.cooldown.name")  // the name given to NewCooldowns
)

// states are the breaker's states, by their gobreaker values.
var states = [...]struct {
	s    breaker.State
	name string
}{{breaker.StateClosed, "closed"}, {breaker.StateHalfOpen, "half_open"}, {breaker.StateOpen, "open"}}

func stateIndex(s breaker.State) int {
	for i := range states {
		if states[i].s == s {
			return i
		}
	}
	return 0
}

// Breaker observes one circuit breaker through the hook it already has: give
// its OnStateChange to breaker.Settings.OnStateChange, and pass every error
// the breaker returns to Observe, which counts its rejections. It reports:
//
//   - retry.breaker.state: 1 for the state the breaker is in, 0 for the
//     others, as of the last change it heard of (closed until then);
//   - retry.breaker.transitions: changes of state, by from and to;
//   - retry.breaker.rejections: calls the breaker refused, by reason.
//
// It is safe for concurrent use.
type Breaker struct {
	state       atomic.Int32 // index in states
	transitions metric.Int64Counter
	rejections  metric.Int64Counter
	stateOpts   [len(states)]obsOpts
	moves       [len(states)][len(states)]addOpts
	rejected    [2]addOpts // open, half-open
	reg         metric.Registration
}

// NewBreaker makes the instruments of the breaker named name (the
// retry.breaker.name attribute: use its Settings.Name). It returns a
// *retry.InvalidError for an empty name or a bad option.
func NewBreaker(name string, opts ...Option) (*Breaker, error) {
	if err := checkName("otelretry.NewBreaker", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	o := &Breaker{}
	o.precompute(KeyBreaker.String(name))
	return o, o.instruments(c.mp.Meter(scope))
}

func (o *Breaker) precompute(n attribute.KeyValue) {
	for i, s := range states {
		o.stateOpts[i] = newObsOpts(n, KeyBreakerState.String(s.name))
		for j, to := range states {
			o.moves[i][j] = newAddOpts(n, KeyFromState.String(s.name), KeyBreakerState.String(to.name))
		}
	}
	o.rejected = [2]addOpts{newAddOpts(n, KeyRejection.String("open")), newAddOpts(n, KeyRejection.String("half_open"))}
}

func (o *Breaker) instruments(m metric.Meter) error {
	state, err1 := m.Int64ObservableGauge("retry.breaker.state", metric.WithUnit("{state}"),
		metric.WithDescription("1 for the state the circuit breaker is in, 0 for the others."))
	var err2, err3 error
	o.transitions, err2 = m.Int64Counter("retry.breaker.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("Changes of the circuit breaker's state."))
	o.rejections, err3 = m.Int64Counter("retry.breaker.rejections", metric.WithUnit("{call}"),
		metric.WithDescription("Calls the circuit breaker refused: the operation was not invoked."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	var err error
	o.reg, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		now := int(o.state.Load())
		for i := range states {
			v := int64(0)
			if i == now {
				v = 1
			}
			obs.ObserveInt64(state, v, o.stateOpts[i]...)
		}
		return nil
	}, state)
	return err
}

// OnStateChange records a change of state. Give it to
// breaker.Settings.OnStateChange; the name it is given is ignored (the
// Breaker has its own).
func (o *Breaker) OnStateChange(_ string, from, to breaker.State) {
	if o == nil || o.transitions == nil {
		return
	}
	f, t := stateIndex(from), stateIndex(to)
	o.state.Store(int32(t))
	o.transitions.Add(context.Background(), 1, o.moves[f][t]...)
}

// Observe counts err if it is the breaker's refusal (breaker.ErrOpen or
// breaker.ErrTooManyRequests); any other error, or nil, is not counted.
func (o *Breaker) Observe(ctx context.Context, err error) {
	if o == nil || o.rejections == nil || err == nil || ctx == nil {
		return
	}
	switch {
	case errors.Is(err, breaker.ErrOpen):
		o.rejections.Add(ctx, 1, o.rejected[0]...)
	case errors.Is(err, breaker.ErrTooManyRequests):
		o.rejections.Add(ctx, 1, o.rejected[1]...)
	}
}

// Unregister stops reporting retry.breaker.state.
func (o *Breaker) Unregister() error {
	if o == nil || o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}

// Cooldowns observes a cooldown registry (breaker.Cooldowns): give its
// OnCooldown to breaker.CooldownSettings.OnCooldown, its Watch the registry,
// and pass the errors of calls through it to Observe. It reports:
//
//   - retry.cooldown.started: cooldowns started by a 503 with Retry-After;
//   - retry.cooldown.keys: keys cooling down (the registry's Len: a key whose
//     cooldown just ended may still be counted);
//   - retry.cooldown.local_failures: calls that failed locally, without a
//     request, because their key was cooling down.
//
// A key is never an attribute: keys name hosts and models, and grow with them.
type Cooldowns struct {
	started  metric.Int64Counter
	local    metric.Int64Counter
	opts     addOpts
	obs      obsOpts
	registry atomic.Pointer[lenner]
	reg      metric.Registration
}

type lenner interface{ Len() int }

// NewCooldowns makes the instruments of the cooldown registry named name
// (the retry.cooldown.name attribute). It returns a *retry.InvalidError for
// an empty name or a bad option.
func NewCooldowns(name string, opts ...Option) (*Cooldowns, error) {
	if err := checkName("otelretry.NewCooldowns", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	o := &Cooldowns{opts: newAddOpts(KeyCooldowns.String(name)), obs: newObsOpts(KeyCooldowns.String(name))}
	return o, o.instruments(c.mp.Meter(scope))
}

func (o *Cooldowns) instruments(m metric.Meter) error {
	keys, err1 := m.Int64ObservableGauge("retry.cooldown.keys", metric.WithUnit("{key}"),
		metric.WithDescription("Keys cooling down after a 503 with Retry-After."))
	var err2, err3 error
	o.started, err2 = m.Int64Counter("retry.cooldown.started", metric.WithUnit("{cooldown}"),
		metric.WithDescription("Cooldowns started by a 503 with Retry-After."))
	o.local, err3 = m.Int64Counter("retry.cooldown.local_failures", metric.WithUnit("{call}"),
		metric.WithDescription("Calls that failed locally, sending nothing, because their key was cooling down."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	var err error
	o.reg, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		if r := o.registry.Load(); r != nil {
			obs.ObserveInt64(keys, int64((*r).Len()), o.obs...)
		}
		return nil
	}, keys)
	return err
}

// OnCooldown counts a cooldown that started. Give it to
// breaker.CooldownSettings.OnCooldown.
func (o *Cooldowns) OnCooldown(_ string, _ time.Time, _ error) {
	if o != nil && o.started != nil {
		o.started.Add(context.Background(), 1, o.opts...)
	}
}

// Watch makes retry.cooldown.keys report registry's Len, a
// *breaker.Cooldowns[K] of any key type. A nil registry stops the report.
func (o *Cooldowns) Watch(registry interface{ Len() int }) {
	if o == nil {
		return
	}
	if registry == nil {
		o.registry.Store(nil)
		return
	}
	l := lenner(registry)
	o.registry.Store(&l)
}

// Observe counts err if it is a local failure of a key cooling down
// (breaker.ErrCooldown).
func (o *Cooldowns) Observe(ctx context.Context, err error) {
	if o != nil && o.local != nil && ctx != nil && err != nil && errors.Is(err, breaker.ErrCooldown) {
		o.local.Add(ctx, 1, o.opts...)
	}
}

// Unregister stops reporting retry.cooldown.keys.
func (o *Cooldowns) Unregister() error {
	if o == nil || o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}
