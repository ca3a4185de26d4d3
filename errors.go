package retry

import (
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/internal/argerr"
	"github.com/retrykit/retry/policy"
)

// Reasons a call stopped: one sentinel per policy.Stop, the one list of
// reasons (see stopErrors). Every failed call returns an *Error whose Stop
// says which, and whose Reason is the sentinel — or, when the caller's
// context ended the call (policy.StopCanceled), the context's cause
// (context.Canceled, context.DeadlineExceeded, or the cause given to the
// context). Test them with errors.Is on the returned error.
var (
	// ErrExhausted: MaxAttempts attempts were made and the last one failed.
	ErrExhausted = errors.New("attempts exhausted")
	// ErrPermanent: the failure is not transient (a classifier said stop,
	// or the server said not to retry).
	ErrPermanent = errors.New("not retryable")
	// ErrNotIdempotent: the failed attempt may have reached the server (it
	// timed out, or failed after it was sent), so the operation may still be
	// running or may have taken effect; it was not retried because it is
	// neither marked idempotent nor carries an idempotency key.
	ErrNotIdempotent = errors.New("the attempt may have reached the server, so the operation may still be running or have taken effect; " +
		"not retried because it is neither idempotent nor keyed (mark it retry.Idempotent, or give the call an idempotency key, to make it retryable)")
	// ErrClassLimit: this kind of failure used up the retries its class
	// allows in a row (an HTTP 500 is retried once), whatever MaxAttempts says.
	ErrClassLimit = errors.New("retry limit for this kind of failure reached")
	// ErrWaitTooLong: the server asked to wait longer than the policy's
	// MaxDelay (a Retry-After, or a cooldown of the call's key); the wait is
	// in Error.RetryAfter, for the caller to schedule.
	ErrWaitTooLong = errors.New("server asked to wait longer than the maximum delay")
	// ErrElapsed: the next attempt would start after MaxElapsed.
	ErrElapsed = errors.New("time budget exhausted")
	// ErrDeadline: the next wait would end after the context's deadline, so
	// the call returned at once instead of sleeping in vain.
	ErrDeadline = errors.New("next wait would outlast the context deadline")
	// ErrBudget: the shared retry budget refused the retry (see WithBudget):
	// the dependency is failing for many callers; give the work to a dead
	// letter queue rather than retry it later in a tight loop.
	ErrBudget = errors.New("retry budget exhausted")
	// ErrKeyRequired: the policy requires an idempotency key and the call
	// carried none; the operation was not called.
	ErrKeyRequired = errors.New("idempotency key required (pass one with retry.WithIdempotencyKey)")
	// ErrLimited: the client-side rate limiter (see WithLimiter) refused the
	// attempt, or asked for a wait longer than the call could afford. The
	// refusal is local: nothing was sent, and it is never retried.
	ErrLimited = errors.New("refused locally by the client-side rate limiter, nothing sent")
	// ErrBreakerOpen: the circuit breaker of the call's key (see
	// WithBreakers) refused the call or its next attempt: it is open, or
	// half-open with its probes taken, or it could not be made (the error
	// of breaker.Config.NewCircuit). Nothing was sent; when no attempt was
	// made, the last error is the refusal, matching breaker.ErrOpen or
	// breaker.ErrTooManyRequests.
	ErrBreakerOpen = errors.New("refused by the circuit breaker, nothing sent")
	// ErrInvalid is matched by every *InvalidError: a bad option or argument.
	ErrInvalid = argerr.ErrInvalid
)

// stopErrors is the sentinel of each reason a call stops; a test fails when
// policy.Stops has one this table misses. StopCanceled has none: its reason
// is the context's cause.
var stopErrors = [...]error{
	policy.StopPermanent:     ErrPermanent,
	policy.StopNotIdempotent: ErrNotIdempotent,
	policy.StopAttempts:      ErrExhausted,
	policy.StopClassLimit:    ErrClassLimit,
	policy.StopWaitTooLong:   ErrWaitTooLong,
	policy.StopElapsed:       ErrElapsed,
	policy.StopDeadline:      ErrDeadline,
	policy.StopBudget:        ErrBudget,
	policy.StopKeyRequired:   ErrKeyRequired,
	policy.StopLimited:       ErrLimited,
	policy.StopOpen:          ErrBreakerOpen,
	policy.StopCanceled:      nil,
}

// Stats describes a call: how many attempts it made, how long it waited
// between them, and how long it took. The figures mean the same in every
// configuration: Attempts counts every call of the operation, the first
// included; Waited is the time the call spent with no attempt running, between
// attempts; Elapsed runs from just before the first attempt to the end of the
// call, whatever options the Retrier has.
type Stats struct {
	Attempts int
	Waited   time.Duration
	Elapsed  time.Duration
	// Hedges counts the attempts started by the hedging delay (WithHedging)
	// alongside one still running, not after a failure; they are included
	// in Attempts.
	Hedges int
	// Winner is the 1-based number of the attempt that succeeded; 0 if
	// none did.
	Winner int
}

// Failure records one failed attempt.
type Failure struct {
	Attempt  int               // 1-based
	At       time.Time         // when the loop saw the failure
	Err      error             // what the attempt returned
	Decision classify.Decision // how it was classified
	Delay    time.Duration     // the wait that followed it; 0 for the last

	mono time.Duration // when, on the loop's monotonic clock (see monoNow)
}

// Error is returned by every call that did not succeed. It unwraps to both
// the reason the call stopped and the last attempt's error, so errors.Is and
// errors.As see either.
type Error struct {
	Stats
	// Stop is why the call stopped, as the one list of reasons has it: what
	// a dead letter stores and a metric reports (its String is a stable
	// label, e.g. "max-attempts").
	Stop policy.Stop
	// Reason is why the call stopped, as an error: Stop's sentinel (one of
	// the Err… sentinels of this package), or the context's cause.
	Reason error
	// Last is the last attempt's error. When no attempt was made it is the
	// refusal of the stage that stopped the call, if it has one to say (the
	// breaker's, a *breaker.CooldownError), and nil otherwise.
	Last error
	// Decision is how the last attempt's error was classified.
	Decision classify.Decision
	// RetryAfter is the wait the server asked for — a Retry-After, or the
	// time left of the key's cooldown — when the call stopped instead of
	// waiting it (ErrWaitTooLong, ErrDeadline, ErrElapsed); 0 otherwise.
	RetryAfter time.Duration
	// Failures lists every failed attempt, in order.
	Failures []Failure
}

// Error returns "retry: <reason> after N attempt(s) in D: <last error>".
func (e *Error) Error() string {
	if e == nil {
		return "retry: <nil>"
	}
	s := "retry: " + e.reason().Error()
	if e.Decision.Reason != "" && (e.Reason == ErrPermanent || e.Reason == ErrClassLimit) {
		s += " (" + e.Decision.Reason + ")"
	}
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	if e.Attempts == 0 {
		s += " before the first attempt"
	} else {
		s += " after " + strconv.Itoa(e.Attempts) + " attempt(s) in " + roundDuration(e.Elapsed).String()
	}
	if e.Last != nil {
		s += ": " + e.Last.Error()
	}
	return s
}

// Final reports true: the call is over, and an enclosing retry loop must
// not retry it again (see classify.Final). It makes nested loops retry in
// one layer.
func (e *Error) Final() bool { return true }

// reason is Reason, or a stand-in for an Error built by hand without one.
func (e *Error) reason() error {
	if e.Reason == nil {
		return errNoReason
	}
	return e.Reason
}

var errNoReason = errors.New("stopped")

// Unwrap returns the reason and the last attempt's error.
func (e *Error) Unwrap() []error {
	if e == nil {
		return nil
	}
	if e.Last == nil {
		return []error{e.reason()}
	}
	return []error{e.reason(), e.Last}
}

// LogValue reports the error as a group of attributes for log/slog.
func (e *Error) LogValue() slog.Value {
	if e == nil {
		return slog.StringValue("<nil>")
	}
	attrs := []slog.Attr{
		slog.String("reason", e.reason().Error()),
		slog.Int("attempts", e.Attempts),
		slog.Duration("waited", e.Waited),
		slog.Duration("elapsed", e.Elapsed),
		slog.String("stop", e.Stop.String()),
	}
	if e.Decision.Reason != "" {
		attrs = append(attrs, slog.String("class", e.Decision.Reason))
	}
	if e.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", e.RetryAfter))
	}
	if e.Last != nil {
		attrs = append(attrs, slog.String("last_error", e.Last.Error()))
	}
	return slog.GroupValue(attrs...)
}

// roundDuration keeps messages readable: milliseconds above a second,
// microseconds above a millisecond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// InvalidError reports a bad option, argument or configuration field — from
// this package or any other of the module, the leaf packages (backoff,
// jitter, classify, policy, budget) included — naming it and its value. Its
// fields are Name (the option, argument or field, e.g. "WithMaxAttempts" or
// "backoff.Exponential.Factor"), Value (the value given) and Err (what is
// wrong with it). It matches ErrInvalid. Its message reads
// "retry: WithMaxAttempts(0): must be at least 1" for an option of this
// package, "dlq.Replay(<nil>): the queue must not be nil" for a name
// qualified by its package, and "backoff.Exponential.Factor = 0.5: must be
// at least 1" for a field.
type InvalidError = argerr.Error

func invalid(name string, value any, reason string) *InvalidError {
	return argerr.New(name, value, reason)
}
