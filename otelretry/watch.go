package otelretry

import (
	"math"
	"reflect"
	"sync"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"go.opentelemetry.io/otel/metric"
)

// rater is a limiter that reports its current rate, in attempts per second:
// a *limit.Adaptive, or limit/redis's *Limiter, whose rate is the fleet's.
// This module depends on neither go-redis nor limit/redis: any limiter with
// a Rate method is watched.
type rater interface{ Rate() float64 }

// rejecter is a limiter that reports the probability with which it refuses
// the next attempt: a *limit.Throttler.
type rejecter interface{ RejectProbability() float64 }

// watched are the objects whose state the Observer reads at collection: at
// most one of each kind, so that their series, which carry the Observer's
// name alone, are one each.
type watched struct {
	opts      obsOpts
	mu        sync.Mutex
	bucket    *budget.TokenBucket
	ratio     *budget.Ratio
	rate      rater
	reject    rejecter
	cooldowns *breaker.Cooldowns
}

const watchName = "otelretry.Observer.Watch"

// Watch makes the Observer report v's state whenever the meter provider
// collects, read then and never on a call's path. v is one of:
//
//   - a retry budget, *budget.TokenBucket (retry.budget.tokens,
//     retry.budget.threshold, retry.budget.refusals) or *budget.Ratio
//     (retry.budget.ratio, retry.budget.available, retry.budget.refusals);
//   - a rate limiter with a Rate method — a *limit.Adaptive, or limit/redis's
//     *Limiter, whose rate is the fleet's (retry.limit.rate, in requests per
//     second; no point while the rate is unlimited);
//   - a limiter with a RejectProbability method, a *limit.Throttler
//     (retry.limit.reject_probability, from 0 to 1);
//   - a cooldown registry, *breaker.Cooldowns (retry.cooldown.keys).
//
// An Observer watches one object of each kind: a second budget, limiter or
// registry is refused (watch it with an Observer of its own name). For a
// limit.Keyed, watch the limiter of each key that matters, from its Get,
// each with its own Observer. Watch returns a *retry.InvalidError for a nil
// value, one not made by its constructor, one of another kind, or a kind
// already watched. Unregister stops every report.
func (o *Observer) Watch(v any) error {
	switch {
	case o == nil || o.reg == nil:
		return invalid(watchName, v, "the Observer must be made by New")
	case v == nil || isNilPointer(v):
		return invalid(watchName, v, "must not be nil")
	}
	if c, ok := v.(interface{ Validate() error }); ok && c.Validate() != nil {
		return invalid(watchName, v, "must be made by its constructor")
	}
	w := &o.watched
	w.mu.Lock()
	defer w.mu.Unlock()
	switch v := v.(type) {
	case *budget.TokenBucket:
		return w.set(w.bucket == nil && w.ratio == nil, func() { w.bucket = v }, "a budget")
	case *budget.Ratio:
		return w.set(w.bucket == nil && w.ratio == nil, func() { w.ratio = v }, "a budget")
	case *breaker.Cooldowns:
		return w.set(w.cooldowns == nil, func() { w.cooldowns = v }, "a cooldown registry")
	}
	r, isRater := v.(rater)
	j, isRejecter := v.(rejecter)
	switch {
	case !isRater && !isRejecter:
		return invalid(watchName, v, "must be a *budget.TokenBucket, a *budget.Ratio, a *breaker.Cooldowns, or a limiter that reports its Rate or RejectProbability (a *limit.Adaptive, a *limit.Throttler, limit/redis's *Limiter)")
	case isRater && w.rate != nil, isRejecter && w.reject != nil:
		return invalid(watchName, v, "the Observer already watches a limiter: watch another with an Observer of its own name")
	}
	if isRater {
		w.rate = r
	}
	if isRejecter {
		w.reject = j
	}
	return nil
}

// set runs store if free, and otherwise refuses a second object of kind.
func (w *watched) set(free bool, store func(), kind string) error {
	if !free {
		return invalid(watchName, kind, "the Observer already watches "+kind+": watch another with an Observer of its own name")
	}
	store()
	return nil
}

func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice:
		return r.IsNil()
	}
	return false
}

// report reports the state of every object watched.
func (w *watched) report(in *instruments, obs metric.Observer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.bucket; b != nil {
		s := b.State()
		obs.ObserveFloat64(in.tokens, s.Tokens, w.opts...)
		obs.ObserveFloat64(in.threshold, s.Threshold, w.opts...)
		obs.ObserveInt64(in.refusals, int64(s.Denied), w.opts...)
	}
	if b := w.ratio; b != nil {
		s := b.State()
		obs.ObserveFloat64(in.ratio, s.Ratio, w.opts...)
		obs.ObserveInt64(in.available, s.Left, w.opts...)
		obs.ObserveInt64(in.refusals, int64(s.Denied), w.opts...)
	}
	if w.rate != nil {
		if r := w.rate.Rate(); !math.IsInf(r, 0) && !math.IsNaN(r) {
			obs.ObserveFloat64(in.rate, r, w.opts...)
		}
	}
	if w.reject != nil {
		obs.ObserveFloat64(in.reject, w.reject.RejectProbability(), w.opts...)
	}
	if w.cooldowns != nil {
		obs.ObserveInt64(in.cooldownKeys, int64(w.cooldowns.Len()), w.opts...)
	}
}
