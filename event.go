package retry

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/retrykit/retry/classify"
)

// EventKind says what happened.
type EventKind uint8

const (
	// AttemptDone: an attempt returned. Err is its error, nil on success.
	AttemptDone EventKind = iota + 1
	// RetryScheduled: the last attempt failed and the call will wait Delay
	// before the next one.
	RetryScheduled
	// GaveUp: the call failed for good. Err is the *Error returned.
	GaveUp
	// BreakerStateChanged: the circuit breaker Name went From one state To
	// another (see package breaker).
	BreakerStateChanged
	// CooldownStarted: calls for the key Name fail locally Until the server's
	// Retry-After has passed (see package breaker).
	CooldownStarted
)

// String returns "attempt done", "retry scheduled" or "gave up".
func (k EventKind) String() string {
	switch k {
	case AttemptDone:
		return "attempt done"
	case RetryScheduled:
		return "retry scheduled"
	case GaveUp:
		return "gave up"
	case BreakerStateChanged:
		return "breaker state changed"
	case CooldownStarted:
		return "cooldown started"
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// Event is what a hook receives.
type Event struct {
	Kind     EventKind
	Attempt  int               // 1-based number of the attempt concerned
	Err      error             // the attempt's error, or the final *Error for GaveUp
	Decision classify.Decision // how a failed attempt was classified
	Delay    time.Duration     // RetryScheduled: the wait before the next attempt
	Waited   time.Duration     // total wait so far
	Elapsed  time.Duration     // since the call began (see Stats)

	// Name, From, To and Until describe the events of components that work
	// with the retry loop: a breaker's name and states, a cooldown's key and
	// end.
	Name     string
	From, To string
	Until    time.Time
}

// Notify delivers e to the Retrier's hooks and logger, as if the loop had
// produced it. Components that work with the loop, such as circuit breakers
// and cooldown registries, report through it so that their events reach the
// same observers as retries.
func (r *Retrier) Notify(ctx context.Context, e Event) {
	if r = r.get(); r.hook != nil {
		r.hook(ctx, e)
	}
}

// LongWait is the wait from which a scheduled retry is logged at INFO rather
// than DEBUG: long enough for a person to notice the call is slow.
const LongWait = time.Second

func logHook(l *slog.Logger) func(context.Context, Event) {
	return func(ctx context.Context, e Event) {
		switch e.Kind {
		case RetryScheduled:
			level := slog.LevelDebug
			if e.Delay >= LongWait {
				level = slog.LevelInfo
			}
			if !l.Enabled(ctx, level) {
				return
			}
			l.LogAttrs(ctx, level, "retry: waiting before the next attempt",
				slog.Int("attempt", e.Attempt),
				slog.Duration("delay", e.Delay),
				slog.String("class", e.Decision.Reason),
				slog.Duration("waited", e.Waited),
				slog.String("error", errString(e.Err)))
		case GaveUp:
			if l.Enabled(ctx, slog.LevelInfo) {
				l.LogAttrs(ctx, slog.LevelInfo, "retry: gave up", slog.Any("error", e.Err))
			}
		case BreakerStateChanged:
			level := slog.LevelInfo
			if e.To == "open" {
				level = slog.LevelWarn
			}
			l.LogAttrs(ctx, level, "retry: circuit breaker changed state",
				slog.String("breaker", e.Name), slog.String("from", e.From), slog.String("to", e.To))
		case CooldownStarted:
			l.LogAttrs(ctx, slog.LevelInfo, "retry: cooling down: calls fail locally until the server's Retry-After",
				slog.String("key", e.Name), slog.Time("until", e.Until), slog.String("error", errString(e.Err)))
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
