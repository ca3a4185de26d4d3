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
	// In a hedged call (WithHedging) Err is nil for the winner only: an
	// attempt that also succeeds after another won is a loser whose result
	// was discarded, and reports context.Canceled, as it would had its
	// cancelled context stopped it in time. A hook thus sees one success
	// per call. Started says how many attempts the call had started.
	AttemptDone EventKind = iota + 1
	// RetryScheduled: the last attempt failed and the call will wait Delay
	// before the next one.
	RetryScheduled
	// GaveUp: the call failed for good. Err is the *Error returned.
	GaveUp
	// HedgeStarted: an attempt had not finished after the hedging delay
	// (Delay), and attempt Attempt started alongside it (see WithHedging).
	HedgeStarted
	// LimiterWaited: the client-side rate limiter (WithLimiter) held attempt
	// Attempt for Delay before letting it go; the event comes as the wait
	// ends, just before the attempt starts. Waited includes Delay when the
	// attempt follows a failure (see WithLimiter). A permission given at
	// once (in under a microsecond) is no wait and reports nothing; a
	// refusal is a GaveUp with ErrLimited.
	LimiterWaited
)

// String returns "attempt done", "retry scheduled", "gave up", "hedge
// started" or "limiter waited".
func (k EventKind) String() string {
	switch k {
	case AttemptDone:
		return "attempt done"
	case RetryScheduled:
		return "retry scheduled"
	case GaveUp:
		return "gave up"
	case HedgeStarted:
		return "hedge started"
	case LimiterWaited:
		return "limiter waited"
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// Event is what a hook receives.
type Event struct {
	Kind     EventKind
	Attempt  int               // 1-based number of the attempt concerned
	Started  int               // attempts the call has started, hedges included: more than Attempt while a hedged call's attempts overlap
	Err      error             // the attempt's error, or the final *Error for GaveUp
	Decision classify.Decision // how a failed attempt was classified
	Delay    time.Duration     // RetryScheduled: the wait before the next attempt; HedgeStarted: the hedging delay; LimiterWaited: the limiter's hold
	Waited   time.Duration     // total wait so far
	Elapsed  time.Duration     // since the call began (see Stats)
}

// longWait is the wait from which a scheduled retry is logged at INFO rather
// than DEBUG: long enough for a person to notice the call is slow.
const longWait = time.Second

func logHook(l *slog.Logger) func(context.Context, Event) {
	return func(ctx context.Context, e Event) {
		switch e.Kind {
		case RetryScheduled:
			level := slog.LevelDebug
			if e.Delay >= longWait {
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
		case HedgeStarted:
			logHedge(ctx, l, e)
		case LimiterWaited:
			logLimiterWait(ctx, l, e)
		case GaveUp:
			if l.Enabled(ctx, slog.LevelInfo) {
				l.LogAttrs(ctx, slog.LevelInfo, "retry: gave up", slog.Any("error", e.Err))
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
