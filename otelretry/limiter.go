package otelretry

import (
	"context"
	"math"

	"github.com/retrykit/retry/limit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// KeyLimiter is the attribute naming a limiter: the name given to
// ObserveLimiter.
const KeyLimiter = attribute.Key("retry.limit.name")

// Rater is a limiter that reports its current rate, in attempts per second:
// a *limit.Adaptive, or the fleet limiter of the nested module limit/redis,
// whose *Limiter reports the fleet's rate. This module depends on neither
// go-redis nor limit/redis: any limiter with a Rate method is observed.
type Rater interface {
	Rate() float64
}

// Rejecter is a limiter that reports the probability with which it refuses
// the next attempt: a *limit.Throttler.
type Rejecter interface {
	RejectProbability() float64
}

// ObserveLimiter reports the state of l whenever the meter provider
// collects: the current rate of a Rater (retry.limit.rate, in requests per
// second) — a *limit.Adaptive, or limit/redis's *Limiter, whose rate is the
// fleet's — and the rejection probability of a Rejecter (a *limit.Throttler:
// retry.limit.reject_probability, from 0 to 1). It reads them only then,
// never on a call's path. Unregister the returned registration to stop.
//
// A rate is reported only while the limiter limits: until the server first
// throttles, an Adaptive lets every attempt through and its Rate is +Inf,
// which is no figure a dashboard can plot, so the series has no point. A
// Throttler's probability is as of its last attempt: one no call asks keeps
// its last figure. For a limit.Keyed, observe the limiter of each key that
// matters, from its Get, under a name of its own.
//
// The limiters count no refusals of their own. Refused calls are counted per
// Retrier: retry.call.duration with the outcome limited (retry.ErrLimited).
func ObserveLimiter(name string, l limit.Limiter, opts ...Option) (metric.Registration, error) {
	if err := checkName("otelretry.ObserveLimiter", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	rater, _ := l.(Rater)
	rejecter, _ := l.(Rejecter)
	v, _ := l.(interface{ Validate() error })
	switch {
	case rater == nil && rejecter == nil:
		return nil, invalid("otelretry.ObserveLimiter", l, "the limiter must report its Rate or RejectProbability (a *limit.Adaptive, a *limit.Throttler, limit/redis's *Limiter; for a limit.Keyed, each key's limiter from Get)")
	case v != nil && v.Validate() != nil:
		return nil, invalid("otelretry.ObserveLimiter", l, "the limiter must be made by its constructor")
	}
	return observeLimiter(c.mp.Meter(scope), rater, rejecter, newObsOpts(KeyLimiter.String(name)))
}

func observeLimiter(m metric.Meter, rater Rater, rejecter Rejecter, set obsOpts) (metric.Registration, error) {
	var insts []metric.Observable
	var rate, reject metric.Float64ObservableGauge
	var err error
	if rater != nil {
		rate, err = m.Float64ObservableGauge("retry.limit.rate", metric.WithUnit("{request}/s"),
			metric.WithDescription("The rate at which the client-side limiter lets attempts through; no point while it does not limit."))
		if err != nil {
			return nil, err
		}
		insts = append(insts, rate)
	}
	if rejecter != nil {
		reject, err = m.Float64ObservableGauge("retry.limit.reject_probability", metric.WithUnit("1"),
			metric.WithDescription("The probability with which the client-side throttler refuses the next attempt."))
		if err != nil {
			return nil, err
		}
		insts = append(insts, reject)
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if rater != nil {
			if r := rater.Rate(); !math.IsInf(r, 0) && !math.IsNaN(r) {
				o.ObserveFloat64(rate, r, set...)
			}
		}
		if rejecter != nil {
			o.ObserveFloat64(reject, rejecter.RejectProbability(), set...)
		}
		return nil
	}, insts...)
}
