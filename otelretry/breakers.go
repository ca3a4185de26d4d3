package otelretry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// MaxDistinct bounds the values an Observer takes from what is not a fixed
// set: the first MaxDistinct breaker keys seen get series of their own (a
// key names a host, a model, a gRPC method, and grows with them), later
// ones are counted under the key "other"; the same for the pairs of a
// letter's source and root-cause group, which are hashes of error messages
// a dependency can vary without end.
const MaxDistinct = 100

// keyedBreakers are the series of the breakers the Observer heard of, one
// set per key up to MaxDistinct, and the cooldown counters.
type keyedBreakers struct {
	name  attribute.KeyValue
	plain addOpts // the name alone
	mu    sync.Mutex
	keys  map[breaker.Key]*breakerSeries
	order []*breakerSeries // the keys' series as first seen, for report
	other *breakerSeries   // every key past MaxDistinct
}

// breakerSeries are one key's series: its state as of the last change
// heard of, and the attribute sets of its measurements.
type breakerSeries struct {
	state     atomic.Int32 // index in states
	stateOpts [len(states)]obsOpts
	moves     [len(states)][len(states)]addOpts
	rejected  [2]addOpts // rejectedOpen, rejectedHalfOpen
}

func (b *keyedBreakers) init(name attribute.KeyValue) {
	b.name, b.plain = name, newAddOpts(name)
	b.keys = map[breaker.Key]*breakerSeries{}
	b.other = newBreakerSeries(name, other)
}

func newBreakerSeries(name attribute.KeyValue, key string) *breakerSeries {
	s := &breakerSeries{}
	k := keyBreaker.String(key)
	for i := range states {
		s.stateOpts[i] = newObsOpts(name, k, keyState.String(stateLabel(i)))
		for j := range states {
			s.moves[i][j] = newAddOpts(name, k, keyFromState.String(stateLabel(i)), keyState.String(stateLabel(j)))
		}
	}
	s.rejected[rejectedOpen] = newAddOpts(name, k, keyRejection.String(stateLabel(stateIndex(breaker.StateOpen))))
	s.rejected[rejectedHalfOpen] = newAddOpts(name, k, keyRejection.String(stateLabel(stateIndex(breaker.StateHalfOpen))))
	return s
}

// series returns k's series, made on first sight; other's past MaxDistinct.
func (b *keyedBreakers) series(k breaker.Key) *breakerSeries {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.keys[k]; ok {
		return s
	}
	if len(b.keys) >= MaxDistinct {
		return b.other
	}
	s := newBreakerSeries(b.name, k.String())
	b.keys[k] = s
	b.order = append(b.order, s)
	return s
}

// report reports the state of every key with series of its own: 1 for its
// state, 0 for the others. The keys counted under other have no state.
func (b *keyedBreakers) report(g metric.Int64ObservableGauge, obs metric.Observer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.order {
		now := int(s.state.Load())
		for i := range states {
			v := int64(0)
			if i == now {
				v = 1
			}
			obs.ObserveInt64(g, v, s.stateOpts[i]...)
		}
	}
}

// breaker records a breaker's change of state, or a key's cooldown.
func (o *Observer) breaker(ctx context.Context, e observe.Event) {
	if e.Kind == observe.CooldownStarted {
		o.inst.cooldowns.Add(ctx, 1, o.breakers.plain...)
		if s, ok := span(ctx); ok {
			s.AddEvent("retry.cooldown_started", trace.WithAttributes(o.nameAttr, keyDelay.Float64(e.Delay.Seconds())))
		}
		return
	}
	t, ok := e.Detail.(breaker.Transition)
	if !ok {
		return
	}
	from, to := stateIndex(t.From), stateIndex(t.To)
	series := o.breakers.series(t.Key)
	series.state.Store(int32(to))
	o.inst.transitions.Add(ctx, 1, series.moves[from][to]...)
	if s, ok := span(ctx); ok {
		s.AddEvent("retry.breaker_changed", trace.WithAttributes(o.nameAttr, keyBreaker.String(t.Key.String()),
			keyFromState.String(stateLabel(from)), keyState.String(stateLabel(to))))
	}
}

// rejected counts a call or a hedge the breaker of the call's key refused:
// by the refusal err when it says which state refused (breaker.ErrOpen,
// breaker.ErrTooManyRequests), by the key's last state heard of otherwise.
func (o *Observer) rejected(ctx context.Context, err error) {
	k, _ := breaker.KeyOf(ctx)
	series := o.breakers.series(k)
	reason := rejectedOpen
	switch {
	case err != nil && errors.Is(err, breaker.ErrTooManyRequests):
		reason = rejectedHalfOpen
	case err != nil && errors.Is(err, breaker.ErrOpen):
	case states[series.state.Load()] == breaker.StateHalfOpen:
		reason = rejectedHalfOpen
	}
	o.inst.rejections.Add(ctx, 1, series.rejected[reason]...)
}
