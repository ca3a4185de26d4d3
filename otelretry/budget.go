package otelretry

import (
	"context"
	"errors"

	"github.com/retrykit/retry/budget"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// KeyBudget is the attribute naming a budget: the name given to
// ObserveBudget.
const KeyBudget = attribute.Key("retry.budget.name")

// ObserveBudget reports the state of b, a *budget.TokenBucket or a
// *budget.Ratio, whenever the meter provider collects: the tokens left and
// the threshold of a bucket (retry.budget.tokens, retry.budget.threshold),
// the retry ratio and the retries left of a Ratio (retry.budget.ratio,
// retry.budget.available), and the retries either refused
// (retry.budget.refusals). It reads b's State only then, never on a call's
// path. Unregister the returned registration to stop.
//
// Refused calls are also counted per Retrier: retry.call.duration with the
// outcome retry_budget.
func ObserveBudget(name string, b budget.Budget, opts ...Option) (metric.Registration, error) {
	if err := checkName("otelretry.ObserveBudget", name); err != nil {
		return nil, err
	}
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	m := c.mp.Meter(scope)
	set := metric.WithAttributeSet(attribute.NewSet(KeyBudget.String(name)))
	switch b := b.(type) {
	case *budget.TokenBucket:
		if b.Validate() == nil {
			return observeBucket(m, b, set)
		}
	case *budget.Ratio:
		if b.Validate() == nil {
			return observeRatio(m, b, set)
		}
	}
	return nil, invalid("otelretry.ObserveBudget", b, "the budget must be a *budget.TokenBucket or a *budget.Ratio made by its constructor")
}

func refusals(m metric.Meter) (metric.Int64ObservableCounter, error) {
	return m.Int64ObservableCounter("retry.budget.refusals", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries the budget refused since it was made."))
}

func observeBucket(m metric.Meter, b *budget.TokenBucket, set metric.MeasurementOption) (metric.Registration, error) {
	tokens, err1 := m.Float64ObservableGauge("retry.budget.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens in the retry budget's bucket: retries stop at or below the threshold."))
	threshold, err2 := m.Float64ObservableGauge("retry.budget.threshold", metric.WithUnit("{token}"),
		metric.WithDescription("The level of tokens at or below which the budget refuses retries."))
	refused, err3 := refusals(m)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := b.State()
		o.ObserveFloat64(tokens, s.Tokens, set)
		o.ObserveFloat64(threshold, s.Threshold, set)
		o.ObserveInt64(refused, int64(s.Denied), set)
		return nil
	}, tokens, threshold, refused)
}

func observeRatio(m metric.Meter, b *budget.Ratio, set metric.MeasurementOption) (metric.Registration, error) {
	ratio, err1 := m.Float64ObservableGauge("retry.budget.ratio", metric.WithUnit("1"),
		metric.WithDescription("Retries allowed in the budget's window, per first attempt in it."))
	left, err2 := m.Int64ObservableGauge("retry.budget.available", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries the budget still allows in its window."))
	refused, err3 := refusals(m)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := b.State()
		o.ObserveFloat64(ratio, s.Ratio, set)
		o.ObserveInt64(left, s.Left, set)
		o.ObserveInt64(refused, int64(s.Denied), set)
		return nil
	}, ratio, left, refused)
}
