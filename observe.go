package retry

import (
	"context"
	"log/slog"
	"time"

	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/observe"
)

// longWait is the wait from which a scheduled retry is logged at INFO rather
// than DEBUG: long enough for a person to notice the call is slow.
const longWait = time.Second

// observers joins a Retrier's observers into one, nil when there are none.
type observers []observe.Observer

func (os observers) Observe(ctx context.Context, e observe.Event) {
	for _, o := range os {
		o.Observe(ctx, e)
	}
}

func join(list []observe.Observer) observe.Observer {
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return observers(list)
}

// logObserver is WithLogger's observer.
type logObserver struct{ l *slog.Logger }

func (o logObserver) Observe(ctx context.Context, e observe.Event) {
	switch e.Kind {
	case observe.RetryScheduled:
		o.wait(ctx, e.Delay, "retry: waiting before the next attempt", slog.Int("attempt", e.Attempt),
			slog.Duration("delay", e.Delay), slog.String("class", e.Decision.Reason),
			slog.Duration("waited", e.Waited), slog.String("error", errString(e.Err)))
	case observe.LimiterWaited:
		o.hold(ctx, "retry: the client-side rate limiter held the attempt", e)
	case observe.CooldownWaited:
		o.hold(ctx, "retry: the key was cooling down: the attempt waited for it", e)
	case observe.HedgeStarted:
		o.log(ctx, slog.LevelDebug, "retry: hedging: started another attempt alongside the one still running",
			slog.Int("attempt", e.Attempt), slog.Duration("delay", e.Delay), slog.Duration("elapsed", e.Elapsed))
	case observe.GaveUp:
		o.log(ctx, slog.LevelInfo, "retry: gave up", slog.Any("error", e.Err))
	case observe.BreakerChanged:
		o.breaker(ctx, e)
	case observe.CooldownStarted:
		o.log(ctx, slog.LevelInfo, "retry: the server asked to come back later: the key cools down",
			slog.Any("key", e.Detail), slog.Duration("for", e.Delay))
	}
}

// hold logs what held an attempt back, as a wait.
func (o logObserver) hold(ctx context.Context, msg string, e observe.Event) {
	o.wait(ctx, e.Delay, msg, slog.Int("attempt", e.Attempt), slog.Duration("delay", e.Delay),
		slog.Duration("waited", e.Waited), slog.Duration("elapsed", e.Elapsed))
}

// wait logs a wait d at INFO when a person would notice it, at DEBUG
// otherwise.
func (o logObserver) wait(ctx context.Context, d time.Duration, msg string, attrs ...slog.Attr) {
	level := slog.LevelDebug
	if d >= longWait {
		level = slog.LevelInfo
	}
	o.log(ctx, level, msg, attrs...)
}

// breaker logs a breaker's change of state: WARN when it opens.
func (o logObserver) breaker(ctx context.Context, e observe.Event) {
	t, ok := e.Detail.(breaker.Transition)
	if !ok {
		return
	}
	level := slog.LevelInfo
	if t.To == breaker.StateOpen {
		level = slog.LevelWarn
	}
	o.log(ctx, level, "retry: circuit breaker changed state",
		slog.String("key", t.Key.String()), slog.String("from", t.From.String()), slog.String("to", t.To.String()))
}

func (o logObserver) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if o.l.Enabled(ctx, level) {
		o.l.LogAttrs(ctx, level, msg, attrs...)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
